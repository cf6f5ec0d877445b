"""Robust parsing of model output: fences, <think>, prose, schema validation, one retry, unknown ids, and a
ModelOutputError (with trace id, failed judgment, nothing written, resumable) after the retry."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage

from memoryx.errors import ModelOutputError
from memoryx.graphs.add import add_run_config, builder, compile_add_graph
from memoryx.models.llm_io import extract_json
from memoryx.nodes.extract_facts import parse_facts
from memoryx.nodes.judge import Decision, parse_decisions, resolve_decisions
from memoryx.runtime.checkpointing import make_checkpointer
from tests.support import ctx, facts_answer, make_services, ops_answer, run_add, scripted, texts


def test_extract_json_tolerates_fences_think_and_prose():
    raw = '<think>Let me think {"not": "this"}</think>\nSure! Here you go:\n```json\n{"facts": ["a"]}\n```\nDone.'
    assert extract_json(raw) == {"facts": ["a"]}
    assert extract_json('Answer: {"operations": []} trailing') == {"operations": []}
    assert extract_json('reasoning without open tag</think>{"x": 1}') == {"x": 1}
    with pytest.raises(ValueError):
        extract_json("no json here")


def test_parse_facts_variants():
    facts = parse_facts('{"facts": ["Name is John", {"content": "Likes tea", "category": "Preference", "importance": "high"},'
                        ' {"text": "Plans a trip", "category": "weird", "importance": 7, "memory_type": "episodic"}, {"text": " "}]}')
    assert [f["text"] for f in facts] == ["Name is John", "Likes tea", "Plans a trip"]
    assert facts[1]["category"] == "preference" and facts[1]["importance"] == 0.9 and facts[1]["memory_type"] == "preference"
    assert facts[2]["category"] == "fact" and facts[2]["importance"] == 0.7 and facts[2]["memory_type"] == "episodic"
    assert parse_facts('[{"text": "bare list"}]')[0]["text"] == "bare list"
    with pytest.raises(ValueError):
        parse_facts('{"something": []}')


def test_parse_decisions_schema_and_aliases():
    d = parse_decisions('{"memory": [{"id": 0, "text": "x", "event": "update"}, {"fact": "1", "type": "IGNORE"}]}')
    assert d[0].event == "UPDATE" and d[0].id == "0" and d[1].event == "NONE" and d[1].fact == 1
    with pytest.raises(ValueError, match="schema"):
        parse_decisions('{"operations": [{"event": "MERGE", "text": "x"}]}')


def test_unknown_ids_never_touch_another_memory():
    facts = [{"text": "User lives in Oslo", "owner": "user"}, {"text": "User likes rain", "owner": "user"}]
    candidates = [{"ref": "0", "id": "real-0", "memory": "User lives in Bergen", "owner": "user"}]
    decisions = [Decision(fact=0, reason="moved", event="UPDATE", id="7", text="User lives in Oslo"),
                 Decision(fact=1, reason="contradiction", event="DELETE", id="9"),
                 Decision(fact=1, reason="dup", event="NONE", id="42")]
    ops, notes = resolve_decisions(decisions, facts, candidates)
    assert [(o["event"], o["text"]) for o in ops] == [("ADD", "User lives in Oslo"), ("ADD", "User likes rain")]
    assert all(o.get("id") is None for o in ops)  # real-0 untouched
    assert any("unknown id '7'" in n for n in notes) and any("unknown id '9'" in n for n in notes)
    assert "[memoryx]" in ops[0]["reason"]


def test_contradiction_never_loses_the_new_fact():
    facts = [{"text": "User is vegan", "owner": "user"}]
    candidates = [{"ref": "0", "id": "m1", "memory": "User loves steak", "owner": "user"}]
    ops, notes = resolve_decisions([Decision(fact=0, reason="contradicts", event="DELETE", id="0")], facts, candidates)
    assert [(o["event"], o.get("id"), o["text"]) for o in ops] == [("DELETE", "m1", "User loves steak"), ("ADD", None, "User is vegan")]
    assert "contradicted" in notes[0]


def test_a_memory_is_targeted_once():
    facts = [{"text": "A", "owner": "user"}, {"text": "B", "owner": "user"}]
    candidates = [{"ref": "0", "id": "m1", "memory": "old", "owner": "user"}]
    ops, _ = resolve_decisions([Decision(fact=0, event="UPDATE", id="0", text="A"),
                                Decision(fact=1, event="UPDATE", id="0", text="B")], facts, candidates)
    assert [(o["event"], o.get("id")) for o in ops] == [("UPDATE", "m1"), ("ADD", None)]


@pytest.fixture
def seeded(tmp_path):
    """Services whose store already holds 'User lives in Berlin' (so the judge is asked)."""
    def make(judgment_llm, extraction_llm=None):
        services = make_services(tmp_path, extraction_llm=extraction_llm or scripted(
            facts_answer("User lives in Berlin"), facts_answer("User lives in Munich")), judgment_llm=judgment_llm)
        run_add(builder.compile(), services, "I live in Berlin")
        return services
    return make


def test_fenced_think_answer_with_prose_is_used(seeded):
    answer = ("<think>The user moved.</think>\nHere is my decision:\n```json\n" +
              ops_answer({"fact": 0, "reason": "moved", "event": "UPDATE", "id": "0", "text": "User lives in Munich"}) +
              "\n```\nHope this helps!")
    services = seeded(scripted(answer))
    try:
        r = run_add(builder.compile(), services, "I live in Munich now")
        assert [(e["event"], e["memory"], e["previous_memory"]) for e in r["results"]] == [
            ("UPDATE", "User lives in Munich", "User lives in Berlin")]
    finally:
        services.close()


def test_malformed_output_is_retried_once_with_the_error_shown(seeded):
    good = ops_answer({"fact": 0, "reason": "moved", "event": "UPDATE", "id": "0", "text": "User lives in Munich"})
    judge_llm = scripted("I think you should update it.", good)
    services = seeded(judge_llm)
    try:
        r = run_add(builder.compile(), services, "I live in Munich now")
        assert r["results"][0]["event"] == "UPDATE"
        j = services.sql.get_judgment(r["trace_id"])
        assert "I think you should update it." in j["llm_response"] and good in j["llm_response"]
        assert j["status"] == "done"
    finally:
        services.close()


def test_unparseable_after_retry_raises_with_trace_id_and_is_resumable(seeded):
    judge_llm = scripted("nonsense", '{"operations": [{"event": "MERGE"}]}',
                         ops_answer({"fact": 0, "reason": "moved", "event": "UPDATE", "id": "0", "text": "User lives in Munich"}))
    services = seeded(judge_llm)
    try:
        graph = compile_add_graph(make_checkpointer(services.settings))
        before = texts(services)
        trace_id = "7d0c7c1e-0000-4000-8000-000000000001"
        with pytest.raises(ModelOutputError) as info:
            run_add(graph, services, "I live in Munich now", trace_id=trace_id)
        assert info.value.trace_id == trace_id and trace_id in str(info.value)
        j = services.sql.get_judgment(trace_id)
        assert j["status"] == "failed" and j["execution_success"] is False
        assert "schema" in j["error_message"] and "nonsense" in j["llm_response"]
        assert texts(services) == before  # nothing half-written
        # the model works again: resume the same thread, the run finishes from the failed step
        out = graph.invoke(None, add_run_config(trace_id, user_id="alice"), context=ctx(services))
        assert [(e["event"], e["memory"]) for e in out["result"]["results"]] == [("UPDATE", "User lives in Munich")]
        assert services.sql.get_judgment(trace_id)["status"] == "done"
        assert texts(services) == ["User lives in Munich"]
    finally:
        services.close()


def test_model_exception_is_a_model_output_error(tmp_path):
    class Boom(Exception):
        pass

    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel

    class Failing(FakeMessagesListChatModel):
        def _generate(self, *a, **k):
            raise Boom("endpoint down")

    services = make_services(tmp_path, llm=Failing(responses=[AIMessage(content="")]))
    try:
        with pytest.raises(ModelOutputError, match="endpoint down"):
            run_add(builder.compile(), services, "I live in Berlin and I like jazz")
    finally:
        services.close()


def test_unknown_id_from_the_model_in_a_full_run(seeded):
    judge_llm = scripted(ops_answer({"fact": 0, "reason": "update", "event": "UPDATE", "id": "5", "text": "User lives in Munich"},
                                    {"fact": 0, "reason": "delete it", "event": "DELETE", "id": "17"}))
    services = seeded(judge_llm)
    try:
        r = run_add(builder.compile(), services, "I live in Munich now")
        assert [(e["event"], e["memory"]) for e in r["results"]] == [("ADD", "User lives in Munich")]
        assert texts(services) == ["User lives in Berlin", "User lives in Munich"]  # Berlin untouched
        j = services.sql.get_judgment(r["trace_id"])
        assert "unknown id '5'" in j["reasoning"] and "unknown id '17'" in j["reasoning"]
        assert json.dumps(j["parsed_operations"])
    finally:
        services.close()
