"""The embedded vector store reads its shards' files ahead when it opens them (stores/vectors/readahead.py), in
a process that asked for it (the servers, or MEMORYX_VECTOR_READAHEAD): the pages of the segments are in the
kernel's page cache before the first searches need them, instead of being read from disk one fault at a time
inside those searches. Checked with the kernel's own answer (mincore) on a real shard whose pages were dropped
from the cache first. A process that did not ask (a CLI command, a script's `Memory()`) reads nothing ahead."""

from __future__ import annotations

import ctypes
import mmap
import os
import random
import sys
from pathlib import Path

import pytest

from memoryx.settings import Settings
from memoryx.stores.vectors import EdgeVectorStore, make_vector_store, read_ahead_shards, readahead
from memoryx.stores.vectors.edge_shard import SharedShard
from memoryx.stores.vectors.readahead import segment_files, warm
from tests.stores.test_vectors import mem

DIMS = 384
PAGE = mmap.PAGESIZE
linux = pytest.mark.skipif(not sys.platform.startswith("linux") or not hasattr(os, "posix_fadvise"),
                           reason="page-cache residency is read with Linux's mincore")


def _resident(path: Path) -> tuple[int, int]:
    """(pages of the file in the page cache, pages holding data on disk)."""
    size = path.stat().st_size
    if not size:
        return 0, 0
    libc = ctypes.CDLL(None, use_errno=True)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), size, access=mmap.ACCESS_COPY) as m:
        pages = (size + PAGE - 1) // PAGE
        vec = (ctypes.c_ubyte * pages)()
        addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
        try:
            if libc.mincore(ctypes.c_void_p(addr), ctypes.c_size_t(size), vec) != 0:
                raise OSError(ctypes.get_errno(), "mincore")
            return sum(b & 1 for b in vec), path.stat().st_blocks * 512 // PAGE
        finally:
            del vec  # the buffer export must end before the mapping closes


def _payload_residency(shard: Path) -> float:
    """The share of the payload storage's data pages in the cache: the engine maps it without reading it at open
    (the vectors and the payload indexes it reads itself), and a search reads the payload of every hit."""
    resident = data = 0
    for p in segment_files(shard):
        if "payload_storage" in p.parts:
            r, d = _resident(p)
            resident, data = resident + r, data + d
    assert data > 0, "the shard holds no payloads"
    return resident / data


def _drop(shard: Path) -> None:
    for p in segment_files(shard):
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


@pytest.fixture
def plain_process(monkeypatch):
    """This process as one that never asked for read-ahead (a server test earlier in the session may have); the
    switch is put back afterwards."""
    monkeypatch.setattr(SharedShard, "read_ahead", False)


@pytest.fixture
def shard_dir(tmp_path) -> Path:
    """A closed store of 3,000 memories (MiniLM-sized vectors, a sentence of payload text each); the path of its
    memories' shard."""
    rng = random.Random(5)
    store = EdgeVectorStore(tmp_path / "qdrant", DIMS)
    try:
        store.upsert_memories([mem(f"memory {i}: " + "a sentence of the kind people say " * 8, [rng.gauss(0, 1) for _ in range(DIMS)]) for i in range(3000)])
    finally:
        store.close()
    return tmp_path / "qdrant" / "memoryx_memories"


def _open_cold(tmp_path: Path, shard: Path) -> tuple[EdgeVectorStore, float]:
    """The store opened after its shard's pages were dropped, and the share of its payloads' pages in the cache
    once the open's read-ahead has finished."""
    _drop(shard)
    if _payload_residency(shard) > 0.5:
        pytest.skip("this filesystem keeps the files in memory (tmpfs?): nothing to read ahead")
    store = EdgeVectorStore(tmp_path / "qdrant", DIMS)
    store._memories.warming.join(timeout=30)
    return store, _payload_residency(shard)


@linux
def test_opening_a_store_reads_its_payloads_into_the_page_cache(tmp_path, shard_dir, monkeypatch):
    monkeypatch.setattr(SharedShard, "read_ahead", True)  # a process that asked for it (read_ahead_shards)
    budget = readahead.BUDGET
    monkeypatch.setattr(readahead, "BUDGET", 0)  # the control: opening alone leaves the payloads on disk
    store, without = _open_cold(tmp_path, shard_dir)
    store.close()
    monkeypatch.setattr(readahead, "BUDGET", budget)
    store, with_readahead = _open_cold(tmp_path, shard_dir)
    try:
        assert without < 0.5, f"{without:.0%} of the payloads' pages were in the cache without a read-ahead"
        assert with_readahead > 0.95, f"only {with_readahead:.0%} of the payloads' pages were read ahead"
        assert store.count_memories() == 3000  # the store still answers from the same files
    finally:
        store.close()


def test_a_process_that_did_not_ask_opens_its_shards_without_reading_ahead(tmp_path, plain_process):
    store = EdgeVectorStore(tmp_path / "qdrant", DIMS)  # what a CLI command's or a script's Memory() opens
    try:
        assert store._memories.warming is None and store._entities.warming is None
        started = read_ahead_shards()  # a server starting with this store open: its shards are read ahead now
        assert store._memories.warming in started and store._entities.warming in started
        later = EdgeVectorStore(tmp_path / "later", DIMS)  # and those it opens afterwards, at their open
        try:
            assert later._memories.warming is not None and later._entities.warming is not None
        finally:
            later.close()
        assert not {store._memories.warming, store._entities.warming} & set(read_ahead_shards())  # once each
    finally:
        store.close()


@pytest.mark.parametrize("asked", [False, True])
def test_the_setting_reads_ahead_the_shards_a_library_process_opens(tmp_path, plain_process, asked):
    assert Settings(data_dir=tmp_path).vector_readahead is False  # off unless set
    store = make_vector_store(Settings(data_dir=tmp_path, vector_readahead=asked), DIMS)
    try:
        assert (store._memories.warming is not None) is asked
        assert SharedShard.read_ahead is asked
    finally:
        store.close()


def test_warm_reads_the_data_not_the_holes_smallest_file_first_within_its_budget(tmp_path):
    seg = tmp_path / "shard" / "segments" / "s1"
    seg.mkdir(parents=True)
    (tmp_path / "shard" / "wal").mkdir()
    (tmp_path / "shard" / "wal" / "open-1").write_bytes(b"w" * (1 << 20))  # never read: searches do not
    mib = 1 << 20
    with open(seg / "vectors.mmap", "wb") as f:  # 1 MiB of data, a 64 MiB hole, 1 MiB of data
        f.write(b"v" * mib)
        f.seek(65 * mib)
        f.write(b"v" * mib)
    (seg / "index.dat").write_bytes(b"i" * (mib // 4))
    (seg / "payload_storage").mkdir()
    (seg / "payload_storage" / "page_0.dat").write_bytes(b"p" * (mib // 2))  # mapped, not read, by the engine
    shard = tmp_path / "shard"
    assert [p.name for p in segment_files(shard)] == ["page_0.dat", "index.dat", "vectors.mmap"]
    if hasattr(os, "posix_fadvise"):
        sparse = (seg / "vectors.mmap").stat().st_blocks * 512 < 4 * mib
        assert warm(shard) == 3 * mib // 4 + (2 * mib if sparse else 66 * mib)
        assert warm(shard, budget=mib) == mib  # the payloads and the index whole, then the vectors' first 0.25 MiB
        assert warm(shard, budget=0) == 0
    else:
        assert warm(shard) == 0
