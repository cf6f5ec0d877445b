"""Agent-created memories: create_memory, link_memories, update_importance and search_memories
with the scope bound by the caller, never by the model."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime, timezone

import pytest

from memoryx.api.async_memory import AsyncMemory
from memoryx.api.memory import Memory
from memoryx.api.tools import make_memory_tools, tool_schema
from memoryx.errors import ScopeError
from tests.support import make_services

SCOPE_WORDS = {"user_id", "agent_id", "run_id", "group_id", "memoryx_run_id", "config"}


@pytest.fixture(scope="module")
def services(tmp_path_factory):
    s = make_services(tmp_path_factory.mktemp("agent-tools"))
    yield s
    s.close()


@pytest.fixture(scope="module")
def mem(services):
    m = Memory(services.settings, services=services)
    yield m


def _tools(memory, **scope):
    return {t.name: t for t in make_memory_tools(memory, **scope)}


def _id(answer: str) -> str:
    return re.search(r"\[([0-9a-f-]{36})\]", answer).group(1)


def test_the_model_never_sees_a_scope(mem):
    tools = _tools(mem, user_id="amy")
    assert {"create_memory", "link_memories", "update_importance", "search_memories"} <= set(tools)
    for tool in tools.values():
        assert not SCOPE_WORDS & set(tool_schema(tool).get("properties", {})), tool.name
        assert tool.description


def test_create_link_rate_and_search(mem):
    tools = _tools(mem, user_id="amy")
    today = datetime.now(timezone.utc).date().isoformat()
    rice = tools["create_memory"].invoke({"subject": "我", "memory_type": "事件", "topic": "吃饭", "object": "白米饭",
                                          "attributes": {"时间": "今天", "地点": "食堂"}, "importance": 0.3})
    assert rice.startswith("Created") and f"今天（{today}）" in rice
    row = mem.get(_id(rice), user_id="amy")
    assert row["memory"].startswith("用户吃饭白米饭") and row["memory_type"] == "episodic"
    assert row["metadata"]["kind"] == "event" and row["metadata"]["time_expression"] == "今天"
    assert row["valid_at"].startswith(today) and row["importance"] == pytest.approx(0.3)

    sad = _id(tools["create_memory"].invoke({"subject": "我", "memory_type": "事实", "topic": "情绪",
                                             "object": "不开心", "importance": 0.5}))
    broke = _id(tools["create_memory"].invoke({"subject": "我", "memory_type": "事件", "topic": "摔东西",
                                               "importance": 0.5}))
    assert tools["create_memory"].invoke({"subject": "我", "memory_type": "事件", "topic": "摔东西"}).startswith(
        "Already known")
    assert "Linked" in tools["link_memories"].invoke({"source_memory_description": sad, "target_memory_description": broke, "relation": "导致"})
    assert "Importance" in tools["update_importance"].invoke({"memory_id": broke, "importance": 0.9})
    assert mem.get(broke, user_id="amy")["importance"] == pytest.approx(0.9)

    # an event search finds 摔东西 and, one hop away through the link, the mood that caused it
    found = tools["search_memories"].invoke({"query": "摔东西", "memory_types": ["事件"], "expand_depth": 1})
    assert f"[{broke}]" in found and f"link: [{sad}] -causes-> [{broke}]" in found and "不开心" in found
    # only facts: the events stay out
    facts = tools["search_memories"].invoke({"query": "情绪 不开心", "memory_types": ["fact"], "expand_depth": 0})
    assert f"[{sad}]" in facts and f"[{broke}]" not in facts and "link:" not in facts
    # a time range on the event time: nothing happened in 2001
    old = tools["search_memories"].invoke({"query": "吃饭", "time_range": {"start": "2001-01-01", "end": "2002-01-01"}})
    assert old == "No matching memories."
    assert "Could not create" in tools["create_memory"].invoke({"subject": "我", "memory_type": "dream", "topic": "飞"})


def test_ids_of_another_scope_are_not_found(mem):
    mine = _tools(mem, user_id="bob")
    theirs = _tools(mem, user_id="eve")
    a = _id(mine["create_memory"].invoke({"subject": "I", "memory_type": "fact", "topic": "likes", "object": "tea"}))
    b = _id(theirs["create_memory"].invoke({"subject": "I", "memory_type": "fact", "topic": "likes", "object": "jazz"}))
    assert "not found" in mine["link_memories"].invoke({"source_memory_description": a, "target_memory_description": b, "relation": "related"})
    assert "not found" in mine["update_importance"].invoke({"memory_id": b, "importance": 1.0})
    assert mem.get(b, user_id="eve")["importance"] == pytest.approx(0.5)
    assert "jazz" not in mine["search_memories"].invoke({"query": "likes jazz"})


def test_scope_from_the_run_config(mem):
    tools = _tools(mem)
    config = {"configurable": {"user_id": "cat"}}
    made = tools["create_memory"].invoke({"subject": "I", "memory_type": "opinion", "topic": "thinks",
                                          "object": "rain is gloomy"}, config=config)
    assert mem.get(_id(made), user_id="cat")["metadata"]["kind"] == "opinion"
    with pytest.raises(ScopeError):
        tools["create_memory"].invoke({"subject": "I", "memory_type": "fact", "topic": "x"})


def test_async_memory_tools(services):
    async def run() -> tuple[str, str]:
        amem = AsyncMemory(services.settings, services=services)
        tools = {t.name: t for t in make_memory_tools(amem, user_id="dan")}
        made = await tools["create_memory"].ainvoke({"subject": "I", "memory_type": "event", "topic": "visited",
                                                     "object": "Kyoto", "attributes": {"when": "last week"}})
        found = await tools["search_memories"].ainvoke({"query": "Kyoto", "memory_types": ["event"]})
        return made, found

    made, found = asyncio.run(run())
    assert made.startswith("Created") and "last week (week of" in made
    assert _id(made) in found


def test_link_by_description_finds_the_memories_and_asks_when_ambiguous(tmp_path):
    with Memory(data_dir=tmp_path / "d", graph_backend="none") as m:
        ids = {t: m.add(t, user_id="liu", infer=False)["results"][0]["id"]
               for t in ("我今天不开心", "我摔了东西", "I went to Paris in May", "I went to Paris in June")}
        tools = {t.name: t for t in make_memory_tools(m, user_id="liu")}
        link = tools["link_memories"]
        done = link.invoke({"source_memory_description": "我今天不开心", "target_memory_description": "摔东西",
                            "relation": "导致"})
        assert done.startswith("Linked"), done
        [written] = m.services.sql.memory_links([ids["我今天不开心"]])
        assert (written["source_id"], written["target_id"], written["relation"]) == \
            (ids["我今天不开心"], ids["我摔了东西"], "causes")
        # "my trip to Paris" fits both trips: nothing is linked, the candidates come back
        asked = link.invoke({"source_memory_description": "my trip to Paris", "target_memory_description": "摔东西",
                             "relation": "related"})
        assert asked.startswith("Not linked yet") and "Which one?" in asked
        assert ids["I went to Paris in May"] in asked and ids["I went to Paris in June"] in asked
        assert len(m.services.sql.memory_links([ids["I went to Paris in May"], ids["I went to Paris in June"]])) == 0
        # the id from the question settles it
        settled = link.invoke({"source_memory_description": ids["I went to Paris in June"],
                               "target_memory_description": "摔东西", "relation": "related"})
        assert settled.startswith("Linked") and "Paris in June" in settled
        nothing = link.invoke({"source_memory_description": "a quantum physics lecture",
                               "target_memory_description": "摔东西", "relation": "related"})
        assert "not found" in nothing


def test_add_takes_type_and_importance_and_forget_a_reason(tmp_path):
    with Memory(data_dir=tmp_path / "d", graph_backend="none") as m:
        tools = {t.name: t for t in make_memory_tools(m, user_id="una", structured=False)}
        assert {"memory_type", "importance"} <= set(tool_schema(tools["add_memory"])["properties"])
        said = tools["add_memory"].invoke({"content": "I had a sandwich for lunch", "memory_type": "episodic",
                                           "importance": 0.2})
        assert said.startswith("ADD"), said
        [row] = m.get_all(user_id="una")["results"]
        assert (row["memory_type"], row["importance"]) == ("episodic", pytest.approx(0.2))
        assert "Could not remember" in tools["add_memory"].invoke({"content": "x", "importance": 7})
        gone = tools["forget_memory"].invoke({"memory_id": row["id"], "reason": "privacy"})
        assert gone.startswith("Forgot")
        forgets = [j for j in m.list_judgments(user_id="una") if j.get("operation_type") == "FORGET"]
        assert forgets and "privacy" in forgets[0]["reasoning"]
