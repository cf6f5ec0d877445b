"""The knowledge-graph steps of the add graph (extract_relations -> link_entities -> resolve_graph_conflicts)
against real stores: SQLite, the embedded Qdrant shard and the embedded FalkorDB, with scripted fake chat
models (tool calls and JSON answers) and with the offline model.

One Services object, the `graph_services` fixture of tests/conftest.py, is shared by the module (FalkorDB and
the embedding model start once); every test works in its own user scope.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.runtime import Runtime
from pydantic import Field

from memoryx.core.scope import Scope
from memoryx.core.text import normalize_name
from memoryx.errors import ModelOutputError
from memoryx.models.offline import OfflineChatModel
from memoryx.nodes.graph_conflicts import resolve_graph_conflicts
from memoryx.nodes.graph_linking import link_entities
from memoryx.nodes.graph_relations import extract_relations
from memoryx.runtime.context import Context

# ---------------------------------------------------------------------------------------------- helpers


class ScriptedModel(FakeMessagesListChatModel):
    """Answers from a script; records every call (messages + bound tool names). Tool calling optional."""

    calls: list = Field(default_factory=list)
    tools_supported: bool = True
    fail_with_tools: bool = False

    def bind_tools(self, tools, *, tool_choice: str | None = None, **kwargs: Any):
        if not self.tools_supported:
            raise NotImplementedError("this model has no tool calling")
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        names = [t["function"]["name"] for t in kwargs.get("tools") or []]
        self.calls.append({"messages": messages, "tools": names})
        if names and self.fail_with_tools:
            raise RuntimeError("400: tools are not supported by this endpoint")
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


class CountingOffline(OfflineChatModel):
    calls: list = Field(default_factory=list)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.calls.append([t["function"]["name"] for t in kwargs.get("tools") or []])
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def services_with(base, llm=None, mode: str = "auto", graph=...):
    changes: dict[str, Any] = {"settings": base.settings.model_copy(update={"graph_extraction_mode": mode})}
    if llm is not None:
        changes["model_choices"] = {**base.model_choices, "graph": llm}
    if graph is not ...:
        changes["graph"] = graph
    return dataclasses.replace(base, **changes)


def runtime(services, **ctx) -> Runtime:
    return Runtime(context=Context(services=services, **ctx))


def new_user() -> str:
    return f"u_{uuid.uuid4().hex[:8]}"


def tool_call(name: str, args: Any) -> dict:
    return {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:8]}", "type": "tool_call"}


def store_memory(services, user_id: str, text: str, **scope) -> dict:
    return services.sql.insert_memory(scope=Scope(user_id=user_id, **scope), text=text)


def run_graph_steps(services, state: dict, **ctx) -> dict:
    """extract_relations -> link_entities -> resolve_graph_conflicts, merging partial updates like LangGraph."""
    rt = runtime(services, **ctx)
    state = {"trace_id": str(uuid.uuid4()), **state}
    for node in (extract_relations, link_entities, resolve_graph_conflicts):
        update = node(state, rt)
        timings = {**state.get("timings", {}), **update.pop("timings", {})}
        state = {**state, **update, "timings": timings}
    return state


def add_memories(services, user_id: str, *texts: str, **ctx) -> tuple[list[dict], dict]:
    """Store memories in SQL and run the graph steps over them as this run's ADDs."""
    rows = [store_memory(services, user_id, t) for t in texts]
    executed = [{"id": r["id"], "memory": r["memory"], "event": "ADD"} for r in rows]
    return rows, run_graph_steps(services, {"user_id": user_id, "executed": executed}, **ctx)


def valid_triples(services, user_id: str, *, include_invalid: bool = False) -> set[tuple]:
    rows = services.sql.list_relations(Scope(user_id=user_id), include_invalid=include_invalid)
    return {(r["source"], r["relation"], r["target"]) if r["valid"] else (r["source"], r["relation"], r["target"], "invalid")
            for r in rows}


def entity_names(services, user_id: str) -> set[str]:
    return {e["name"] for e in services.sql.list_entities(Scope(user_id=user_id))}


