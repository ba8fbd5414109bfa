"""A run's statistics need no SciPy: Wilson's interval and the exact McNemar test are closed forms, so a small
run's numbers come without importing a large library for one formula."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys
from lexicoord.analysis.paper import rate
from lexicoord.protocols.cogent.statistics import CogentEpisode, compute

episodes = [CogentEpisode(episode_id=None, item_id=str(i), task="gsm8k", variant=v, model="m", gold="1", answer="1",
                          correct=(i + len(v)) % 2 == 0, rule="agree", predictions={})
            for i in range(3) for v in ("vanilla", "cogent")]
stats = compute(episodes)
assert stats.cells[0].acc_ci is not None and stats.paired and rate("x", {}, 2, 3) is not None
print(sorted(m for m in ("scipy", "matplotlib") if m in sys.modules))
"""


def test_a_small_runs_statistics_import_neither_scipy_nor_matplotlib() -> None:
    done = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout
