"""The MCP tools as the seeds give them, through the SDK's own client over streamable HTTP: memory_add with a
memory type and an importance, memory_forget with a reason kept in the judgment log (and undone by rollback),
memory_link naming memories by description and asking back when one fits several."""

from __future__ import annotations

import pytest

from memoryx import Memory
from memoryx.server.app import create_app
from tests.server.test_mcp import _http, _text
from tests.support import ServerThread, shared_embeddings

pytestmark = pytest.mark.anyio
KEYS = {"key-ann": ["ann"]}


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("mcp-tools"), graph_backend="none", api_keys=KEYS,
                embeddings=shared_embeddings()) as m:
        with ServerThread(create_app(memory=m)) as srv:
            yield m, srv.url


async def test_add_takes_type_and_importance_forget_keeps_its_reason(served):
    m, url = served
    async with _http(url, "key-ann") as client:
        schema = {t.name: t for t in (await client.list_tools()).tools}["memory_add"].input_schema
        assert {"memory_type", "importance"} <= set(schema["properties"])
        added = await client.call_tool("memory_add", {"messages": "I had a sandwich for lunch.",
                                                      "memory_type": "episodic", "importance": 0.2})
        assert not added.is_error, _text(added)
        [item] = [r for r in added.structured_content["results"] if r["event"] == "ADD"]
        row = m.get(item["id"])
        assert (row["memory_type"], row["importance"]) == ("episodic", pytest.approx(0.2))
        assert row["importance_factors"]["given_by"] == "api"
        bad = await client.call_tool("memory_add", {"messages": "x y z", "importance": 3})
        assert bad.is_error

        forgot = await client.call_tool("memory_forget", {"memory_id": item["id"], "reason": "the user asked"})
        assert not forgot.is_error, _text(forgot)
        trace = forgot.structured_content["trace_id"]
        record = m.judgments(trace)
        assert record["operation_type"] == "FORGET" and "the user asked" in record["reasoning"]
        assert record["parsed_operations"][0]["id"] == item["id"]
        why = [j for j in m.explain(item["id"], user_id="ann")["judgments"] if j["trace_id"] == trace]
        assert why and why[0]["reason"] == "the user asked"
        m.rollback(trace)  # a forget is undone like every run
        assert m.get(item["id"])["memory"] == row["memory"]


async def test_link_by_description_and_a_question_when_ambiguous(served):
    m, url = served
    for text in ("I was unhappy today", "I broke a plate", "I went to Paris in May", "I went to Paris in June"):
        m.add(text, user_id="ann", infer=False)
    async with _http(url, "key-ann") as client:
        linked = await client.call_tool("memory_link", {"source": "unhappy today", "target": "broke a plate",
                                                        "relation": "led to"})
        assert not linked.is_error, _text(linked)
        out = linked.structured_content
        assert out["status"] == "linked" and out["link"]["relation"] == "causes"
        assert (out["source"]["memory"], out["target"]["memory"]) == ("I was unhappy today", "I broke a plate")
        asked = await client.call_tool("memory_link", {"source": "my trip to Paris", "target": "broke a plate",
                                                       "relation": "related"})
        assert not asked.is_error and asked.structured_content["status"] == "ask"
        assert {c["memory"] for c in asked.structured_content["source"]} == \
            {"I went to Paris in May", "I went to Paris in June"}
