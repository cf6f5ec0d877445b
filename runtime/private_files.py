"""The data directory is private to its owner: directories 0700, files 0600 (0700 for an executable the
embedded servers run), whatever the umask the process was started with.

Memories, raw conversations, judgments, graph files, vector segments, logs and the embedded servers' secrets
all live under the data directory, and several of them are written by native code (the vector engine, the
graph server) that creates files with the process umask. So opening the stores tightens the umask (no group
or other bits; the owner's bits stay as they were) and then narrows whatever the directory already holds.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE_UMASK = 0o077


def tighten_umask() -> int:
    """Add PRIVATE_UMASK's bits to the process umask; returns the umask in force after."""
    current = os.umask(PRIVATE_UMASK)
    os.umask(current | PRIVATE_UMASK)
    return current | PRIVATE_UMASK


def make_private(root: Path) -> None:
    """Directories under `root` (itself included) 0700, files 0600, executables 0700; symlinks left alone."""
    root = Path(root)
    if not root.exists():
        return
    _chmod(root, 0o700)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            _chmod(Path(dirpath) / name, 0o700)
        for name in filenames:
            path = Path(dirpath) / name
            try:
                mode = path.lstat().st_mode
            except OSError:
                continue  # removed meanwhile (a store's temporary file)
            if stat.S_ISREG(mode):
                _chmod(path, 0o700 if mode & stat.S_IXUSR else 0o600)


def prepare_data_dir(root: Path, *, private: bool = True) -> None:
    """Create the data directory; with `private`, tighten the umask first (native engines create their
    files with it) and narrow what the directory already holds. Every process opening a store calls it first."""
    if private:
        tighten_umask()
    Path(root).mkdir(parents=True, exist_ok=True)
    if private:
        make_private(root)


def _chmod(path: Path, mode: int) -> None:
    try:
        if not path.is_symlink():
            os.chmod(path, mode)
    except OSError:
        pass  # not ours to change (a mounted volume): the umask still covers what we create


__all__ = ["PRIVATE_UMASK", "make_private", "prepare_data_dir", "tighten_umask"]
