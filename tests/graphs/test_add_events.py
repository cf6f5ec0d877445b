"""Add graph end to end on the embedded stores: every event type, history under one id, languages, the
judgment record, mem0's result shape. Offline model and scripted fake models; graph off (not the point)."""

from __future__ import annotations

import pytest

from memoryx.core.scope import Scope
from memoryx.graphs.add import builder, compile_add_graph
from memoryx.runtime.checkpointing import make_checkpointer
from tests.support import NoModel, ctx, facts_answer, make_services, memories, ops_answer, run_add, scripted, texts


@pytest.fixture
def offline(tmp_path):
    services = make_services(tmp_path)
    yield services, builder.compile()
    services.close()


def test_add_update_delete_none_with_the_offline_model(offline):
    services, graph = offline
    r1 = run_add(graph, services, "Hi! My name is Alice. I live in Berlin and I like jazz.")
    assert set(r1) == {"results", "relations", "trace_id", "facts_count", "extracted_entities"}
    assert r1["facts_count"] == 3 and r1["extracted_entities"] == []  # no graph: no entities
    assert r1["relations"] == {"added_entities": [], "deleted_entities": []}
    assert [(e["event"], e["memory"]) for e in r1["results"]] == [
        ("ADD", "User's name is Alice"), ("ADD", "User lives in Berlin"), ("ADD", "User likes jazz")]
    home_id = r1["results"][1]["id"]
    jazz_id = r1["results"][2]["id"]

    r2 = run_add(graph, services, "I moved to Paris. I don't like jazz anymore.")
    events = {(e["event"], e["memory"]) for e in r2["results"]}
    assert ("UPDATE", "User now lives in Paris") in events
    assert ("DELETE", "User likes jazz") in events
    assert ("ADD", "User no longer likes jazz") in events  # the retraction itself is not lost
    update = next(e for e in r2["results"] if e["event"] == "UPDATE")
    assert update["id"] == home_id and update["previous_memory"] == "User lives in Berlin"
    assert next(e for e in r2["results"] if e["event"] == "DELETE")["id"] == jazz_id

    r3 = run_add(graph, services, "I live in Paris.")  # same fact again -> NONE, nothing reported
    assert r3["results"] == []
    judgment = services.sql.get_judgment(r3["trace_id"])
    assert [op["event"] for op in judgment["parsed_operations"]] == ["NONE"]
    assert judgment["status"] == "done" and judgment["execution_success"] is True

    assert texts(services) == sorted(["User's name is Alice", "User now lives in Paris", "User no longer likes jazz"])
    assert [h["event"] for h in services.sql.history(home_id)] == ["ADD", "UPDATE"]
    assert [h["event"] for h in services.sql.history(jazz_id)] == ["ADD", "DELETE"]
    # the vector projection follows SQL: the deleted memory is gone, the updated one has the new text
    hits = services.vectors.keyword_search("jazz", Scope(user_id="alice"), limit=10)
    assert jazz_id not in {h.id for h in hits}


def test_chinese_input_stays_chinese(offline):
    services, graph = offline
    r1 = run_add(graph, services, "我叫小明，我住在北京。我在阿里巴巴工作，我喜欢喝咖啡。")
    assert [e["memory"] for e in r1["results"]] == ["用户叫小明", "用户住在北京", "用户在阿里巴巴工作", "用户喜欢喝咖啡"]
    r2 = run_add(graph, services, "我搬到了上海。我在腾讯工作。我不再喜欢喝咖啡了。")
    got = {(e["event"], e["memory"], e.get("previous_memory")) for e in r2["results"]}
    assert ("UPDATE", "用户现在住在上海", "用户住在北京") in got
    assert ("UPDATE", "用户在腾讯工作", "用户在阿里巴巴工作") in got
    assert ("DELETE", "用户喜欢喝咖啡", None) in got
    assert ("ADD", "用户不再喜欢喝咖啡", None) in got
    for m in memories(services):
        assert not any(c.isascii() and c.isalpha() for c in m["memory"]), m["memory"]  # no English drift


def test_japanese_input_stays_japanese(offline):
    services, graph = offline
    run_add(graph, services, "私の名前は田中です。私は東京に住んでいます。")
    r = run_add(graph, services, "私は大阪に引っ越しました。")
    assert [(e["event"], e["memory"]) for e in r["results"]] == [("UPDATE", "ユーザーは今大阪に住んでいる")]


def test_judgment_record_has_reasons_model_and_executed_operations(offline):
    services, graph = offline
    run_add(graph, services, "I work at Acme.")
    r = run_add(graph, services, "I work at Globex now.")
    j = services.sql.get_judgment(r["trace_id"])
    assert j["model_name"] == "offline"
    assert j["extracted_facts"][0]["text"] == "User works at Globex"
    assert j["existing_memories"] and j["existing_memories"][0]["memory"] == "User works at Acme"
    assert '"event": "UPDATE"' in j["llm_response"]
    op = j["parsed_operations"][0]
    assert op["event"] == "UPDATE" and "Acme" in op["reason"] and op["id"] == j["existing_memories"][0]["id"]
    assert j["executed_operations"][0]["event"] == "UPDATE"
    assert j["latency_ms"] is not None and j["status"] == "done"
    assert "[UPDATE]" in j["reasoning"]


def test_first_add_needs_no_judge_call(tmp_path):
    """No similar memory in scope: every fact is an ADD by rule, the judge model is never called."""
    services = make_services(tmp_path, extraction_llm=scripted(facts_answer("User plays chess", "User has a cat")),
                             judgment_llm=NoModel())
    try:
        r = run_add(builder.compile(), services, "I play chess and I have a cat")
        assert [e["event"] for e in r["results"]] == ["ADD", "ADD"]
        assert services.sql.get_judgment(r["trace_id"])["model_name"] == "rule:no-similar-memories"
    finally:
        services.close()


