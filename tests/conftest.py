"""Shared fixtures: real engines only (SQLite, PostgreSQL on 127.0.0.1:5432, embedded Qdrant, FalkorDB)."""

from __future__ import annotations

import os
import uuid

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")

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


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'memoryx.db'}"


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path, monkeypatch):
    """Every test gets its own data dir and a fresh settings cache."""
    monkeypatch.setenv("MEMORYX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MEMORYX_ENV_FILE", str(tmp_path / "none.env"))
    from memoryx.settings import get_settings

    get_settings.cache_clear()
    yield
    get_settings.cache_clear()