def graph_edges(services, user_id: str) -> dict[tuple, bool]:
    """(source, relation, target) -> valid, as projected into FalkorDB."""
    scope = Scope(user_id=user_id)
    ids = [e["id"] for e in services.sql.list_entities(scope)]
    rows = services.graph.neighbourhood(scope, ids, depth=1, include_invalid=True) if ids else []
    return {(r["source"], r["relation"], r["target"]): bool(r["valid"]) for r in rows}


def entity_vector_names(services, user_id: str, name: str) -> set[str]:
    vec = services.embeddings.embed_documents([name])[0]
    return {h.payload.get("name") for h in services.vectors.search_entities(vec, Scope(user_id=user_id), limit=10)}


# -------------------------------------------------------------------------------------- extraction


def test_tool_calling_path_one_call_self_reference_and_attribution(graph_services):
    user = new_user()
    llm = ScriptedModel(responses=[AIMessage(content="", tool_calls=[
        tool_call("extract_entities", {"entities": [{"entity": "I", "entity_type": "person"},
                                                     {"entity": "Berlin", "entity_type": "city"},
                                                     {"entity": "Acme", "entity_type": "organization"}]}),
        tool_call("establish_relationships", {"relations": [
            {"source": "me", "relationship": "Lives In", "destination": "Berlin", "memory": 0},
            {"source": "USER_ID", "relationship": "works-at", "destination": "Acme"},  # no index: text match
        ]}),
    ])])
    services = services_with(graph_services, llm, mode="tools")
    rows, state = add_memories(services, user, "Lives in Berlin", "Works at Acme")

    assert len(llm.calls) == 1, "entities and relations come from ONE call"
    assert set(llm.calls[0]["tools"]) == {"extract_entities", "establish_relationships"}
    system = llm.calls[0]["messages"][0].content
    assert user in system and "[memoryx-task: graph_extract]" in system
    assert state["relations"] == [
        {"source": user, "relation": "lives_in", "destination": "Berlin", "memory_id": rows[0]["id"]},
        {"source": user, "relation": "works_at", "destination": "Acme", "memory_id": rows[1]["id"]},
    ]
    assert {e["name"]: e["entity_type"] for e in state["entities"]} == {user: "person", "Berlin": "city", "Acme": "organization"}
    assert valid_triples(services, user) == {(user, "lives_in", "Berlin"), (user, "works_at", "Acme")}
    assert {r["memory_id"] for r in services.sql.list_relations(Scope(user_id=user))} == {rows[0]["id"], rows[1]["id"]}
    assert state["graph_changes"] == {
        "added_entities": [{"source": user, "relationship": "lives_in", "destination": "Berlin"},
                           {"source": user, "relationship": "works_at", "destination": "Acme"}],
        "deleted_entities": [],
    }
    assert graph_edges(services, user) == {(user, "lives_in", "Berlin"): True, (user, "works_at", "Acme"): True}


def test_json_mode_keeps_chinese_and_tolerates_think_and_fences(graph_services):
    user = new_user()
    answer = ("<think>用户住在北京。</think>\n```json\n" + json.dumps({
        "entities": [{"entity": "我", "entity_type": "person"}, {"entity": "北京", "entity_type": "city"}],
        "relations": [{"source": "我", "relationship": "住在", "destination": "北京", "memory": 0}],
    }, ensure_ascii=False) + "\n```")
    llm = ScriptedModel(responses=[AIMessage(content=answer)])
    services = services_with(graph_services, llm, mode="json")
    _, state = add_memories(services, user, "我住在北京")
    assert len(llm.calls) == 1 and llm.calls[0]["tools"] == []
    assert "[memoryx-task: graph_extract]" in llm.calls[0]["messages"][0].content
    assert [(r["source"], r["relation"], r["destination"]) for r in state["relations"]] == [(user, "住在", "北京")]
    assert valid_triples(services, user) == {(user, "住在", "北京")}


