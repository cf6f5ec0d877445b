"""A long chat turn borrows no relevance from its neighbours (nodes/expand_context.py): a short turn ("Yes, the
bread there is great") is answered by the turns around it, a long one says what it says, and borrowing would
only crowd its conversation into the top k."""

from __future__ import annotations


def test_a_long_turn_borrows_no_context(tmp_path):
    from memoryx.api.memory import Memory
    from tests.support import shared_embeddings

    filler = ("We talked about the weather, the garden, the neighbours' new fence and the plans for the summer "
              "holidays, none of which had anything to do with food. ") * 7
    turns = [("user", "The bakery on Elm Street sells the best rye bread in town."),
             ("user", "Yes, the bread there is great."),
             ("user", "About bread: " + filler)]
    assert len(turns[2][1]) >= 800  # one vector window (MEMORYX_VECTOR_CHUNK_CHARS) or longer
    with Memory(data_dir=tmp_path / "d", graph_backend="none", embeddings=shared_embeddings()) as m:
        m.add_many([{"messages": [{"role": role, "content": text, "timestamp": f"2024-03-02T10:00:0{i}+00:00"}],
                     "user_id": "owner"} for i, (role, text) in enumerate(turns)], infer=False)
        found = {r["memory"][:12]: r["sources"] for r in
                 m.search("rye bread from the bakery on Elm Street", user_id="owner", limit=5)["results"]}
    assert "context" in found["Yes, the bre"]  # the short reply borrows from the hit next to it
    assert "context" not in found["About bread:"]  # the long turn does not
