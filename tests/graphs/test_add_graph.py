"""The whole add graph with the knowledge graph on, offline model: relations added, outdated ones
invalidated on UPDATE, DELETE cascades, at most 4 model calls per add. The wiring test needs no graph server
(the relations' SQL truth is checked); the others run on the embedded FalkorDB."""

from __future__ import annotations

from langchain_core.callbacks import BaseCallbackHandler

from memoryx.core.scope import Scope
from memoryx.graphs.add import add_run_config, builder
from tests.support import ctx, make_services


class CountCalls(BaseCallbackHandler):
    def __init__(self):
        self.calls = 0

    def on_chat_model_start(self, *args, **kwargs):
        self.calls += 1


def _add(graph, services, text, user_id):
    counter = CountCalls()
    trace_id = __import__("uuid").uuid4().hex
    config = add_run_config(trace_id, user_id=user_id, services=services)
    config["callbacks"] = [counter]
    out = graph.invoke({"messages": text, "user_id": user_id, "trace_id": trace_id}, config,
                       context=ctx(services, graph_enabled=True))
    return out["result"], counter.calls


class _NoGraphServer:
    """Stands for a graph store the nodes must not talk to directly (the projector does)."""


def test_graph_steps_are_wired_in_with_at_most_four_model_calls(tmp_path):
    import dataclasses

    services = make_services(tmp_path)
    try:
        services = dataclasses.replace(services, graph=_NoGraphServer())  # graph "on"; projector has none
        graph = builder.compile()
        user = "hana"
        r1, calls1 = _add(graph, services, "I live in Berlin and I work at Acme.", user)
        assert {(r["relationship"], r["destination"]) for r in r1["relations"]["added_entities"]} == {
            ("lives_in", "Berlin"), ("works_at", "Acme")}
        assert calls1 == 2  # extraction + relations (no similar memory: no judge call, nothing to resolve)
        r2, calls2 = _add(graph, services, "I moved to Paris.", user)
        assert [e["event"] for e in r2["results"]] == ["UPDATE"]
        assert ("lives_in", "Berlin") in {(r["relationship"], r["destination"]) for r in r2["relations"]["deleted_entities"]}
        assert calls2 <= 4
        run_add_zh, calls3 = _add(graph, services, "我喜欢喝咖啡", user)
        r4, calls4 = _add(graph, services, "我不再喜欢喝咖啡了", user)
        assert {e["event"] for e in r4["results"]} == {"DELETE", "ADD"} and calls4 <= 4
        valid = {(r["relation"], r["target"]) for r in services.sql.list_relations(Scope(user_id=user))}
        assert valid == {("lives_in", "Paris"), ("works_at", "Acme")}  # the deleted like cascaded
        assert run_add_zh["results"] and calls3 <= 4
    finally:
        services.close()


def test_relations_follow_the_memories(graph_services):
    services = graph_services
    graph = builder.compile()
    user = "gina"
    r1, calls1 = _add(graph, services, "I live in Berlin and I work at Acme.", user)
    assert [e["event"] for e in r1["results"]] == ["ADD", "ADD"]
    assert r1["relations"]["added_entities"], r1
    assert calls1 <= 4
    valid = {(r["source"], r["relation"], r["target"]) for r in services.sql.list_relations(Scope(user_id=user))}
    assert any(rel == "lives_in" and target == "Berlin" for _, rel, target in valid), valid

    r2, calls2 = _add(graph, services, "I moved to Paris.", user)
    assert [(e["event"], e["memory"]) for e in r2["results"]] == [("UPDATE", "User now lives in Paris")]
    assert calls2 <= 4
    now = {(r["relation"], r["target"]) for r in services.sql.list_relations(Scope(user_id=user))}
    assert ("lives_in", "Paris") in now and ("lives_in", "Berlin") not in now
    assert ("works_at", "Acme") in now
    assert services.graph.counts(Scope(user_id=user))["relations"] >= 2


