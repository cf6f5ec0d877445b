"""Checkpoints: crash-and-resume to the same end state without duplicate writes; human review interrupt +
resume; 20 concurrent adds for one user (no duplicates, no lost facts)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from langgraph.types import Command

from memoryx.graphs.add import add_run_config, compile_add_graph
from memoryx.nodes import execute_ops as execute_module
from memoryx.nodes import judge as judge_module
from memoryx.runtime.checkpointing import close_checkpointer, make_checkpointer
from tests.support import ctx, make_services, memories, run_add, texts

SEED = "I live in Berlin and I like jazz."
INPUT = "I moved to Paris. I don't like jazz anymore. I work at Acme."
TRACE = "5b1f0a52-1d2e-4c3b-9a8f-0123456789ab"


def _end_state(services) -> list[tuple]:
    rows = memories(services)
    return sorted((m["id"], m["memory"], tuple(h["event"] for h in services.sql.history(m["id"]))) for m in rows) + \
        sorted((m["id"], "deleted") for m in services.sql.list_memories(None, include_deleted=True, limit=None) if m["deleted_at"])


def _run(tmp_path, name, crash=None, monkeypatch=None):
    services = make_services(tmp_path / name)
    saver = make_checkpointer(services.settings)
    graph = compile_add_graph(saver)
    run_add(graph, services, SEED, trace_id="00000000-0000-4000-8000-000000000001")
    if crash:
        crash(monkeypatch, services)
        with pytest.raises(RuntimeError, match="simulated crash"):
            run_add(graph, services, INPUT, trace_id=TRACE)
        monkeypatch.undo()
        out = graph.invoke(None, add_run_config(TRACE, user_id="alice"), context=ctx(services))  # resume the thread
        result = out["result"]
    else:
        result = run_add(graph, services, INPUT, trace_id=TRACE)
    state = _end_state(services)
    judgment = services.sql.get_judgment(TRACE)
    close_checkpointer(saver)
    services.close()
    return result, state, judgment


def _crash_in_judge(monkeypatch, services):
    real = judge_module.ask_in_run

    def boom(*a, **k):
        raise RuntimeError("simulated crash in judge")
    monkeypatch.setattr(judge_module, "ask_in_run", boom)
    assert real


def _crash_after_writes(monkeypatch, services):
    real = execute_module.apply_operations

    def wrapped(*a, **k):
        real(*a, **k)
        raise RuntimeError("simulated crash after the SQL writes")
    monkeypatch.setattr(execute_module, "apply_operations", wrapped)


def _crash_mid_writes(monkeypatch, services):
    calls = {"n": 0}
    real = services.sql.insert_memory

    def flaky(*a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("simulated crash between two writes")
        return real(*a, **k)
    monkeypatch.setattr(services.sql, "insert_memory", flaky)


@pytest.mark.parametrize("crash", [_crash_in_judge, _crash_after_writes, _crash_mid_writes],
                         ids=["in-judge", "after-writes", "between-writes"])
def test_crash_and_resume_reaches_the_same_end_state(tmp_path, monkeypatch, crash):
    clean_result, clean_state, clean_judgment = _run(tmp_path, "clean")
    result, state, judgment = _run(tmp_path, "crashed", crash, monkeypatch)
    assert {e["event"] for e in clean_result["results"]} == {"ADD", "UPDATE", "DELETE"}
    assert result == clean_result
    assert state == clean_state  # same ids, same texts, same history (no duplicate ADD/UPDATE rows)
    assert judgment["status"] == "done" and judgment["executed_operations"] == clean_judgment["executed_operations"]


# ------------------------------------------------------------------------------------------------ review


@pytest.fixture
def reviewed(tmp_path):
    services = make_services(tmp_path)
    saver = make_checkpointer(services.settings)
    graph = compile_add_graph(saver)
    run_add(graph, services, "I live in Berlin")
    yield services, graph
    close_checkpointer(saver)
    services.close()


def _start(graph, services, trace_id, text="I moved to Paris and I like tea"):
    out = graph.invoke({"messages": text, "user_id": "alice", "trace_id": trace_id},
                       add_run_config(trace_id, user_id="alice"), context=ctx(services, review=True))
    assert "result" not in out
    (itr,) = out["__interrupt__"]
    return itr.value


def test_review_interrupts_and_resumes_with_approval(reviewed):
    services, graph = reviewed
    trace_id = "11111111-1111-4111-8111-111111111111"
    pending = _start(graph, services, trace_id)
    assert pending["trace_id"] == trace_id
    assert [(o["event"], o["text"]) for o in pending["operations"]] == [("UPDATE", "User now lives in Paris"), ("ADD", "User likes tea")]
    assert all(o["reason"] for o in pending["operations"])
    assert texts(services) == ["User lives in Berlin"]  # nothing executed yet
    assert services.sql.get_judgment(trace_id)["status"] == "awaiting_review"
    out = graph.invoke(Command(resume=True), add_run_config(trace_id, user_id="alice"), context=ctx(services, review=True))
    assert [e["event"] for e in out["result"]["results"]] == ["UPDATE", "ADD"]
    assert texts(services) == ["User likes tea", "User now lives in Paris"]
    assert services.sql.get_judgment(trace_id)["status"] == "done"


def test_a_paused_run_keeps_its_interrupt_and_no_step_writes_of_its_own(reviewed):
    """The saver writes LangGraph's own channels (the interrupt) at once; what the steps wrote to the state
    is in the checkpoints (checkpointing.StepWritesOnly), and the run still resumes from them."""
    services, graph = reviewed
    trace_id = "33333333-3333-4333-8333-333333333333"
    _start(graph, services, trace_id)
    saver = graph.checkpointer
    channels = {row[0] for row in saver.conn.execute("SELECT channel FROM writes WHERE thread_id = ?", (trace_id,))}
    assert channels == {"__interrupt__"}
    state = graph.get_state(add_run_config(trace_id, user_id="alice"))
    assert state.next == ("review",) and [f["text"] for f in state.values["facts"]] == ["User now lives in Paris", "User likes tea"]
    out = graph.invoke(Command(resume=True), add_run_config(trace_id, user_id="alice"), context=ctx(services, review=True))
    assert [e["event"] for e in out["result"]["results"]] == ["UPDATE", "ADD"]


def test_every_checkpointed_graph_runs_one_task_per_step():
    """StepWritesOnly relies on it: no node has two plain edges out, or a plain edge beside a router (each
    router returns one node name, never a list or a Send)."""
    from memoryx.graphs import add, chat, consolidate

    for builder in (add.builder, consolidate.builder, chat.builder):
        sources = [src for src, _ in builder.edges]
        assert len(sources) == len(set(sources)), builder
        for src, branches in builder.branches.items():
            assert src not in sources and len(branches) == 1, (src, list(branches))


def test_review_resumes_with_an_edited_list(reviewed):

    services, graph = reviewed
    trace_id = "22222222-2222-4222-8222-222222222222"
    pending = _start(graph, services, trace_id)
    update = pending["operations"][0]
    edited = [{**update, "text": "User lives in Paris, France"}]  # drop the ADD, edit the UPDATE
    out = graph.invoke(Command(resume={"operations": edited}), add_run_config(trace_id), context=ctx(services))
    assert [(e["event"], e["memory"]) for e in out["result"]["results"]] == [("UPDATE", "User lives in Paris, France")]
    assert texts(services) == ["User lives in Paris, France"]
    assert "[review]" in services.sql.get_judgment(trace_id)["reasoning"]


def test_review_rejects_all_and_refuses_invalid_edits(reviewed):
    services, graph = reviewed
    trace_id = "33333333-3333-4333-8333-333333333333"
    _start(graph, services, trace_id)
    again = graph.invoke(Command(resume=[{"event": "DELETE", "id": "not-a-memory"}]), add_run_config(trace_id), context=ctx(services))
    (itr,) = again["__interrupt__"]  # asked again, with the problem named; nothing executed
    assert "does not exist in this scope" in itr.value["error"] and len(itr.value["operations"]) == 2
    assert texts(services) == ["User lives in Berlin"]
    out = graph.invoke(Command(resume=[]), add_run_config(trace_id), context=ctx(services))
    assert out["result"]["results"] == []
    assert texts(services) == ["User lives in Berlin"]


# ------------------------------------------------------------------------------------------- concurrency


def test_twenty_concurrent_adds_for_one_user(tmp_path):
    services = make_services(tmp_path)
    saver = make_checkpointer(services.settings)
    graph = compile_add_graph(saver)
    barrier = threading.Barrier(20)

    def one(i: int):
        barrier.wait()
        return run_add(graph, services, f"I live in Berlin. I like fruit{i}.")

    try:
        with ThreadPoolExecutor(20) as pool:
            results = list(pool.map(one, range(20)))
        stored = texts(services)
        assert len(stored) == len(set(stored)), "duplicates"
        assert sorted(stored) == sorted(["User lives in Berlin"] + [f"User likes fruit{i}" for i in range(20)])
        adds = [e for r in results for e in r["results"] if e["event"] == "ADD"]
        assert len(adds) == 21
        assert services.vectors.count_memories() == 21
    finally:
        close_checkpointer(saver)
        services.close()


def test_a_concurrent_write_after_the_judgment_sends_the_run_back(tmp_path, monkeypatch):
    """Another run stores a similar memory between our judge and our execute: we are judged again."""
    from memoryx.core.scope import Scope
    from memoryx.graphs.add import builder

    services = make_services(tmp_path)
    try:
        graph = builder.compile()
        run_add(graph, services, "I live in Berlin")
        real = judge_module.ask_in_run
        calls = []

        def racing(*args, **kwargs):
            calls.append(1)
            out = real(*args, **kwargs)
            if len(calls) == 1:  # the other run commits right after our first judgment
                row = services.sql.insert_memory(scope=Scope(user_id="alice"), text="User lives in Paris", trace_id="other")
                services.projector.sync_memories([row["id"]])
            return out

        monkeypatch.setattr(judge_module, "ask_in_run", racing)
        r = run_add(graph, services, "I moved to Paris")
        assert len(calls) == 2  # judged again with the new memory in view
        assert [(e["event"], e["memory"]) for e in r["results"]] == [("DELETE", "User lives in Berlin")]
        assert texts(services) == ["User lives in Paris"]  # no second Paris memory, Berlin superseded
    finally:
        services.close()


def test_postgres_store_and_checkpointer(tmp_path, monkeypatch, pg_url):
    """On PostgreSQL: PostgresSaver checkpoints (auto), advisory scope lock, crash + resume."""
    import uuid as _uuid

    services = make_services(tmp_path, sql_url=pg_url, checkpointer="auto")
    saver = make_checkpointer(services.settings)
    try:
        from langgraph.checkpoint.postgres import PostgresSaver

        assert isinstance(saver, PostgresSaver)
        graph = compile_add_graph(saver)
        user = f"pg-{_uuid.uuid4().hex[:8]}"
        run_add(graph, services, "I live in Berlin", user_id=user)
        _crash_after_writes(monkeypatch, services)
        trace_id = str(_uuid.uuid4())
        with pytest.raises(RuntimeError, match="simulated crash"):
            run_add(graph, services, "I moved to Paris", user_id=user, trace_id=trace_id)
        monkeypatch.undo()
        out = graph.invoke(None, add_run_config(trace_id, user_id=user), context=ctx(services))
        assert [(e["event"], e["memory"]) for e in out["result"]["results"]] == [("UPDATE", "User now lives in Paris")]
        assert texts(services, user) == ["User now lives in Paris"]
        (mem,) = memories(services, user)
        assert [h["event"] for h in services.sql.history(mem["id"])] == ["ADD", "UPDATE"]
    finally:
        close_checkpointer(saver)
        services.close()
