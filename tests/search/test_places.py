"""Questions asking where prefer the memories that name a place (memoryx.search.places)."""

from __future__ import annotations

import pytest

from memoryx.search.places import asks_where, states_place


def test_where_questions():
    for q in ("Where do I live now?", "Where does my grandmother live?", "我住在哪里？", "どこに住んでいますか？"):
        assert asks_where(q), q
    for q in ("What's my job?", "When did I move?", "我的狗叫什么名字？"):
        assert not asks_where(q), q


def test_memories_naming_a_place():
    for text in ("We finally bought a house in Lüneburg", "User is at the Royal Infirmary now",
                 "I moved to Manchester in March", "用户的奶奶住在斯德哥尔摩", "母は大阪に住んでいます"):
        assert states_place(text), text
    # a month, a weekday or a lower-case place word is no place name
    for text in ("Moved in last weekend, boxes everywhere", "User's grandmother turns 90 in June",
                 "I start in May", "See you on Friday", "I went to the gym"):
        assert not states_place(text), text


@pytest.mark.hand_ranking
def test_the_statement_naming_the_new_home_answers_where(tmp_path):
    """The latest mention of the move names no place; the statement naming the new home comes first, and
    `place_bonus` widens its lead."""
    from memoryx.api.memory import Memory
    from tests.support import shared_embeddings

    said = [("2024-01-08", "hi, I'm Jonas, software developer at a bank in Hamburg"),
            ("2024-08-28", "We finally bought a house in Lüneburg."),
            ("2024-09-30", "Moved in last weekend, boxes everywhere"),
            ("2024-10-20", "My wife Anja teaches piano")]

    def scores(**tuning) -> dict[str, float]:
        with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings(),
                    search_tuning={"ranker": "hand", **tuning}) as m:  # (a knob of the hand ranking)
            if not m.get_all(user_id="j")["results"]:
                for day, text in said:
                    m.add([{"role": "user", "content": text, "timestamp": f"{day}T19:00:00+00:00"}], user_id="j",
                          infer=False)
            found = m.search("Where do I live now?", user_id="j", limit=3, now="2025-01-20T12:00:00+00:00")
            return {r["memory"]: r["score"] for r in found["results"]}

    on, off = scores(), scores(place_bonus=0.0)
    assert max(on, key=on.get) == "We finally bought a house in Lüneburg."
    moved, house = "Moved in last weekend, boxes everywhere", "We finally bought a house in Lüneburg."
    assert on[house] - on[moved] > off[house] - off[moved] + 0.01
