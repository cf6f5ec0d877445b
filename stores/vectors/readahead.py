"""Read-ahead of an embedded shard's files when it is opened: their pages asked into the kernel's page cache on a
background thread, so that the first searches after an open find them in memory. Only in a process that goes on
searching after its open and says so (edge_shard.read_ahead_shards: the HTTP and MCP servers, or
MEMORYX_VECTOR_READAHEAD): a one-shot command would queue reads of files it may never touch, then exit.

The engine reads a shard's vectors and payload indexes at open, but only maps its payload storage: a search reads
the payload of every hit, scattered over those files, and each page the kernel does not hold is a synchronous disk
read inside the search (a major page fault; at 100k memories / 1,000 users about 24 a search on a cold shard,
several ms of its median and more of its p99). `posix_fadvise(WILLNEED)` asks the kernel to read a range ahead; it
blocks while it queues the reads, hence the thread, and reads at most the disk's read-ahead window a call, hence
the steps. The payload storage is asked for first, then every other segment file (what the engine already read
costs nothing more), smallest first, only the extents that hold data (segment files are sparse: space reserved,
not yet written), at most `BUDGET` bytes a shard. The write-ahead log is left out (searches never read it).
Nothing is read where the platform has no posix_fadvise (macOS, Windows), and a file that vanishes meanwhile (a
compaction) is skipped.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import threading
from pathlib import Path

log = logging.getLogger(__name__)

BUDGET = 256 << 20  # bytes asked for per shard: a 100k-memory shard holds ~230 MB of data
# bytes a call: the kernel reads at most its read-ahead window a call (read_ahead_kb, 128 KiB on most disks)
STEP = 128 << 10


def _extents(fd: int, size: int) -> list[tuple[int, int]]:
    """(offset, length) of the ranges of an open file that hold data: all of it where holes cannot be told."""
    if not hasattr(os, "SEEK_DATA"):
        return [(0, size)] if size else []
    out: list[tuple[int, int]] = []
    pos = 0
    while pos < size:
        try:
            start = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # no data after pos
                break
            return [(0, size)]
        end = os.lseek(fd, start, os.SEEK_HOLE)
        out.append((start, end - start))
        pos = end
    return out


def segment_files(shard_dir: Path) -> list[Path]:
    """The files of a shard's segments in the order `warm` reads them: the payload storage's first, then the others,
    each group smallest on disk first."""
    root = Path(shard_dir) / "segments"
    sized = []
    for p in root.rglob("*") if root.is_dir() else ():
        try:
            st = p.stat()
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):  # the one stat tells the kind and the size
            sized.append(("payload_storage" not in p.parts, getattr(st, "st_blocks", 0) * 512 or st.st_size, str(p)))
    return [Path(p) for *_, p in sorted(sized)]


def warm(shard_dir: Path, budget: int | None = None) -> int:
    """Ask the kernel to read the data of the shard's segment files into its page cache, smallest file first, at
    most `budget` bytes (default `BUDGET`); returns the bytes asked for (0 where posix_fadvise is missing)."""
    if not hasattr(os, "posix_fadvise"):
        return 0
    budget = BUDGET if budget is None else max(0, int(budget))
    asked = 0
    for path in segment_files(shard_dir):
        if asked >= budget:
            break
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            for offset, length in _extents(fd, os.fstat(fd).st_size):
                end = offset + min(length, budget - asked)
                for at in range(offset, end, STEP):
                    os.posix_fadvise(fd, at, min(STEP, end - at), os.POSIX_FADV_WILLNEED)
                asked += max(0, end - offset)
                if asked >= budget:
                    break
        except OSError as exc:  # the page cache is a hint: a search still reads the file itself
            log.debug("read-ahead of %s stopped: %s", path, exc)
        finally:
            os.close(fd)
    return asked


def warm_in_background(shard_dir: Path, budget: int | None = None) -> threading.Thread:
    """`warm` on a daemon thread (started; returned so a caller can wait for it)."""
    thread = threading.Thread(target=warm, args=(Path(shard_dir), budget), name="memoryx-readahead", daemon=True)
    thread.start()
    return thread