def test_auto_mode_uses_json_for_a_model_without_tool_calling(graph_services):
    user = new_user()
    llm = ScriptedModel(tools_supported=False, responses=[AIMessage(content=json.dumps(
        {"entities": [], "relations": [{"source": "I", "relationship": "likes", "destination": "tea", "memory": 0}]}))])
    services = services_with(graph_services, llm, mode="auto")
    _, state = add_memories(services, user, "Likes tea")
    assert len(llm.calls) == 1 and llm.calls[0]["tools"] == []
    assert [(r["source"], r["relation"], r["destination"]) for r in state["relations"]] == [(user, "likes", "tea")]
    assert state["entities"] == [{"name": user, "entity_type": "person"}, {"name": "tea", "entity_type": "entity"}]


def test_auto_mode_falls_back_to_json_when_the_tool_call_fails(graph_services):
    user = new_user()
    llm = ScriptedModel(fail_with_tools=True, responses=[
        AIMessage(content=json.dumps({"relations": [{"source": "I", "relationship": "works_at", "destination": "Initech"}]}))])
    services = services_with(graph_services, llm, mode="auto")
    _, state = add_memories(services, user, "Works at Initech")
    assert [c["tools"] for c in llm.calls] == [["extract_entities", "establish_relationships"], []]
    assert valid_triples(services, user) == {(user, "works_at", "Initech")}


def test_tools_mode_without_tool_calling_is_a_clear_error(graph_services):
    user = new_user()
    llm = ScriptedModel(tools_supported=False, responses=[AIMessage(content="{}")])
    services = services_with(graph_services, llm, mode="tools")
    row = store_memory(services, user, "Likes tea")
    state = {"user_id": user, "trace_id": "trace-tools", "executed": [{"id": row["id"], "memory": row["memory"], "event": "ADD"}]}
    with pytest.raises(ModelOutputError) as err:
        extract_relations(state, runtime(services))
    assert "trace-tools" in str(err.value) and "GRAPH_EXTRACTION_MODE" in str(err.value)
    assert llm.calls == []


def test_malformed_tool_arguments_are_repaired_or_skipped(graph_services):
    user = new_user()
    broken = '{"relations": [{"source": "I", "relationship": "likes", "destination": "green tea"}, {"source": "I"},]}'
    llm = ScriptedModel(responses=[AIMessage(content="", invalid_tool_calls=[
        {"name": "establish_relationships", "args": broken, "id": "c1", "error": "bad json", "type": "invalid_tool_call"}],
        tool_calls=[tool_call("extract_entities", {"entities": [{"name": "green tea"}, "I", 42, {"entity": ""}]})])])
    services = services_with(graph_services, llm, mode="tools")
    _, state = add_memories(services, user, "Likes green tea")
    assert len(llm.calls) == 1
    assert [(r["source"], r["relation"], r["destination"]) for r in state["relations"]] == [(user, "likes", "green tea")]


def test_tool_calls_written_as_text_are_read(graph_services):
    user = new_user()
    text = ('<tool_call>{"name": "establish_relationships", "arguments": {"entities": '
            '[{"source": "I", "relationship": "LIVES_IN", "destination": "Oslo"}]}}</tool_call>')
    llm = ScriptedModel(responses=[AIMessage(content=text)])
    services = services_with(graph_services, llm, mode="tools")
    _, state = add_memories(services, user, "Lives in Oslo")
    assert len(llm.calls) == 1
    assert [(r["source"], r["relation"], r["destination"]) for r in state["relations"]] == [(user, "lives_in", "Oslo")]


def test_entities_only_answer_gets_one_relation_call(graph_services):
    user = new_user()
    llm = ScriptedModel(responses=[
        AIMessage(content="", tool_calls=[tool_call("extract_entities", {"entities": [
            {"entity": "I", "entity_type": "person"}, {"entity": "Rex", "entity_type": "animal"}]})]),
        AIMessage(content="", tool_calls=[tool_call("establish_relationships", {"relations": [
            {"source": "I", "relationship": "has_pet", "destination": "Rex"}]})]),
    ])
    services = services_with(graph_services, llm, mode="auto")
    _, state = add_memories(services, user, "Has a dog named Rex")
    assert [c["tools"] for c in llm.calls] == [["extract_entities", "establish_relationships"], ["establish_relationships"]]
    assert valid_triples(services, user) == {(user, "has_pet", "Rex")}
    assert {e["name"]: e["entity_type"] for e in state["entities"]} == {user: "person", "Rex": "animal"}


