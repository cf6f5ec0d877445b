"""Retention: finished add runs leave no checkpoints (runs awaiting review keep theirs), and raw
inputs, judgments and checkpoints past their retention time are pruned."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from memoryx.api.memory import AsyncMemory, Memory
from memoryx.core.scope import Scope
from memoryx.lifecycle.retention import prune
from memoryx.runtime.checkpointing import _uuid6_seconds, thread_times
from tests.support import shared_embeddings


def _thread(saver, trace_id):
    return saver.get_tuple({"configurable": {"thread_id": trace_id}})


def test_uuid6_time_of_a_checkpoint_id():
    from langgraph.checkpoint.base.id import uuid6

    assert abs(_uuid6_seconds(str(uuid6(clock_seq=5))) - time.time()) < 2


@pytest.fixture(scope="module")
def mem(tmp_path_factory):
    m = Memory(data_dir=tmp_path_factory.mktemp("retention") / "data", graph_backend="none", checkpointer="sqlite",
               embeddings=shared_embeddings(), retention_raw_inputs_days=1, retention_judgments_days=1,
               retention_checkpoints_days=1)
    yield m
    m.close()


def test_finished_runs_drop_their_checkpoints(mem):
    saver = mem._core.add_graph().checkpointer
    done = mem.add("I like green tea", user_id="dana")
    assert done["results"] and _thread(saver, done["trace_id"]) is None
    paused = mem.add("I like black coffee", user_id="dana", review=True)
    assert paused["status"] == "awaiting_review" and _thread(saver, paused["trace_id"]) is not None
    resumed = mem.resume_add(paused["trace_id"])
    assert resumed["results"] and _thread(saver, resumed["trace_id"]) is None


def test_keep_finished_checkpoints_setting(tmp_path):
    m = Memory(data_dir=tmp_path / "data", graph_backend="none", checkpointer="sqlite",
               embeddings=shared_embeddings(), keep_finished_checkpoints=True)
    try:
        out = m.add("I play the cello", user_id="erin")
        assert _thread(m._core.add_graph().checkpointer, out["trace_id"]) is not None
    finally:
        m.close()


def test_prune_past_retention_keeps_runs_awaiting_review(mem):
    user = f"p-{uuid.uuid4().hex[:6]}"
    core = mem._core
    saver = core.add_graph().checkpointer
    mem.settings.keep_finished_checkpoints = True  # a finished run with checkpoints, for the pruning below
    try:
        done = mem.add("I swim on Mondays", user_id=user)
    finally:
        mem.settings.keep_finished_checkpoints = False
    paused = mem.add("I swim on Fridays", user_id=user, review=True)
    assert set(thread_times(saver)) >= {done["trace_id"], paused["trace_id"]}

    assert prune(mem.services, [saver]) == {"raw_inputs": 0, "judgments": 0, "checkpoint_threads": 0}  # all new
    report = prune(mem.services, [saver], now=datetime.now(timezone.utc) + timedelta(days=2))

    assert report["raw_inputs"] >= 2 and report["judgments"] >= 1 and report["checkpoint_threads"] >= 1
    assert _thread(saver, done["trace_id"]) is None
    assert mem.judgments(paused["trace_id"])["status"] == "awaiting_review"  # its human has not answered yet
    assert len(mem.get_all(user_id=user)["results"]) == 1  # memories are never pruned
    assert mem.resume_add(paused["trace_id"])["results"]  # and the paused run can still be resumed


def test_retention_off_prunes_nothing(tmp_path):
    m = Memory(data_dir=tmp_path / "data", graph_backend="none", checkpointer="sqlite",
               embeddings=shared_embeddings(), retention_checkpoints_days=None)
    try:
        m.add("I knit scarves", user_id="fay", infer=False)
        later = datetime.now(timezone.utc) + timedelta(days=3650)
        assert m._core.pruned == {"raw_inputs": None, "judgments": None, "checkpoint_threads": None}
        assert prune(m.services, m._core.checkpointers(), now=later) == m._core.pruned
        trace_ids = m.services.sql.scope_trace_ids(Scope(user_id="fay"))
        assert trace_ids and all(m.services.sql.get_raw_input(t) for t in trace_ids)
    finally:
        m.close()


def test_async_memory_forgets_finished_runs_and_purges(tmp_path):
    async def main():
        am = AsyncMemory(data_dir=tmp_path / "data", graph_backend="none", checkpointer="sqlite",
                         embeddings=shared_embeddings())
        try:
            out = await am.add("I like green tea", user_id="gus")
            saver = am._core.add_graph().checkpointer  # same file as the async saver
            assert out["results"] and _thread(saver, out["trace_id"]) is None
            report = await am.purge(user_id="gus")
            assert report["sql"]["memories"] == 1 and report["sql"]["judgments"] == 1
            assert am.services.vectors.count_memories(Scope(user_id="gus")) == 0
        finally:
            await am.close()

    asyncio.run(main())


def test_retention_loop_runs_prune_periodically_and_survives_errors():
    from types import SimpleNamespace

    from memoryx.lifecycle.retention import start_retention_loop
    from memoryx.lifecycle.schedule import stop_background_task

    calls = []

    def flaky_prune():
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("store briefly down")
        return {}

    from contextlib import nullcontext

    claimed = SimpleNamespace(sql=SimpleNamespace(scheduled_job=lambda name, every_s: nullcontext(True)))

    async def main():
        memory = SimpleNamespace(settings=SimpleNamespace(retention_interval_s=0.02), prune=flaky_prune,
                                 services=claimed)  # this worker claims every tick
        task = start_retention_loop(memory)
        await asyncio.sleep(0.3)
        await stop_background_task(task)
        off = SimpleNamespace(settings=SimpleNamespace(retention_interval_s=0), prune=flaky_prune)
        assert start_retention_loop(off) is None

    asyncio.run(main())
    assert len(calls) >= 3  # went on after the failing pass


def test_scheduled_jobs_run_once_per_interval_across_workers(pgvector_url):
    """Two stores on one PostgreSQL (two workers): a job's tick is claimed by one of them; the other skips it,
    and a claim while the job runs is refused too."""
    from memoryx.stores.sql import SQLStore

    a, b = SQLStore(pgvector_url), SQLStore(pgvector_url)
    try:
        name = f"job-{uuid.uuid4().hex[:8]}"
        with a.scheduled_job(name, 60) as mine_a:
            with b.scheduled_job(name, 60) as mine_b:  # while a's run holds the job
                assert mine_a and not mine_b
        with b.scheduled_job(name, 60) as mine_b:  # later in the same interval
            assert not mine_b
        with b.scheduled_job(name, 0) as mine_b:  # an interval of 0 s has passed
            assert mine_b
        with a.run_lock("trace-1") as held_a, b.run_lock("trace-1") as held_b:
            assert held_a and not held_b
        with b.run_lock("trace-1") as held_b:
            assert held_b
    finally:
        a.close()
        b.close()