def test_chitchat_skips_the_model(tmp_path):
    services = make_services(tmp_path, llm=NoModel())
    try:
        r = run_add(builder.compile(), services, [{"role": "user", "content": "Hi there!"},
                                                  {"role": "assistant", "content": "Hello!"},
                                                  {"role": "user", "content": "thanks"}])
        assert r["results"] == [] and memories(services) == []
    finally:
        services.close()


def test_update_and_delete_keep_the_id_and_history(tmp_path):
    """Scripted model: ADD, UPDATE, DELETE of one memory -> history ADD, UPDATE, DELETE under one id."""
    extraction = scripted(facts_answer("User's favourite color is blue"),
                          facts_answer("User's favourite color is green"),
                          facts_answer("User has no favourite color anymore"))
    judgment = scripted(
        ops_answer({"fact": 0, "reason": "The favourite colour changed.", "event": "UPDATE", "id": "0",
                    "text": "User's favourite color is green", "old_memory": "User's favourite color is blue"}),
        ops_answer({"fact": 0, "reason": "The preference was withdrawn.", "event": "DELETE", "id": "0"},
                   {"fact": 0, "reason": "Keep the new statement.", "event": "ADD", "id": None,
                    "text": "User has no favourite color anymore"}))
    services = make_services(tmp_path, extraction_llm=extraction, judgment_llm=judgment, similarity_threshold=0.3)
    try:
        graph = builder.compile()
        first = run_add(graph, services, "My favourite color is blue")["results"][0]
        second = run_add(graph, services, "Now it's green")["results"][0]
        third = run_add(graph, services, "I have no favourite color anymore")["results"]
        assert second == {"id": first["id"], "memory": "User's favourite color is green", "event": "UPDATE",
                          "previous_memory": "User's favourite color is blue"}
        assert {"id": first["id"], "memory": "User's favourite color is green", "event": "DELETE"} in third
        history = services.sql.history(first["id"])
        assert [h["event"] for h in history] == ["ADD", "UPDATE", "DELETE"]
        assert history[1]["old_memory"] == "User's favourite color is blue"
        assert texts(services) == ["User has no favourite color anymore"]
    finally:
        services.close()


def test_exact_duplicates_are_skipped(tmp_path):
    """A judge that ADDs a fact already stored (and the same input twice) creates no duplicate."""
    extraction = scripted(facts_answer("User likes tea"), facts_answer("User likes tea"))
    judgment = scripted(ops_answer({"fact": 0, "reason": "looks new", "event": "ADD", "text": "User likes tea"}))
    services = make_services(tmp_path, extraction_llm=extraction, judgment_llm=judgment)
    try:
        graph = builder.compile()
        run_add(graph, services, "I like tea")
        r = run_add(graph, services, "I like tea")
        assert r["results"] == []
        assert texts(services) == ["User likes tea"]
        executed = services.sql.get_judgment(r["trace_id"])["executed_operations"]
        assert executed[0]["event"] == "NONE" and "duplicate" in executed[0]["reason"]
    finally:
        services.close()


def test_agent_facts_are_kept_apart(tmp_path):
    extraction = scripted('{"facts": [{"text": "User likes hiking", "owner": "user"}, '
                          '{"text": "Assistant is called Robo", "owner": "agent"}]}')
    services = make_services(tmp_path, extraction_llm=extraction, judgment_llm=NoModel())
    try:
        r = run_add(builder.compile(), services, [{"role": "user", "content": "I like hiking"},
                                                  {"role": "assistant", "content": "Great! I'm Robo, by the way."}],
                    agent_id="robo", agent_memory="global")  # the agent's own memory, outside alice's tenancy
        assert len(r["results"]) == 2
        user_side = services.sql.list_memories(Scope(user_id="alice"))
        agent_side = [m for m in services.sql.list_memories(Scope(agent_id="robo")) if m["user_id"] is None]
        assert [m["memory"] for m in user_side] == ["User likes hiking"]
        assert [m["memory"] for m in agent_side] == ["Assistant is called Robo"]
        assert agent_side[0]["metadata"]["owner"] == "agent"
    finally:
        services.close()


def test_metadata_and_fact_fields_are_stored(offline):
    services, graph = offline
    r = run_add(graph, services, "I like sushi", metadata={"source": "chat", "session": 3})
    m = services.sql.get_memory(r["results"][0]["id"])
    assert m["metadata"] == {"source": "chat", "session": 3}
    assert (m["category"], m["memory_type"]) == ("preference", "preference")
    # reasoned importance: first of its kind (scarcity 1), a preference (impact 0.9), said now, said plainly
    assert m["importance"] == 0.945 and m["importance_factors"]["certainty_by"] == "rule"
    assert m["trace_id"] == r["trace_id"]


def test_compiled_with_a_checkpointer_and_without(tmp_path):
    services = make_services(tmp_path)
    try:
        saver = make_checkpointer(services.settings)
        graph = compile_add_graph(saver)
        r = run_add(graph, services, "I live in Rome")
        state = graph.get_state({"configurable": {"thread_id": r["trace_id"]}})
        assert state.values["result"]["results"][0]["memory"] == "User lives in Rome"
        assert (services.settings.data_dir / "checkpoints.db").exists()
        assert ctx(services).graph_enabled is False
    finally:
        services.close()