def test_json_mode_retries_once_then_fails_with_the_trace_id(graph_services):
    user = new_user()
    good = json.dumps({"relations": [{"source": "I", "relationship": "likes", "destination": "jazz"}]})
    llm = ScriptedModel(responses=[AIMessage(content="Sure! The user likes jazz."), AIMessage(content=good)])
    services = services_with(graph_services, llm, mode="json")
    _, state = add_memories(services, user, "Likes jazz")
    assert len(llm.calls) == 2
    assert "could not be used" in llm.calls[1]["messages"][-1].content
    assert valid_triples(services, user) == {(user, "likes", "jazz")}

    llm = ScriptedModel(responses=[AIMessage(content="no idea")])
    services = services_with(graph_services, llm, mode="json")
    row = store_memory(services, user, "Likes blues")
    state = {"user_id": user, "trace_id": "trace-json", "executed": [{"id": row["id"], "memory": row["memory"], "event": "ADD"}]}
    with pytest.raises(ModelOutputError, match="trace-json"):
        extract_relations(state, runtime(services))
    assert len(llm.calls) == 2


def test_nothing_changed_means_no_model_call(graph_services):
    user = new_user()
    llm = ScriptedModel(responses=[AIMessage(content="{}")])
    services = services_with(graph_services, llm)
    state = run_graph_steps(services, {"user_id": user, "executed": [{"id": "x", "memory": "Likes tea", "event": "NONE"}]})
    assert llm.calls == []
    assert state["relations"] == [] and state["graph_changes"] == {"added_entities": [], "deleted_entities": []}


def test_without_a_graph_store_the_steps_pass_through(graph_services):
    user = new_user()
    llm = ScriptedModel(responses=[AIMessage(content="{}")])
    services = services_with(graph_services, llm, graph=None)
    _, state = add_memories(services, user, "Lives in Rome")
    assert llm.calls == [] and state["graph_changes"] == {"added_entities": [], "deleted_entities": []}
    assert services.sql.list_entities(Scope(user_id=user)) == []
    # the run's switch does the same with a graph store present
    llm2 = ScriptedModel(responses=[AIMessage(content="{}")])
    _, state = add_memories(services_with(graph_services, llm2), user, "Lives in Rome", graph_enabled=False)
    assert llm2.calls == [] and state["relations"] == []


# --------------------------------------------------------------------------------------------- linking


def _link(services, user: str, relations: list[tuple], entities=(), **scope) -> dict:
    state = {"user_id": user, **scope, "entities": [{"name": n, "entity_type": t} for n, t in entities],
             "relations": [{"source": s, "relation": r, "destination": d, "memory_id": None} for s, r, d in relations]}
    return link_entities(state, runtime(services))["linked_entities"]


def _existing_entity(services, scope: Scope, name: str, entity_type: str = "entity") -> dict:
    row = services.sql.upsert_entity(scope=scope, name=name, entity_type=entity_type)
    services.projector.sync_entities([row["id"]])
    return row


def test_linking_by_exact_normalised_name(graph_services):
    user = new_user()
    berlin = _existing_entity(graph_services, Scope(user_id=user), "Berlin", "city")
    linked = _link(graph_services, user, [(user, "lives_in", "  BERLIN ")])
    assert linked[normalize_name("BERLIN")]["id"] == berlin["id"]
    assert linked[normalize_name(user)]["entity_type"] == "person"
    assert entity_names(graph_services, user) == {"Berlin", user}


