"""The chatbot graph (recall -> respond -> remember, with the search and add graphs as subgraphs) and the
agent memory tools (scope injected, never chosen by the model)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from memoryx import Memory, ScopeError
from memoryx.api.tools import make_memory_tools, tool_schema
from memoryx.graphs.chat import ChatContext, build_chat_graph
from memoryx.graphs.chat import graph as default_chat_graph


@pytest.fixture(scope="module")
def mem(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("chat-data")) as m:
        yield m


def _user() -> str:
    return f"chat-{uuid.uuid4().hex[:8]}"


class RecordingModel(GenericFakeChatModel):
    """Any chat model: records what it was sent and answers from a fixed list."""

    seen: list = []

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any):
        type(self).seen.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def test_offline_chat_recalls_and_remembers(mem):
    user = _user()
    ctx = ChatContext(services=mem.services)
    first = default_chat_graph.invoke({"messages": [HumanMessage("I live in Ghent and I love waffles.")], "user_id": user},
                                      context=ctx)
    assert isinstance(first["messages"][-1], AIMessage)
    stored = [r["memory"] for r in mem.get_all(user_id=user)["results"]]
    assert any("Ghent" in s for s in stored), stored  # remembered after answering
    second = default_chat_graph.invoke({"messages": [HumanMessage("Where do I live?")], "user_id": user}, context=ctx)
    assert "Ghent" in second["messages"][-1].content  # recalled before answering
    assert any("Ghent" in m["memory"] for m in second["memories"])
    assert second["last_trace_id"]


def test_any_chat_model_gets_memories_in_the_system_prompt(mem):
    user = _user()
    mem.add("I am allergic to shellfish.", user_id=user)
    RecordingModel.seen = []
    model = RecordingModel(messages=iter([AIMessage("Then avoid the paella."), AIMessage("You're welcome!")]))
    bot = build_chat_graph(model, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    ctx = ChatContext(services=mem.services, remember=False)
    out = bot.invoke({"messages": [HumanMessage("Any food I should be careful with?")], "user_id": user}, config, context=ctx)
    assert out["messages"][-1].content == "Then avoid the paella."
    system = RecordingModel.seen[0][0]
    assert isinstance(system, SystemMessage) and "shellfish" in system.content
    # the conversation continues on the same thread (checkpointer), nothing new stored with remember=False
    before = len(mem.get_all(user_id=user)["results"])
    out = bot.invoke({"messages": [HumanMessage("Thanks")]}, {**config, "configurable": {**config["configurable"], "user_id": user}}, context=ctx)
    assert [m.content for m in out["messages"]][-1] == "You're welcome!"
    assert len(out["messages"]) == 4
    assert len(mem.get_all(user_id=user)["results"]) == before


def test_chat_needs_a_scope(mem):
    with pytest.raises(ScopeError):
        default_chat_graph.invoke({"messages": [HumanMessage("hi")]}, context=ChatContext(services=mem.services))


def test_chat_graph_embeds_memory_subgraphs_in_studio_view():
    nodes = set(default_chat_graph.get_graph().nodes)
    assert {"recall", "respond", "remember"} <= nodes


# --- tools -------------------------------------------------------------------------------------------------


def test_tools_scope_is_never_in_the_model_schema(mem):
    tools = make_memory_tools(mem, user_id="alice")
    assert [t.name for t in tools] == ["add_memory", "search_memory", "update_memory", "forget_memory",
                                       # the agent-managed memory tools, on by default (structured=True)
                                       "create_memory", "link_memories", "update_importance", "search_memories"]
    assert [t.name for t in make_memory_tools(mem, user_id="alice", structured=False)] == [
        "add_memory", "search_memory", "update_memory", "forget_memory"]
    for t in tools:
        props = tool_schema(t).get("properties", {})
        assert not {"user_id", "agent_id", "run_id", "config"} & set(props), (t.name, props)


def test_tools_bound_scope(mem):
    user, other = _user(), _user()
    tools = {t.name: t for t in make_memory_tools(mem, user_id=user)}
    assert "ADD" in tools["add_memory"].invoke({"content": "I live in Porto."})
    found = tools["search_memory"].invoke({"query": "where do I live"})
    assert "Porto" in found
    memory_id = found.split("]")[0].lstrip("[")
    assert "Updated" in tools["update_memory"].invoke({"memory_id": memory_id, "content": "Lives in Braga"})
    assert mem.get(memory_id)["memory"] == "Lives in Braga"

    # another user's memory id: not reachable through these tools
    theirs = mem.add("I live in Faro.", user_id=other)["results"][0]["id"]
    assert "Could not" in tools["forget_memory"].invoke({"memory_id": theirs})
    assert "Could not" in tools["update_memory"].invoke({"memory_id": theirs, "content": "x"})
    assert mem.get(theirs)["memory"] != "x"
    assert "Forgot" in tools["forget_memory"].invoke({"memory_id": memory_id})
    assert mem.get_all(user_id=user)["results"] == []


def test_tools_scope_from_config(mem):
    user = _user()
    tools = {t.name: t for t in make_memory_tools(mem)}
    cfg = {"configurable": {"user_id": user}}
    tools["add_memory"].invoke({"content": "I love cycling."}, config=cfg)
    assert "cycling" in tools["search_memory"].invoke({"query": "sport"}, config=cfg)
    with pytest.raises(ScopeError):
        tools["search_memory"].invoke({"query": "sport"})
    # a tool call that carries a user_id anyway is not obeyed: the scope comes from the config
    other = _user()
    mem.add("I love chess.", user_id=other)
    res = tools["search_memory"].invoke({"query": "chess", "user_id": other}, config=cfg)
    assert "chess" not in res


def test_tools_in_a_prebuilt_agent(mem):
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    user = _user()
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(make_memory_tools(mem, user_id=user)))
    builder.add_edge(START, "tools")
    agent = builder.compile()
    call = AIMessage("", tool_calls=[{"name": "add_memory", "args": {"content": "I live in Lyon."}, "id": "c1"}])
    assert "Lyon" in agent.invoke({"messages": [call]})["messages"][-1].content
    call = AIMessage("", tool_calls=[{"name": "search_memory", "args": {"query": "where do I live"}, "id": "c2"}])
    assert "Lyon" in agent.invoke({"messages": [call]})["messages"][-1].content
    assert any("Lyon" in r["memory"] for r in mem.get_all(user_id=user)["results"])
