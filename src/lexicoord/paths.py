"""Where lexicoord keeps files.

Everything persistent lives under one home directory so that tests (and users
with several projects) can point ``LEXICOORD_HOME`` elsewhere and stay hermetic.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from lexicoord.errors import ConfigError


def home() -> Path:
    """The data directory: ``$LEXICOORD_HOME`` or the platform's user data dir."""
    root = os.environ.get("LEXICOORD_HOME")
    path = Path(root).expanduser() if root else Path(platformdirs.user_data_dir("lexicoord"))
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"Cannot create the data directory {path} ({exc.strerror}); set LEXICOORD_HOME to a writable folder."
        ) from None
    return path


def default_db_url() -> str:
    """``$LEXICOORD_DB`` (any SQLAlchemy URL or a file path) or a SQLite file in :func:`home`."""
    configured = os.environ.get("LEXICOORD_DB")
    if configured:
        return db_url(configured)
    return f"sqlite:///{home() / 'lexicoord.db'}"


def db_url(path_or_url: str) -> str:
    """Accept either a SQLAlchemy URL or a plain file path (taken as SQLite).

    A PostgreSQL URL without a driver (``postgresql://`` or ``postgres://``, as labs and hosting
    services write them) gets psycopg 3, the driver of the ``postgres`` extra; SQLAlchemy's own
    default would be psycopg2, which lexicoord does not install.
    """
    for bare in ("postgresql://", "postgres://"):
        if path_or_url.startswith(bare):
            return "postgresql+psycopg://" + path_or_url[len(bare):]
    if "://" in path_or_url:
        return path_or_url
    return f"sqlite:///{Path(path_or_url).expanduser().resolve()}"


def cache_path() -> Path:
    """The response cache file: ``$LEXICOORD_CACHE_PATH``, else ``cache.db`` in :func:`home`; in a SLURM job whose
    home is not set, node-local storage (``$SLURM_TMPDIR``, ``$TMPDIR`` or ``/tmp``), since a cluster's home folder
    is a network file system, where SQLite's locks are not safe."""
    configured = os.environ.get("LEXICOORD_CACHE_PATH")
    if configured:
        return Path(configured).expanduser()
    if os.environ.get("SLURM_JOB_ID") and not os.environ.get("LEXICOORD_HOME"):
        local = os.environ.get("SLURM_TMPDIR") or os.environ.get("TMPDIR") or "/tmp"
        return Path(local) / f"lexicoord-{os.environ.get('USER', 'cache')}" / "cache.db"
    return home() / "cache.db"


#: File systems shared over a network, where SQLite's file locks are not to be trusted.
NETWORK_FILE_SYSTEMS = frozenset({"nfs", "nfs4", "lustre", "gpfs", "cifs", "smb3", "smbfs", "beegfs", "cephfs",
                                  "ceph", "glusterfs", "fuse.glusterfs", "fuse.sshfs", "9p", "afs", "panfs"})


def file_system_of(path: Path, mounts: str | None = None) -> str | None:
    """The type of the file system ``path`` is on (the longest mount point above it in ``/proc/mounts``), or
    ``None`` where it cannot be told."""
    if mounts is None:
        try:
            mounts = Path("/proc/mounts").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    target = str(path.expanduser().absolute())
    best, kind = "", None
    for line in mounts.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        point = parts[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > len(best):
            best, kind = point, parts[2]
    return kind


def on_network_file_system(path: Path, mounts: str | None = None) -> str | None:
    """The network file system's type when ``path`` is on one (NFS, Lustre, GPFS ...), else ``None``."""
    kind = file_system_of(path, mounts)
    return kind if kind is not None and kind.lower() in NETWORK_FILE_SYSTEMS else None


def output_file(path: Path) -> Path:
    """A file a command will write: not a folder, and in a folder that exists (checked before any work)."""
    if path.is_dir():
        raise ConfigError(f"{path} is a folder; give the name of a file to write.")
    if not path.parent.is_dir():
        raise ConfigError(f"Cannot write {path}: the folder {path.parent} does not exist.")
    return path


def output_folder(path: Path) -> Path:
    """A folder a command will write files into: an existing file there is refused, never overwritten."""
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{path} is a file; give a folder for the files to go in.")
    return path