def test_linking_by_embedding_similarity_with_one_embedding_batch(graph_services, monkeypatch):
    user = new_user()
    nyc = _existing_entity(graph_services, Scope(user_id=user), "New York City", "city")
    tea = _existing_entity(graph_services, Scope(user_id=user), "茶", "food")
    batches = []
    real = graph_services.embeddings.embed_documents

    class Spy:
        def embed_documents(self, texts):
            batches.append(list(texts))
            return real(texts)

        def __getattr__(self, name):
            return getattr(graph_services.embeddings, name)

    services = dataclasses.replace(graph_services, embeddings=Spy())
    linked = _link(services, user, [(user, "lives_in", "New York"), (user, "likes", "咖啡")])
    assert batches[0] == ["New York", "咖啡"], "names without an exact match are embedded in one batch"
    assert linked[normalize_name("New York")]["id"] == nyc["id"]  # cosine 0.95 >= 0.9
    # 咖啡/茶 score 0.90 with MiniLM but share no character: not the same entity
    assert linked[normalize_name("咖啡")]["id"] != tea["id"]
    assert entity_names(graph_services, user) == {"New York City", "茶", "咖啡", user}
    # the merge threshold comes from the run's context
    other = new_user()
    _existing_entity(graph_services, Scope(user_id=other), "New York City", "city")
    state = {"user_id": other, "entities": [], "relations": [{"source": other, "relation": "lives_in", "destination": "New York", "memory_id": None}]}
    linked = link_entities(state, runtime(graph_services, entity_merge_threshold=0.99))["linked_entities"]
    assert linked[normalize_name("New York")]["name"] == "New York"


def test_no_linking_across_scopes(graph_services):
    alice, bob = new_user(), new_user()
    alices_berlin = _existing_entity(graph_services, Scope(user_id=alice), "Berlin", "city")
    agent_oslo = _existing_entity(graph_services, Scope(user_id=alice, agent_id="helper"), "Oslo", "city")
    _existing_entity(graph_services, Scope(user_id=alice, agent_id="helper"), "Munich", "city")

    linked = _link(graph_services, bob, [(bob, "lives_in", "Berlin")])
    assert linked["berlin"]["id"] != alices_berlin["id"] and linked["berlin"]["user_id"] == bob

    # alice without the agent does not pick up the agent's entities, by name or by embedding
    linked = _link(graph_services, alice, [(alice, "visited", "Oslo"), (alice, "visited", "München")])
    assert linked["oslo"]["id"] != agent_oslo["id"] and linked["oslo"]["agent_id"] is None
    assert linked[normalize_name("München")]["agent_id"] is None
    # and the agent scope sees its own
    linked = _link(graph_services, alice, [(alice, "visited", "Oslo")], agent_id="helper")
    assert linked["oslo"]["id"] == agent_oslo["id"]


# ------------------------------------------------------------------------------------------- conflicts


