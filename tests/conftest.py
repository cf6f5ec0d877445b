"""Shared fixtures: real engines only (SQLite, PostgreSQL on 127.0.0.1:5432, embedded Qdrant, FalkorDB).

Run from the repository root: `python3 -m pytest` (the whole suite) or `python3 -m pytest -m unit` (the tests
that need no engine, in seconds). A test is `unit` unless it asks, directly or through its fixtures, for a
place on disk or a database (tmp_path, tmp_path_factory, sqlite_url, pg_url: every store lives in one of
them) or is marked `slow`; all others are marked `integration`. So a test that opens a store takes
`tmp_path` (or a fixture built on it), as every test here does; `@pytest.mark.integration` says so explicitly.

Tests mirror the package: tests/<package>/ tests memoryx/<package>/ (`python3 -m pytest tests/stores` tests the
stores); settings.py at the root is tested in tests/core/. This file and support.py serve every folder.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")
# One ONNX encoder cache for the suite and its subprocesses (CLI, server): every test has a new data dir, and
# building the encoder is a ~20 s torch export. Kept across runs on a machine; verified on every load.
os.environ.setdefault("MEMORYX_EMBEDDING_CACHE_DIR", str(Path(tempfile.gettempdir()) / "memoryx-test-models"))

PG_ADMIN_URL = os.environ.get("MEMORYX_TEST_PG_ADMIN", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")


def _pg_available() -> bool:
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN_URL.replace("+psycopg", ""), connect_timeout=3):
            return True
    except Exception:
        return False


@pytest.fixture(scope="session")
def pg_url():
    """A fresh PostgreSQL database for this test session, dropped afterwards.

    CI starts PostgreSQL (.ci/run); on a machine without it these tests fail loudly rather than skip,
    unless MEMORYX_TEST_SKIP_PG=1 is set explicitly.
    """
    if not _pg_available():
        if os.environ.get("MEMORYX_TEST_SKIP_PG") == "1":
            pytest.skip("PostgreSQL not reachable and MEMORYX_TEST_SKIP_PG=1")
        pytest.fail(f"PostgreSQL is not reachable at {PG_ADMIN_URL}; start it (see .ci/run) or set MEMORYX_TEST_PG_ADMIN")
    import psycopg

    name = f"memoryx_test_{uuid.uuid4().hex[:10]}"
    admin = PG_ADMIN_URL.replace("+psycopg", "")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    yield url
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pgvector_url(tmp_path_factory):
    """A private PostgreSQL 16 with pgvector for this test session (the `pgserver` package, a dev dependency):
    a unix socket in a temporary directory, no TCP port; stopped and removed afterwards. The directory is not
    under pytest's base temp: pytest deletes old base temps, and a concurrent session could remove it."""
    try:
        import pgserver
    except ImportError:
        pytest.fail("the pgvector tests need the `pgserver` package: pip install -e '.[dev]'")
    import shutil

    import psycopg

    root = Path(tempfile.mkdtemp(prefix="memoryx-pg-"))
    server = pgserver.get_server(root, cleanup_mode="stop")
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        yield f"postgresql+psycopg://postgres@/postgres?host={root}"
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'memoryx.db'}"


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path, monkeypatch, request):
    """Every test gets its own data dir, a fresh settings cache and no shard read-ahead; a test marked
    `hand_ranking` searches with the hand-weighted ranking (MEMORYX_SEARCH_TUNING {"ranker": "hand"}): it checks
    a rule of that ranking, kept beside the fitted one to compare against."""
    monkeypatch.setenv("MEMORYX_DATA_DIR", str(tmp_path / "data"))
    if request.node.get_closest_marker("hand_ranking"):
        monkeypatch.setenv("MEMORYX_SEARCH_TUNING", '{"ranker": "hand"}')
    monkeypatch.setenv("MEMORYX_ENV_FILE", str(tmp_path / "none.env"))
    # the shards' read-ahead is a process-wide switch a server's startup turns on: each test starts with it off
    monkeypatch.setattr("memoryx.stores.vectors.edge_shard.SharedShard.read_ahead", False)
    from memoryx.settings import get_settings

    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture(scope="module")
