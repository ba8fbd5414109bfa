"""Where lexicoord keeps its files on a cluster: the response cache never on a network file system silently, and
node-local by default in a SLURM job."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from lexicoord import paths

#: /proc/mounts as cluster nodes write it (octal escapes, overlapping mount points, several kinds).
MOUNTS = r"""sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0
/dev/nvme0n1p2 / ext4 rw,relatime 0 0
tmpfs /tmp tmpfs rw,nosuid,nodev 0 0
nas01:/export/home /home nfs4 rw,relatime,vers=4.2 0 0
10.0.0.5@o2ib:/scratch /scratch lustre rw,flock 0 0
gpfs1 /gpfs/projects gpfs rw,relatime 0 0
/dev/nvme1n1 /scratch/local ext4 rw 0 0
nas02:/My\040Lab /mnt/My\040Lab nfs rw 0 0
"""


@pytest.mark.parametrize(("path", "kind", "network"), [
    ("/home/alice/.local/share/lexicoord/cache.db", "nfs4", "nfs4"),
    ("/scratch/alice/cache.db", "lustre", "lustre"),
    ("/scratch/local/job42/cache.db", "ext4", None),  # a node's own disk mounted inside the shared one
    ("/gpfs/projects/lab/cache.db", "gpfs", "gpfs"),
    ("/gpfs/projectsX/cache.db", "ext4", None),  # a prefix of the name is not a mount point above it
    ("/tmp/lexicoord-alice/cache.db", "tmpfs", None),
    ("/mnt/My Lab/cache.db", "nfs", "nfs"),
    ("/var/lib/cache.db", "ext4", None),
])
def test_the_file_system_under_a_path_is_its_nearest_mount(path: str, kind: str, network: str | None) -> None:
    assert paths.file_system_of(Path(path), MOUNTS) == kind
    assert paths.on_network_file_system(Path(path), MOUNTS) == network


def test_in_a_slurm_job_the_cache_is_node_local_unless_a_place_is_named(monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    for name in ("LEXICOORD_CACHE_PATH", "LEXICOORD_HOME", "SLURM_TMPDIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    monkeypatch.setenv("TMPDIR", str(tmp_path / "node"))
    monkeypatch.setenv("USER", "alice")
    assert paths.cache_path() == tmp_path / "node" / "lexicoord-alice" / "cache.db"
    monkeypatch.setenv("SLURM_TMPDIR", str(tmp_path / "slurm"))
    assert paths.cache_path().parent == tmp_path / "slurm" / "lexicoord-alice"
    monkeypatch.setenv("LEXICOORD_HOME", str(tmp_path / "home"))
    assert paths.cache_path() == tmp_path / "home" / "cache.db", "a home the user names wins"
    monkeypatch.setenv("LEXICOORD_CACHE_PATH", str(tmp_path / "mine.db"))
    assert paths.cache_path() == tmp_path / "mine.db"
    monkeypatch.delenv("SLURM_JOB_ID")
    monkeypatch.delenv("LEXICOORD_CACHE_PATH")
    assert paths.cache_path() == tmp_path / "home" / "cache.db"


def test_a_cache_on_a_network_file_system_is_said_never_silently(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    from lexicoord.models import registry

    monkeypatch.setattr(paths, "on_network_file_system", lambda path, mounts=None: "lustre")
    with caplog.at_level(logging.WARNING, logger="lexicoord.models.cache"):
        registry._open_cache(tmp_path / "shared" / "cache.db")
    [said] = [r.getMessage() for r in caplog.records]
    assert "is on a network file system (lustre)" in said and "LEXICOORD_CACHE_PATH" in said