def test_moved_from_berlin_to_paris_invalidates_the_old_edge(graph_services):
    user = new_user()
    first = ScriptedModel(responses=[AIMessage(content="", tool_calls=[tool_call("establish_relationships", {
        "relations": [{"source": "I", "relationship": "lives_in", "destination": "Berlin"},
                      {"source": "I", "relationship": "likes", "destination": "pizza"}]})])])
    add_memories(services_with(graph_services, first), user, "Lives in Berlin and likes pizza")
    assert len(first.calls) == 1, "no existing relation: no conflict call"

    second = ScriptedModel(responses=[
        AIMessage(content="", tool_calls=[tool_call("establish_relationships", {
            "relations": [{"source": "I", "relationship": "lives_in", "destination": "Paris"}]})]),
        AIMessage(content="", tool_calls=[
            tool_call("delete_graph_memory", {"source": user, "relationship": "lives_in", "destination": "Berlin"}),
            tool_call("delete_graph_memory", {"source": user, "relationship": "lives_in", "destination": "Paris"}),  # new: ignored
            tool_call("delete_graph_memory", {"source": user, "relationship": "owns", "destination": "a car"}),  # unknown: ignored
        ]),
    ])
    trace = str(uuid.uuid4())
    rows = [store_memory(graph_services, user, "Moved to Paris")]
    state = run_graph_steps(services_with(graph_services, second), {
        "user_id": user, "trace_id": trace, "executed": [{"id": rows[0]["id"], "memory": "Moved to Paris", "event": "ADD"}]})

    assert [c["tools"] for c in second.calls] == [["extract_entities", "establish_relationships"], ["delete_graph_memory"]]
    conflict_prompt = second.calls[1]["messages"][1].content
    assert f"{user} -- lives_in -- Berlin" in conflict_prompt and "Moved to Paris" in conflict_prompt
    assert conflict_prompt.index("lives_in -- Berlin") < conflict_prompt.index("likes -- pizza"), "same relation ranked first"
    assert valid_triples(graph_services, user, include_invalid=True) == {
        (user, "lives_in", "Berlin", "invalid"), (user, "lives_in", "Paris"), (user, "likes", "pizza")}
    old = [r for r in graph_services.sql.list_relations(Scope(user_id=user), include_invalid=True) if r["target"] == "Berlin"][0]
    assert old["invalidated_by"] == trace and old["invalidated_at"]
    new = [r for r in graph_services.sql.list_relations(Scope(user_id=user)) if r["target"] == "Paris"][0]
    assert new["memory_id"] == rows[0]["id"] and new["trace_id"] == trace
    assert state["graph_changes"] == {
        "added_entities": [{"source": user, "relationship": "lives_in", "destination": "Paris"}],
        "deleted_entities": [{"source": user, "relationship": "lives_in", "destination": "Berlin"}],
    }
    edges = graph_edges(graph_services, user)
    assert edges[(user, "lives_in", "Berlin")] is False and edges[(user, "lives_in", "Paris")] is True
    assert "Berlin" in entity_names(graph_services, user), "an outdated relation stays as history, with its entities"


def test_conflicts_json_fallback_and_idempotent_replay(graph_services):
    user = new_user()
    add_memories(services_with(graph_services, ScriptedModel(responses=[AIMessage(content="", tool_calls=[
        tool_call("establish_relationships", {"relations": [{"source": "I", "relationship": "works_at", "destination": "Acme"}]})])])),
        user, "Works at Acme")
    llm = ScriptedModel(tools_supported=False, responses=[
        AIMessage(content=json.dumps({"relations": [{"source": "I", "relationship": "works_at", "destination": "Globex"}]})),
        AIMessage(content='```json\n{"delete": [{"source": "I", "relationship": "Works At", "destination": "acme"}]}\n```'),
    ])
    services = services_with(graph_services, llm, mode="auto")
    row = store_memory(services, user, "Works at Globex")
    state = {"user_id": user, "trace_id": str(uuid.uuid4()), "executed": [{"id": row["id"], "memory": row["memory"], "event": "ADD"}]}
    done = run_graph_steps(services, state)
    assert len(llm.calls) == 2 and all(c["tools"] == [] for c in llm.calls)
    assert "[memoryx-task: graph_delete]" in llm.calls[1]["messages"][0].content
    assert done["graph_changes"]["deleted_entities"] == [{"source": user, "relationship": "works_at", "destination": "Acme"}]
    assert valid_triples(graph_services, user) == {(user, "works_at", "Globex")}

    # replaying the last step (a crash after its writes) changes nothing and adds no duplicate
    replay = ScriptedModel(responses=[AIMessage(content="", tool_calls=[])])
    again = resolve_graph_conflicts(done, runtime(services_with(graph_services, replay)))
    assert again["graph_changes"]["added_entities"] == []
    assert len(graph_services.sql.list_relations(Scope(user_id=user))) == 1


