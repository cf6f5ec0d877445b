"""Working memory: the last MEMORYX_WORKING_MEMORY_TURNS turns of an open run (Memory.working_memory and
get_context's working_turns), only the run's and only its owner's, cleared by end_run while the facts the run's
adds extracted stay (as short-term when they mattered)."""

from __future__ import annotations

import pytest

from memoryx.api.memory import Memory
from memoryx.errors import ScopeError
from memoryx.lifecycle.layers import WORKING, layer_of
from tests.support import shared_embeddings


def _turns(*texts):
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(texts)]


def test_the_last_turns_of_an_open_run_until_it_ends(tmp_path):
    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings(), llm="offline",
                working_memory_turns=5) as m:
        out = m.add(_turns("I am planning a trip to Lisbon in June.", "Nice, Lisbon is lovely then."),
                    user_id="alice", run_id="chat-1")
        facts = [r["id"] for r in out["results"] if r["event"] == "ADD"]
        m.add(_turns("I prefer window seats.", "Noted.", "Also I am vegetarian.", "Got it."), user_id="alice",
              run_id="chat-1", infer=False)
        m.add(_turns("Something else entirely."), user_id="alice", run_id="chat-2", infer=False)
        m.add(_turns("Bob's own words."), user_id="bob", run_id="chat-1", infer=False)

        wm = m.working_memory("chat-1", user_id="alice")
        assert [t["content"] for t in wm["turns"]] == ["Nice, Lisbon is lovely then.", "I prefer window seats.", "Noted.",
                                                      "Also I am vegetarian.", "Got it."]  # the last 5, oldest first
        assert [t["role"] for t in wm["turns"]][:2] == ["assistant", "user"] and all(t["trace_id"] for t in wm["turns"])
        assert facts and set(facts) <= {r["id"] for r in wm["memories"]}
        assert all(layer_of(r) == WORKING and r["user_id"] == "alice" and r["run_id"] == "chat-1" for r in wm["memories"])
        assert [t["content"] for t in m.working_memory("chat-1", user_id="bob")["turns"]] == ["Bob's own words."]
        ctx = m.get_context("Where am I travelling?", user_id="alice", run_id="chat-1")
        assert [t["content"] for t in ctx["working_turns"]] == [t["content"] for t in wm["turns"]]

        ended = m.end_run("chat-1", user_id="alice")
        assert m.working_memory("chat-1", user_id="alice") == {"run_id": "chat-1", "turns": [], "memories": []}
        kept = set(ended["kept"])
        assert kept and all(layer_of(m.get(i)) != WORKING for i in kept)  # what mattered stays, as short-term
        assert [t["content"] for t in m.working_memory("chat-2", user_id="alice")["turns"]] == ["Something else entirely."]
        assert m.working_memory("chat-1", user_id="bob")["turns"]  # another user's run of the same name stays open

        m.add(_turns("Back again: I booked the hotel."), user_id="alice", run_id="chat-1", infer=False)
        assert [t["content"] for t in m.working_memory("chat-1", user_id="alice")["turns"]] == ["Back again: I booked the hotel."]


def test_working_memory_needs_a_run(tmp_path):
    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings(), llm="offline") as m:
        with pytest.raises(ScopeError, match="run_id"):
            m.working_memory("  ", user_id="alice")
