"""The vector shards a CLI command opens on a thread while it imports the rest (memoryx.runtime.early_vectors):
the command's own stores find them open, the early reference goes away without closing them, the files it
creates are private, and a failure is left to the command's own open."""

from __future__ import annotations

import stat

import pytest

from memoryx.errors import StoreUnavailableError
from memoryx.runtime.early_vectors import EarlyVectors
from memoryx.runtime.services import build_services
from memoryx.settings import Settings
from memoryx.stores.vectors.edge_shard import SharedShard
from tests.stores.test_vectors import ALICE, mem
from tests.support import shared_embeddings

DIMS = 384


def _settings(tmp_path, **overrides) -> Settings:
    return Settings(**{"data_dir": tmp_path / "data", "graph_backend": "none", "checkpointer": "none", **overrides})


def _shard(settings: Settings, name: str) -> SharedShard:
    return SharedShard._registry[str((settings.data_dir / "qdrant" / f"memoryx_{name}").resolve())]


def test_the_commands_stores_reuse_the_early_shards(tmp_path):
    settings = _settings(tmp_path)
    early = EarlyVectors(settings, DIMS)
    services = build_services(settings, embeddings=shared_embeddings(), search_only=True)
    try:
        memories = _shard(settings, "memories")
        assert memories.refs == 2  # the early reference and the command's
        early.release()
        assert memories.refs == 1 and not memories.closed
        services.vectors.upsert_memories([mem("I live in Lisbon", [0.1] * DIMS)])
        assert services.vectors.count_memories(ALICE) == 1
    finally:
        early.release()  # a second release does nothing
        services.close()
    assert memories.closed


def test_files_the_early_open_creates_are_private(tmp_path):
    settings = _settings(tmp_path)
    EarlyVectors(settings, DIMS).release()
    created = [p for p in settings.data_dir.rglob("*") if not p.is_symlink()]
    assert created, "the early open created no shard files"
    for path in created:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}: readable by others"


def test_a_failed_early_open_is_reported_by_the_commands_own_open(tmp_path):
    settings = _settings(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "qdrant").write_text("not a directory")  # the shard directory cannot be made
    early = EarlyVectors(settings, DIMS)
    early.release()  # swallowed here
    with pytest.raises((StoreUnavailableError, OSError)):
        build_services(settings, embeddings=shared_embeddings(), search_only=True)


def test_nothing_is_opened_early_for_a_server_backend(tmp_path):
    settings = _settings(tmp_path, vector_backend="qdrant", qdrant_url="http://127.0.0.1:9")
    early = EarlyVectors(settings, DIMS)
    early.release()
    assert not (tmp_path / "data" / "qdrant").exists()