def test_update_delta_and_delete_cascade_seed_example(graph_services):
    """Seed 000 §5.4/§5.5: 张三 works in 北京 and likes 咖啡; UPDATE and DELETE cascade to the graph."""
    user = new_user()
    llm = CountingOffline()
    services = services_with(graph_services, llm)
    (work, coffee), state = add_memories(services, user, "张三在北京阿里云工作", "张三喜欢喝咖啡")
    assert llm.calls == [["extract_entities", "establish_relationships"]]
    assert valid_triples(services, user) == {("张三", "工作于", "北京阿里云"), ("张三", "喜欢", "咖啡")}
    assert {(r["relation"], r["memory_id"]) for r in services.sql.list_relations(Scope(user_id=user))} == {
        ("工作于", work["id"]), ("喜欢", coffee["id"])}

    # §5.5 UPDATE: the memory's old relation is gone, its orphan entity removed, the new one added
    services.sql.update_memory(work["id"], text="张三在上海腾讯工作")
    state = run_graph_steps(services, {"user_id": user, "executed": [
        {"id": work["id"], "memory": "张三在上海腾讯工作", "event": "UPDATE", "previous_memory": "张三在北京阿里云工作"}]})
    assert valid_triples(services, user) == {("张三", "工作于", "上海腾讯"), ("张三", "喜欢", "咖啡")}
    assert state["graph_changes"]["deleted_entities"] == [{"source": "张三", "relationship": "工作于", "destination": "北京阿里云"}]
    assert entity_names(services, user) == {"张三", "上海腾讯", "咖啡"}
    assert "北京阿里云" not in entity_vector_names(services, user, "北京阿里云")

    # §5.4 DELETE: 北京 goes (orphan), 张三 stays (still likes 咖啡)
    calls_before = len(llm.calls)
    services.sql.delete_memory(work["id"])
    state = run_graph_steps(services, {"user_id": user, "executed": [{"id": work["id"], "memory": "张三在上海腾讯工作", "event": "DELETE"}]})
    assert len(llm.calls) == calls_before, "a DELETE cascade needs no model call"
    assert state["graph_changes"] == {"added_entities": [], "deleted_entities": [
        {"source": "张三", "relationship": "工作于", "destination": "上海腾讯"}]}
    assert valid_triples(services, user) == {("张三", "喜欢", "咖啡")}
    assert entity_names(services, user) == {"张三", "咖啡"}
    edges = graph_edges(services, user)
    assert edges == {("张三", "喜欢", "咖啡"): True}, "orphan nodes (and their edges) are gone from FalkorDB"
    assert "上海腾讯" not in entity_vector_names(services, user, "上海腾讯")

    # deleting the last memory removes 张三 and 咖啡 too
    services.sql.delete_memory(coffee["id"])
    run_graph_steps(services, {"user_id": user, "executed": [{"id": coffee["id"], "memory": "张三喜欢喝咖啡", "event": "DELETE"}]})
    assert entity_names(services, user) == set() and graph_edges(services, user) == {}


def test_offline_model_end_to_end_move_and_retraction(graph_services):
    """The offline model: a move replaces lives_in (conflict tool call), a retraction drops a like."""
    user = new_user()
    llm = CountingOffline()
    services = services_with(graph_services, llm)
    add_memories(services, user, "User lives in Berlin", "User likes tea", "User likes coffee")
    assert valid_triples(services, user) == {(user, "lives_in", "Berlin"), (user, "likes", "tea"), (user, "likes", "coffee")}
    llm.calls.clear()

    _, state = add_memories(services, user, "User moved to Paris", "User no longer likes tea")
    assert llm.calls == [["extract_entities", "establish_relationships"], ["delete_graph_memory"]], "at most 2 graph calls per add"
    assert valid_triples(services, user) == {(user, "lives_in", "Paris"), (user, "likes", "coffee")}
    assert sorted(d["destination"] for d in state["graph_changes"]["deleted_entities"]) == ["Berlin", "tea"]
    assert entity_names(services, user) == {user, "Paris", "coffee", "Berlin", "tea"}  # outdated ones kept as history
    edges = graph_edges(services, user)
    assert edges[(user, "likes", "tea")] is False and edges[(user, "lives_in", "Berlin")] is False


