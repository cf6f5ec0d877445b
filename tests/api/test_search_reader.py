"""The CLI's search (`SearchReader`: the search steps run without LangGraph, the chat models never built) ranks
as `Memory.search` does, over the same embedded stores, and loads neither LangGraph nor LangChain's chat-model
stack."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memoryx.api.memory import Memory
from memoryx.api.searching import SearchReader
from memoryx.settings import Settings

QUERIES = ["where do I live?", "what does Alice like", "jazz", "我喜欢什么", "who is my manager", "Acme"]


def _fill(data: Path) -> None:
    with Memory(data_dir=data) as m:
        m.add("I live in Berlin and I work at Acme. My manager is Priya.", user_id="alice")
        m.add("I like jazz and hiking.", user_id="alice")
        m.add("我喜欢喝绿茶", user_id="alice")
        m.add("Bob lives in Paris.", user_id="bob", infer=False)
    with Memory(data_dir=data) as m:  # a second open settles what start-up recovery replays into the projections
        m.search("warm", user_id="alice")


def _ranking(result: dict) -> list[tuple]:
    return [(r["id"], r["memory"], round(r["score"], 4)) for r in result["results"]]


def test_search_reader_ranks_as_memory_search(tmp_path):
    data = tmp_path / "data"
    _fill(data)
    with Memory(data_dir=data) as m:
        expected = {q: m.search(q, user_id="alice") for q in QUERIES}
        expected_limited = m.search("Berlin", user_id="alice", limit=1, mode="keyword")
    with SearchReader(Settings(data_dir=data)) as reader:
        for q in QUERIES:
            got = reader.search(q, user_id="alice")
            assert _ranking(got) == _ranking(expected[q]), q
            assert got["relations"] == expected[q]["relations"], q
        assert _ranking(reader.search("Berlin", user_id="alice", limit=1, mode="keyword")) == _ranking(expected_limited)
        assert reader.search("Paris", user_id="alice")["results"] == [] or all(
            r["user_id"] == "alice" for r in reader.search("Paris", user_id="alice")["results"])
    assert any("Berlin" in r["memory"] for r in expected["where do I live?"]["results"][:1])


def test_search_reader_starts_the_graph_server_only_for_a_search_that_walks_the_graph(tmp_path):
    data = tmp_path / "data"
    _fill(data)
    with SearchReader(Settings(data_dir=data)) as reader:
        assert reader.search("music", user_id="bob")["results"] is not None
        assert reader.services.graph is not None and not reader.services.graph.opened
        found = reader.search("Acme", user_id="alice")  # names an entity of alice's graph: the graph is walked
        assert reader.services.graph.opened
        assert any("Acme" in r["memory"] for r in found["results"])
        assert any(rel["destination"] == "Acme" or rel["source"] == "Acme" for rel in found["relations"])


def test_search_reader_checks_input_like_memory(tmp_path):
    import pytest

    from memoryx.errors import InvalidInputError, ScopeError

    with SearchReader(Settings(data_dir=tmp_path / "data")) as reader:
        with pytest.raises(ScopeError):
            reader.search("jazz")
        with pytest.raises(InvalidInputError):
            reader.search("  ", user_id="alice")
        with pytest.raises(InvalidInputError):
            reader.search("jazz", user_id="alice", mode="bogus")
        with pytest.raises(TypeError, match="mode_"):
            reader.search("jazz", user_id="alice", mode_="keyword")


def test_cli_search_loads_no_langgraph_or_chat_models(tmp_path):
    data = tmp_path / "data"
    _fill(data)
    root = Path(__file__).resolve().parents[2]
    probe = (
        "import json, sys\n"
        "from memoryx.api.searching import SearchReader\n"
        "from memoryx.settings import Settings\n"
        f"with SearchReader(Settings(data_dir={str(data)!r})) as r:\n"
        "    hits = r.search('where do I live?', user_id='alice')['results']\n"
        "heavy = sorted(m for m in sys.modules if m.startswith(('langgraph.graph', 'langgraph.pregel', "
        "'langchain_core.language_models', 'langchain_core.messages', 'langsmith.run_trees')))\n"
        "print(json.dumps({'top': hits[0]['memory'], 'heavy': heavy}))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "PYTHONPATH": str(root.parent)})
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert "Berlin" in out["top"]
    assert out["heavy"] == []


def test_untraced_search_matches_the_search_graph(tmp_path, monkeypatch):
    """Memory.search calls the search steps directly unless someone traces it; the LangGraph graph (Studio,
    LangServe, traced searches) gives the same result."""
    data = tmp_path / "data"
    _fill(data)
    with Memory(data_dir=data) as m:
        core = m._core
        assert not core.search_traced()
        for q in QUERIES:
            inp = core.search_input(q, "alice", None, None, 10, None, None, {"record_access": False})
            direct = core.search_result(dict(inp))
            via_graph = core.search_graph().invoke(dict(inp), core.search_config(), context=core.context())["result"]
            assert _ranking(direct) == _ranking(via_graph), q
            assert direct["relations"] == via_graph["relations"], q
        monkeypatch.setenv("LANGSMITH_TRACING", "true")
        assert core.search_traced()
