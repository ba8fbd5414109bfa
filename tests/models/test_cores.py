"""How many cores an embedded model's call may use: the process's share of the machine, less what other processes
run at that instant. Tables of what Linux writes, and a real busy machine."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from lexicoord.models.providers import cores


@pytest.mark.parametrize(("v2", "v1", "expected"), [
    ("max 100000\n", None, None),            # cgroup v2, no quota
    ("200000 100000\n", None, 2),            # a container given two CPUs (docker --cpus=2)
    ("150000 100000\n", None, 1),            # one and a half: one whole core for llama.cpp's threads
    ("50000 100000\n", None, 1),             # half a core: still one thread
    ("800000 100000", None, 8),
    ("garbage", None, None),
    (None, ("-1\n", "100000\n"), None),      # cgroup v1, no quota
    (None, ("400000\n", "100000\n"), 4),     # cgroup v1, four CPUs (a Kubernetes limit of 4)
    (None, ("0", "0"), None),
    (None, None, None),                      # neither: not Linux, or no cgroup file system
])
def test_a_containers_quota_is_read_as_whole_cores(v2, v1, expected) -> None:
    assert cores.quota_cores(v2, v1) == expected


@pytest.mark.parametrize(("line", "expected"), [
    ("0.52 0.58 0.59 3/467 12345\n", 3),
    ("12.01 9.80 5.00 17/1203 99999", 17),
    ("0.00 0.00 0.00 1/80 7", 1),
    ("", None),
    ("0.1 0.2 0.3", None),
    ("0.1 0.2 0.3 x/y 1", None),
])
def test_runnable_threads_are_read_from_loadavgs_fourth_field(line, expected) -> None:
    assert cores.runnable(line) == expected


def test_own_running_threads_are_those_in_state_r_even_with_spaces_and_parentheses_in_the_name() -> None:
    stats = [
        "4242 (python3) R 1 4242 4242 0 -1 4194560 1234",
        "4243 (llama.cpp_0) S 1 4242 4242 0 -1 4194624",
        "4244 (weird ) R name) R 1 4242 4242 0 -1",      # a thread may name itself anything
        "4245 (asyncio_0) D 1 4242 4242 0 -1",
        "4246 (R) S 1 4242 4242",                          # the name is not the state
    ]
    assert cores.own_running(stats) == 2


def test_threads_for_shares_the_free_cores_and_never_gives_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cores, "usable_cores", lambda: 8)
    for busy, calls, expected in ((0, 1, 8), (0, 4, 2), (0, 16, 1), (6, 1, 2), (7, 1, 1), (30, 1, 1), (4, 2, 2)):
        monkeypatch.setattr(cores, "busy_elsewhere", lambda busy=busy: busy)
        assert cores.threads_for(calls) == expected, (busy, calls)


def test_usable_cores_are_this_processs_cpu_set() -> None:
    import os

    assert 1 <= cores.usable_cores() <= len(os.sched_getaffinity(0))
    pinned = subprocess.run(["taskset", "-c", "0", sys.executable, "-c",
                             "from lexicoord.models.providers import cores; print(cores.usable_cores())"],
                            capture_output=True, text=True, check=True)
    assert pinned.stdout.strip() == "1", "a job pinned to one CPU gets one core, whatever the machine has"


def test_on_a_machine_other_processes_keep_busy_a_lone_call_takes_only_what_is_free() -> None:
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(cores.usable_cores())]
    try:
        time.sleep(0.5)  # the hogs are running
        seen = [cores.busy_elsewhere() for _ in range(5)]
        assert max(seen) >= len(hogs), seen
        assert cores.threads_for(1) == 1, "every core is taken by others: one thread, never every core"
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