def graph_services(tmp_path_factory):
    """Services with the embedded FalkorDB and the offline model, shared by the tests of one module
    (starting FalkorDB is the slow part); each test works in its own user scope."""
    from tests.support import make_services  # after the environment above is set: it loads LangChain

    services = make_services(tmp_path_factory.mktemp("services"), graph=True)
    assert services.graph is not None, "these tests need the embedded FalkorDB"
    yield services
    services.close()


# ------------------------------------------------------------------------------------ unit / integration

ENGINE_FIXTURES = frozenset({"tmp_path", "tmp_path_factory", "sqlite_url", "pg_url"})


def pytest_configure(config):
    config.addinivalue_line("markers", "unit: needs no engine (no database, store, graph server, MiniLM or HTTP "
                                       "server); `python3 -m pytest -m unit` runs these in seconds")
    config.addinivalue_line("markers", "hand_ranking: searches with the hand-weighted ranking (a rule of it is checked)")
    config.addinivalue_line("markers", "integration: runs against the real engines (SQLite, PostgreSQL, Qdrant, "
                                       "FalkorDB, MiniLM, servers)")


def _needs_engine(item: pytest.Function) -> bool:
    """Whether a test asks for an engine fixture, directly or through other fixtures. Autouse fixtures are
    left out: `_isolated_settings` gives every test a data dir whether it opens a store or not. A fixture of
    ours that takes `request` may pick its engine at run time (`request.getfixturevalue("pg_url")`), so it
    counts as one; pytest's own (parametrize values, tmp_path) do not."""
    info = item._fixtureinfo
    todo = list(info.argnames) + [name for mark in item.iter_markers("usefixtures") for name in mark.args]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in ENGINE_FIXTURES:
            return True
        if name in seen:
            continue
        seen.add(name)
        for fixturedef in info.name2fixturedefs.get(name, ()):
            ours = not fixturedef.func.__module__.startswith("_pytest")
            if ours and "request" in fixturedef.argnames:
                return True
            todo.extend(fixturedef.argnames)
    return False


def pytest_collection_modifyitems(config, items):
    for item in items:
        if not isinstance(item, pytest.Function) or item.get_closest_marker("integration"):
            continue
        integration = item.get_closest_marker("slow") or _needs_engine(item)
        item.add_marker(pytest.mark.integration if integration else pytest.mark.unit)
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: its collection order is the order files are handed out
        rank: dict[str, int] = {}
        for item in items:
            path = item.nodeid.split("::")[0]
            rank[path] = min(rank.get(path, 2), _rank(item))
        items.sort(key=lambda item: rank[item.nodeid.split("::")[0]])  # stable: a file's tests keep their order


def _rank(item: pytest.Item) -> int:
    """Under pytest-xdist (`--dist loadfile --no-loadscope-reorder`, scripts/test.sh) the longest files start first,
    so that none of them is still running alone at the end: the newcomer's clone (minutes), then the files that
    start servers (`slow`), then the others in their order."""
    if item.get_closest_marker("newcomer"):
        return 0
    return 1 if item.get_closest_marker("slow") else 2


@pytest.fixture(scope="module")
def falkor(tmp_path_factory):
    """An embedded FalkorDB for one test module: the default, native protocol over a private unix socket."""
    from memoryx.stores.graph.falkordb_server import EmbeddedFalkorDB

    server = EmbeddedFalkorDB(tmp_path_factory.mktemp("falkordb"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def bolt_falkor(tmp_path_factory):
    """A test-only server with FalkorDB's Bolt endpoint open (the Bolt transport's stand-in for Neo4j)."""
    from memoryx.stores.graph.falkordb_process import free_port
    from memoryx.stores.graph.falkordb_server import EmbeddedFalkorDB

    server = EmbeddedFalkorDB(tmp_path_factory.mktemp("falkordb-bolt"), bolt_port=free_port())
    server.start()
    yield server
    server.stop()