def test_graph_switch_off_skips_the_graph(graph_services):
    services = graph_services
    graph = builder.compile()
    out = graph.invoke({"messages": "I live in Oslo", "user_id": "olaf", "trace_id": "0" * 32},
                       add_run_config("0" * 32, user_id="olaf"), context=ctx(services, graph_enabled=False))
    assert out["result"]["relations"] == {"added_entities": [], "deleted_entities": []}
    assert services.sql.list_relations(Scope(user_id="olaf")) == []


def test_each_step_is_checkpointed_before_the_next_one_starts(tmp_path, monkeypatch):
    """ADD_DURABILITY "sync": when a step runs, the checkpoint of the step before it is already
    saved, so a process killed inside any step resumes at that step (tests/test_crash_recovery.py kills it)."""
    from memoryx.graphs.add import compile_add_graph
    from memoryx.nodes import extract_facts as extract_module
    from memoryx.runtime.checkpointing import close_checkpointer, make_checkpointer

    services = make_services(tmp_path)
    saver = make_checkpointer(services.settings)
    graph = compile_add_graph(saver)
    trace_id = "33333333-3333-4333-8333-333333333333"
    config = add_run_config(trace_id, user_id="alice", services=services)
    seen = []
    real = extract_module.ask_in_run

    def spy(*a, **k):
        seen.append(graph.get_state(config).next)  # what a resume would run next, read from the saver
        return real(*a, **k)
    monkeypatch.setattr(extract_module, "ask_in_run", spy)
    try:
        graph.invoke({"messages": "I live in Berlin", "user_id": "alice", "trace_id": trace_id}, config,
                     context=ctx(services))
        assert seen == [("extract_facts",)]
    finally:
        close_checkpointer(saver)
        services.close()


def test_an_add_run_starts_at_most_one_worker_thread(tmp_path):
    """ADD_MAX_CONCURRENCY: LangGraph builds a thread pool per invoke; unbounded it started ~5
    threads per add for the checkpoint writes. The sequential add graph needs one."""
    import threading

    from memoryx.api.memory import Memory
    from tests.support import shared_embeddings

    with Memory(data_dir=tmp_path / "data", graph_backend="none", checkpointer="sqlite",
                embeddings=shared_embeddings()) as m:
        m.add("I live in Berlin", user_id="tia")  # warm: the first add opens stores and pools
        real, started = threading.Thread.start, []

        def start(thread):
            started.append(thread.name)
            return real(thread)
        threading.Thread.start = start
        try:
            out = m.add("I moved to Paris and I like jazz", user_id="tia")
        finally:
            threading.Thread.start = real
        assert {r["event"] for r in out["results"]} >= {"UPDATE", "ADD"}
        assert len(started) <= 1, started


def test_async_adds_with_one_worker_do_not_deadlock(tmp_path):
    """max_concurrency=1 makes AsyncMemory's runs gate their background work (checkpoint saves, writes) with a
    semaphore of 1: concurrent adds of one and of several users, and a review pause and resume, finish."""
    import asyncio

    from memoryx.api.memory import AsyncMemory
    from tests.support import shared_embeddings

    async def main():
        am = AsyncMemory(data_dir=tmp_path / "data", graph_backend="none", checkpointer="sqlite",
                         embeddings=shared_embeddings())
        try:
            texts = ["I live in Rome", "I like green tea", "I work at Acme", "I moved to Oslo"]
            outs = await asyncio.wait_for(asyncio.gather(
                *[am.add(t, user_id=u) for u in ("ana", "ben") for t in texts]), timeout=120)
            assert all(o["results"] for o in outs)
            paused = await asyncio.wait_for(am.add("I like black coffee", user_id="ana", review=True), timeout=60)
            assert paused["status"] == "awaiting_review"
            resumed = await asyncio.wait_for(am.resume_add(paused["trace_id"]), timeout=60)
            assert [r["memory"] for r in resumed["results"]] == [paused["pending_operations"][0]["text"]]
            # ana's adds ran concurrently: they serialise on her lock in whatever order they reached it, so
            # either home may be the later one; the profile must hold one of them (and nothing hung)
            assert (await am.get_profile(user_id="ana"))["home"]["value"] in ("Rome", "Oslo")
        finally:
            await am.close()

    asyncio.run(main())
