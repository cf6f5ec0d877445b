"""How many PostgreSQL connections a process opens: bounded pools (MEMORYX_PG_POOL_SIZE,
MEMORYX_PG_LOCK_CONNECTIONS), one lock connection per thread whatever it holds, and `memoryx serve` refusing
workers whose connections could pass the server's max_connections. Against the real PostgreSQL on
127.0.0.1:5432 (the session's test database)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time

import pytest
import sqlalchemy as sa

from memoryx.core.scope import Scope
from memoryx.settings import Settings
from memoryx.stores.sql import SQLStore
from memoryx.stores.sql.capacity import connection_budget

COUNT = sa.text("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid()")


@pytest.fixture
def small_store(pg_url):
    store = SQLStore(pg_url, pool_size=2, lock_connections=3)
    yield store
    store.close()


def test_writers_past_the_pools_queue_instead_of_opening_connections(pg_url, small_store):
    # 12 writers, each like an add: its run lock, then its owner's lock, a read, a pause. An unpooled lock
    # engine opens two connections per writer (24 here) on top of the SQL pool.
    store, peak, done = small_store, [0], threading.Event()
    probe = sa.create_engine(pg_url, poolclass=sa.pool.NullPool)

    def watch() -> None:
        # autocommit: pg_stat_activity is read once per transaction
        with probe.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            while not done.is_set():
                peak[0] = max(peak[0], conn.execute(COUNT).scalar())
                time.sleep(0.01)

    def writer(i: int) -> None:
        with store.run_lock(f"trace-{i}") as mine:
            assert mine
            with store.scope_lock(Scope(user_id=f"user{i}"), timeout=30):
                store.list_memories(Scope(user_id=f"user{i}"))
                time.sleep(0.2)

    watcher = threading.Thread(target=watch)
    watcher.start()
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            writer(i)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(12)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        done.set()
        watcher.join()
        probe.dispose()
    assert not errors
    assert 3 <= peak[0] <= 2 + 3 + 1  # never past the SQL pool, the owner-lock pool and the run locks' one


def test_adds_in_flight_hold_their_run_locks_on_one_connection(pg_url, small_store):
    # an add holds its run lock through its model calls: 20 in flight must not mean 20 connections
    store, counts, held = small_store, [], threading.Barrier(21)
    probe = sa.create_engine(pg_url, poolclass=sa.pool.NullPool)
    results: list[bool] = []

    def add(i: int) -> None:
        with store.run_lock(f"run-{i}") as mine:
            results.append(mine)
            held.wait(30)  # all 20 held at once
            held.wait(30)  # until counted

    threads = [threading.Thread(target=add, args=(i,)) for i in range(20)]
    try:
        for t in threads:
            t.start()
        held.wait(30)
        with probe.connect() as conn:
            counts.append(conn.execute(COUNT).scalar())
        held.wait(30)
        for t in threads:
            t.join(30)
    finally:
        probe.dispose()
    assert results == [True] * 20
    assert counts[0] <= 1 + 2  # the run locks' one connection (+ the SQL pool's, opened at start)


def test_a_thread_holds_all_its_locks_on_one_connection(pg_url):
    store = SQLStore(pg_url, pool_size=1, lock_connections=1)
    try:
        # run lock + owner lock + a scheduled job in one thread, on pools of one connection
        with store.run_lock("t1") as mine, store.scope_lock(Scope(user_id="alice"), timeout=5):
            assert mine
            with store.run_lock("t1") as again:
                assert not again  # held already, by this thread: not a second holder
            with store.scheduled_job("conn-test-job", 3600) as claimed:
                assert claimed
        with store.scheduled_job("conn-test-job", 3600) as claimed:
            assert not claimed  # claimed in this interval already
        other = SQLStore(pg_url, pool_size=1, lock_connections=1)
        try:
            with store.run_lock("t2") as mine:
                assert mine
                with other.run_lock("t2") as theirs:
                    assert not theirs  # another session: excluded
            with other.run_lock("t2") as theirs:
                assert theirs  # released with the block
        finally:
            other.close()
    finally:
        store.close()


def test_coroutines_of_one_loop_hold_their_locks_apart(pg_url):
    # AsyncMemory holds an add's run lock across awaits, many adds on one loop: with one pooled lock
    # connection, the second would block the loop waiting for the first; sharing one connection, the
    # first's release would drop the second's lock.
    store = SQLStore(pg_url, pool_size=1, lock_connections=1)
    other = SQLStore(pg_url, pool_size=1, lock_connections=1)

    async def hold(name: str, seconds: float) -> None:
        with store.run_lock(name) as mine:
            assert mine
            await asyncio.sleep(seconds)

    async def main() -> None:
        first, second = asyncio.create_task(hold("a", 0.1)), asyncio.create_task(hold("b", 0.6))
        await asyncio.wait_for(first, 5)
        with other.run_lock("b") as theirs:
            assert not theirs  # still held by the second coroutine
        await asyncio.wait_for(second, 5)
        with other.run_lock("b") as theirs:
            assert theirs

    try:
        asyncio.run(main())
    finally:
        other.close()
        store.close()


def test_locks_are_released_before_the_connection_goes_back(pg_url):
    store = SQLStore(pg_url, pool_size=1, lock_connections=1)
    probe = sa.create_engine(pg_url, poolclass=sa.pool.NullPool)
    try:
        with pytest.raises(RuntimeError):
            with store.scope_lock(Scope(user_id="alice"), timeout=5):
                raise RuntimeError("boom")
        with probe.connect() as conn:  # the pooled connection stays open, holding no advisory lock
            held = conn.execute(sa.text(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")).scalar()
        assert held == 0
    finally:
        probe.dispose()
        store.close()


def test_connections_per_process_follows_the_settings(pg_url):
    s = Settings(sql_url=pg_url, vector_backend="pgvector", pg_pool_size=5, pg_lock_connections=7)
    assert s.pg_connections_per_process() == 3 * 5 + 7 + 2
    assert Settings(sql_url=pg_url, vector_backend="edge", checkpointer="sqlite", pg_pool_size=5,
                    pg_lock_connections=7).pg_connections_per_process() == 5 + 7 + 2
    assert Settings(sql_url=None, vector_backend="pgvector").pg_connections_per_process() == 0


def test_serve_refuses_workers_past_max_connections(pg_url, tmp_path):
    free, max_connections, _, _ = connection_budget(pg_url)
    per_worker = 3 * 20 + 5 + 2  # MEMORYX_PG_POOL_SIZE=20 below, MEMORYX_PG_LOCK_CONNECTIONS=5
    workers = free // per_worker + 1
    env = {**os.environ, "MEMORYX_DATA_DIR": str(tmp_path), "MEMORYX_ENV_FILE": str(tmp_path / "none.env"),
           "MEMORYX_SQL_URL": pg_url, "MEMORYX_VECTOR_BACKEND": "pgvector", "MEMORYX_GRAPH_BACKEND": "none",
           "MEMORYX_PG_POOL_SIZE": "20", "MEMORYX_PG_LOCK_CONNECTIONS": "5", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "memoryx.cli", "serve", "--workers", str(workers), "--port", "1"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode != 0
    assert f"{workers} x {per_worker}" in proc.stderr
    assert f"max_connections={max_connections}" in proc.stderr
    assert "MEMORYX_PG_POOL_SIZE" in proc.stderr and "MEMORYX_PG_LOCK_CONNECTIONS" in proc.stderr
    assert "Uvicorn running" not in proc.stderr


def test_serve_check_passes_within_max_connections(pg_url):
    from memoryx.cli.serve import check_connections

    check_connections(Settings(sql_url=pg_url, vector_backend="pgvector", graph_backend="none"), 1)
    check_connections(Settings(sql_url=None), 64)  # SQLite: no PostgreSQL connections to count