def test_offline_model_json_mode_chinese(graph_services):
    user = new_user()
    llm = CountingOffline()
    services = services_with(graph_services, llm, mode="json")
    add_memories(services, user, "我住在北京", "我在阿里云工作")
    llm.calls.clear()
    _, state = add_memories(services, user, "我搬到了上海")
    assert llm.calls == [[], []], "JSON mode: no tools bound; one extraction and one conflict call"
    assert valid_triples(services, user) == {(user, "住在", "上海"), (user, "工作于", "阿里云")}
    assert state["graph_changes"]["deleted_entities"] == [{"source": user, "relationship": "住在", "destination": "北京"}]


def test_assistant_memories_in_the_agent_scope_stay_out_of_the_users_graph(graph_services):
    user = new_user()
    llm = CountingOffline()
    services = services_with(graph_services, llm)
    mine = store_memory(services, user, "User likes tea", agent_id="helper")
    agents = services.sql.insert_memory(scope=Scope(agent_id="helper"), text="User likes jazz")  # the agent's own
    state = run_graph_steps(services, {"user_id": user, "agent_id": "helper", "executed": [
        {"id": mine["id"], "memory": mine["memory"], "event": "ADD"},
        {"id": agents["id"], "memory": agents["memory"], "event": "ADD"}]})
    assert [r["destination"] for r in state["relations"]] == ["tea"]
    assert {(r["target"], r["agent_id"]) for r in services.sql.list_relations(Scope(user_id=user, agent_id="helper"))} == {("tea", "helper")}


def test_an_entity_removed_by_a_concurrent_run_is_recreated_before_its_relation(graph_services):
    user = new_user()
    llm = CountingOffline()
    services = services_with(graph_services, llm)
    row = store_memory(services, user, "User lives in Lima")
    rt = runtime(services)
    state = {"user_id": user, "trace_id": str(uuid.uuid4()), "executed": [{"id": row["id"], "memory": row["memory"], "event": "ADD"}]}
    state |= extract_relations(state, rt)
    state |= link_entities(state, rt)
    lima = state["linked_entities"]["lima"]
    services.sql.delete_entities([lima["id"]])  # another run found it orphaned in between
    state |= resolve_graph_conflicts(state, rt)
    assert valid_triples(services, user) == {(user, "lives_in", "Lima")}
    assert [e["id"] for e in services.sql.list_entities(Scope(user_id=user)) if e["name"] == "Lima"] == [lima["id"]]
    assert graph_edges(services, user) == {(user, "lives_in", "Lima"): True}


def test_concurrent_graph_steps_for_one_user(graph_services):
    import threading

    user = new_user()
    services = services_with(graph_services, OfflineChatModel())
    foods = ["tea", "coffee", "pizza", "sushi", "ramen", "tacos"]
    errors = []

    def worker(food: str) -> None:
        try:
            add_memories(services, user, f"User likes {food}")
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(f,)) for f in foods]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    assert valid_triples(services, user) == {(user, "likes", f) for f in foods}
    assert sorted(e["name"] for e in services.sql.list_entities(Scope(user_id=user))) == sorted(foods + [user])


def test_unusable_conflict_answers_fail_the_step_with_nothing_written(graph_services):
    user = new_user()
    add_memories(services_with(graph_services, CountingOffline()), user, "User lives in Quito")
    before = valid_triples(graph_services, user, include_invalid=True)
    llm = ScriptedModel(responses=[
        AIMessage(content=json.dumps({"relations": [{"source": "I", "relationship": "lives_in", "destination": "Lima"}]})),
        AIMessage(content="I would delete the Quito one."),
        AIMessage(content="Really, the Quito one."),
    ])
    services = services_with(graph_services, llm, mode="json")
    row = store_memory(services, user, "Lives in Lima")
    state = {"user_id": user, "trace_id": "trace-conflict", "executed": [{"id": row["id"], "memory": row["memory"], "event": "ADD"}]}
    rt = runtime(services)
    state |= extract_relations(state, rt)
    state |= link_entities(state, rt)
    with pytest.raises(ModelOutputError, match="trace-conflict"):
        resolve_graph_conflicts(state, rt)
    assert len(llm.calls) == 3, "extraction, then the conflict call and its one retry"
    assert valid_triples(graph_services, user, include_invalid=True) == before
