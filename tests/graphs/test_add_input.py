"""Bad and unusual input of the add graph: empty, whitespace, oversized, invalid roles/types, long messages,
timestamps, infer=False, trace ids, raw input."""

from __future__ import annotations

import uuid

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from memoryx.errors import InvalidInputError, ScopeError
from memoryx.graphs.add import builder
from memoryx.ingest.messages import normalize_messages, split_long
from tests.support import NoModel, ctx, facts_answer, make_services, memories, run_add, scripted


@pytest.fixture
def quiet(tmp_path):
    """Services with a model that must never be called."""
    services = make_services(tmp_path, llm=NoModel(), max_input_chars=200, max_message_chars=50)
    yield services, builder.compile()
    services.close()


@pytest.mark.parametrize("messages", ["", "   \n\t ", [], [{"role": "user", "content": "  "}]])
def test_empty_input_gives_an_empty_result_and_writes_nothing(quiet, messages):
    services, graph = quiet
    trace_id = str(uuid.uuid4())
    r = run_add(graph, services, messages, trace_id=trace_id)
    assert r == {"results": [], "relations": {"added_entities": [], "deleted_entities": []}, "trace_id": trace_id,
                 "facts_count": 0, "extracted_entities": []}
    assert memories(services) == []
    with pytest.raises(KeyError):
        services.sql.get_raw_input(trace_id)


def test_oversized_input_is_refused_naming_the_limit(quiet):
    services, graph = quiet
    with pytest.raises(InvalidInputError, match=r"200 characters.*MEMORYX_MAX_INPUT_CHARS"):
        run_add(graph, services, "x" * 201)
    assert memories(services) == []


@pytest.mark.parametrize("bad, match", [
    ([{"role": "robot", "content": "hi"}], "invalid role 'robot'"),
    ([{"role": "user"}], "missing 'content'"),
    ([{"role": "user", "content": 42}], "content must be a string"),
    (["just a string in a list"], "must be a dict"),
    (42, "messages must be a string or a list"),
])
def test_invalid_roles_and_types_are_value_errors(quiet, bad, match):
    services, graph = quiet
    with pytest.raises(ValueError, match=match):
        run_add(graph, services, bad)


def test_scope_is_required(quiet):
    services, graph = quiet
    with pytest.raises(ScopeError):
        run_add(graph, services, "I live in Berlin", user_id=None)


def test_long_messages_are_split():
    chunks = split_long("word " * 30, 50)
    assert all(len(c) <= 50 for c in chunks) and " ".join(chunks).split() == ["word"] * 30
    assert split_long("字" * 120, 50) == ["字" * 50, "字" * 50, "字" * 20]
    msgs = normalize_messages([{"role": "user", "content": "hi", "timestamp": 1700000000, "name": "al"},
                               HumanMessage(content="hello"), AIMessage(content="yo")])
    assert msgs[0]["timestamp"].startswith("2023-11-14") and msgs[0]["name"] == "al"
    assert [m["role"] for m in msgs] == ["user", "user", "assistant"]


def test_long_message_reaches_the_model_in_chunks(tmp_path):
    extraction = scripted(facts_answer("User writes long messages"))
    services = make_services(tmp_path, extraction_llm=extraction, judgment_llm=NoModel(), max_message_chars=40)
    try:
        graph = builder.compile()
        r = run_add(graph, services, "I like to write. " * 6)
        assert r["results"][0]["memory"] == "User writes long messages"
        raw = services.sql.get_raw_input(r["trace_id"])
        assert raw["messages"] == [{"role": "user", "content": "I like to write. " * 6}]  # verbatim
        shown = services.sql.get_judgment(r["trace_id"])["input_content"].splitlines()[1:]
        assert len(shown) >= 3 and all(line.startswith("user: ") and len(line) <= 46 for line in shown)
    finally:
        services.close()


def test_infer_false_stores_each_message_as_is(quiet):
    services, graph = quiet
    msgs = [{"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "I had pasta tonight.", "timestamp": "2025-03-01T19:00:00Z"},
            {"role": "assistant", "content": "Sounds delicious!", "name": "bot"}]
    r = run_add(graph, services, msgs, infer=False, metadata={"source": "import"})
    assert [(e["event"], e["memory"]) for e in r["results"]] == [("ADD", "I had pasta tonight."), ("ADD", "Sounds delicious!")]
    by_text = {m["memory"]: m for m in memories(services)}
    assert by_text["I had pasta tonight."]["metadata"] == {"source": "import", "role": "user", "timestamp": "2025-03-01T19:00:00Z"}
    # a named message records who said it (facts belong to their speaker)
    assert by_text["Sounds delicious!"]["metadata"] == {"source": "import", "role": "assistant", "name": "bot",
                                                         "speaker": "bot"}
    # the same messages again: exact duplicates are not stored twice; ids are deterministic per trace
    again = run_add(graph, services, msgs, infer=False, metadata={"source": "import"})
    assert again["results"] == [] and len(memories(services)) == 2


def test_trace_id_is_generated_and_raw_input_saved(quiet):
    services, graph = quiet
    out = graph.invoke({"messages": [{"role": "user", "content": "ok"}], "user_id": "alice"},
                       context=ctx(services))
    trace_id = out["result"]["trace_id"]
    assert uuid.UUID(trace_id)
    assert services.sql.get_raw_input(trace_id)["messages"] == [{"role": "user", "content": "ok"}]
