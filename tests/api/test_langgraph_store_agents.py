"""The store's real consumers, with no code of ours beyond `store=MemoryXStore(...)`: LangGraph's prebuilt ReAct
agent with LangMem's manage and search tools (driven by a scripted tool-calling chat model), a StateGraph whose
nodes use `runtime.store` and `get_store()`, and LangMem's tools called on their own."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import create_react_agent
from langgraph.runtime import Runtime
from langmem import create_manage_memory_tool, create_search_memory_tool

from memoryx import Memory, MemoryXStore
from tests.support import shared_embeddings


class ScriptedToolModel(GenericFakeChatModel):
    """Answers with the scripted messages in order; tool calls included. bind_tools keeps the script (the fake
    model of langchain-core does not bind tools itself)."""

    def bind_tools(self, tools, **kwargs):
        return self


def _script(*messages: AIMessage) -> ScriptedToolModel:
    return ScriptedToolModel(messages=iter(messages))


def _call(name: str, **args) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{uuid.uuid4().hex[:6]}"}])


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("store-agents"), graph_backend="none",
                embeddings=shared_embeddings()) as m:
        yield m


@pytest.fixture
def user():
    return f"u-{uuid.uuid4().hex[:8]}"


def _tools():
    namespace = ("memories", "{langgraph_user_id}")
    return [create_manage_memory_tool(namespace=namespace), create_search_memory_tool(namespace=namespace)]


def _tool_outputs(result: dict) -> list[str]:
    return [m.content for m in result["messages"] if isinstance(m, ToolMessage)]


def test_a_react_agent_with_langmem_tools_remembers_and_recalls(memory, user):
    store = MemoryXStore(memory)
    config = {"configurable": {"langgraph_user_id": user}}

    writer = create_react_agent(_script(_call("manage_memory", content="Sam is allergic to peanuts", action="create"),
                                        AIMessage(content="Noted.")), tools=_tools(), store=store)
    out = writer.invoke({"messages": [{"role": "user", "content": "Remember: I'm allergic to peanuts."}]}, config)
    [created] = _tool_outputs(out)
    key = created.split()[-1]  # "created memory <uuid>"
    assert store.get(("memories", user), key).value == {"content": "Sam is allergic to peanuts"}

    # another conversation, asynchronously (abatch): the search tool finds it through MemoryX's recall
    reader = create_react_agent(_script(_call("search_memory", query="food allergies"),
                                        AIMessage(content="You are allergic to peanuts.")), tools=_tools(), store=store)
    out = asyncio.run(reader.ainvoke({"messages": [{"role": "user", "content": "What can't I eat?"}]}, config))
    [found] = _tool_outputs(out)
    hits = json.loads(found)
    assert hits[0]["key"] == key and hits[0]["value"]["content"] == "Sam is allergic to peanuts"
    assert hits[0]["score"] is not None

    # the agent corrects it, then forgets it; MemoryX keeps the history of the key's memory
    fixer = create_react_agent(_script(
        _call("manage_memory", content="Sam is allergic to peanuts and shellfish", action="update", id=key),
        AIMessage(content="Updated."),
        _call("manage_memory", action="delete", id=key), AIMessage(content="Forgotten.")),
        tools=_tools(), store=store)
    fixer.invoke({"messages": [{"role": "user", "content": "Also shellfish."}]}, config)
    [mem] = [m for m in memory.get_all(user_id=user)["results"]]
    assert mem["memory"] == "Sam is allergic to peanuts and shellfish"
    fixer.invoke({"messages": [{"role": "user", "content": "Forget my allergies."}]}, config)
    assert store.get(("memories", user), key) is None
    assert [h["event"] for h in memory.history(mem["id"])] == ["ADD", "UPDATE", "DELETE"]


def test_langchains_create_agent_with_langmem_tools(memory, user):
    # create_react_agent's successor (langchain.agents.create_agent) takes the same store
    from langchain.agents import create_agent

    store = MemoryXStore(memory)
    config = {"configurable": {"langgraph_user_id": user}}
    create_agent(_script(_call("manage_memory", content="Prefers trains to planes", action="create"),
                         AIMessage(content="Noted.")), tools=_tools(), store=store).invoke(
        {"messages": [{"role": "user", "content": "I'd rather take the train."}]}, config)
    out = create_agent(_script(_call("search_memory", query="how do I like to travel?"), AIMessage(content="By train.")),
                       tools=_tools(), store=store).invoke(
        {"messages": [{"role": "user", "content": "Book me a trip."}]}, config)
    [found] = _tool_outputs(out)
    assert json.loads(found)[0]["value"]["content"] == "Prefers trains to planes"


def test_langmem_tools_on_their_own(memory, user):
    store = MemoryXStore(memory)
    manage = create_manage_memory_tool(namespace=("memories", user), store=store)
    search = create_search_memory_tool(namespace=("memories", user), store=store)
    for text in ("Prefers window seats on flights", "Works night shifts at a bakery", "Has two cats"):
        manage.invoke({"content": text, "action": "create"})
    hits = json.loads(search.invoke({"query": "travel preferences"}))
    assert hits[0]["value"]["content"] == "Prefers window seats on flights"
    assert len(hits) == 3 and hits[0]["namespace"] == ["memories", user]
    paged = json.loads(search.invoke({"query": "travel preferences", "limit": 1, "offset": 1}))
    assert len(paged) == 1 and paged[0]["key"] == hits[1]["key"]


class State(TypedDict, total=False):
    user: str
    text: str
    question: str
    answer: str


def remember(state: State, runtime: Runtime) -> dict:
    runtime.store.put(("memories", state["user"]), "fact", {"content": state["text"]})
    return {}


def recall(state: State) -> dict:
    items = get_store().search(("memories", state["user"]), query=state["question"], limit=1)
    return {"answer": items[0].value["content"] if items else ""}


def test_a_state_graph_uses_the_store_through_runtime_and_get_store(memory, user):
    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    graph = builder.compile(store=MemoryXStore(memory))
    out = graph.invoke({"user": user, "text": "The spare key is under the blue flowerpot",
                        "question": "where is the spare key?"})
    assert out["answer"] == "The spare key is under the blue flowerpot"
    # and it is a MemoryX memory: MemoryX's own search (and its chat graph) recall it
    assert "flowerpot" in memory.search("where did I hide the key?", user_id=user)["results"][0]["memory"]


def test_the_served_notes_graph_keeps_notes_in_the_store_it_is_given(memory, user):
    from memoryx.graphs.notes import builder

    graph = builder.compile(store=MemoryXStore(memory))
    saved = graph.invoke({"user_id": user, "note": "Dentist appointment moved to Friday 3pm"})["saved"]
    found = graph.invoke({"user_id": user, "query": "when is the dentist?"})["found"]
    assert found[0] == {"key": saved, "content": "Dentist appointment moved to Friday 3pm", "score": found[0]["score"]}
    assert "Friday" in memory.search("dentist", user_id=user)["results"][0]["memory"]
    with pytest.raises(ValueError, match="needs a store"):
        builder.compile().invoke({"user_id": user, "note": "x"})
