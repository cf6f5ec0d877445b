"""Questions asking for an amount prefer the memories that state one (memoryx.search.amounts)."""

from __future__ import annotations

import pytest

from memoryx.search.amounts import asks_amount, states_amount


def test_amount_questions():
    for q in ("How much did I spend on each coffee mug?", "How many hours have I spent playing games in total?",
              "What is the difference in price between my boots and the pair at the budget store?",
              "我一共花了多少钱？", "合計でいくらかかりましたか？", "How old is Mango?", "我儿子几岁了？"):
        assert asks_amount(q), q
    for q in ("How many plants did I get last month?", "Where do I live?", "When did I move?", "我的狗叫什么名字？"):
        assert not asks_amount(q), q  # a count of things is gathered, not stated


def test_memories_stating_a_figure():
    for text in ("I paid $12 for each mug", "it took me 70 hours", "women hold 20% of the positions",
                 "I walk for two hours a day", "我花了三百元", "五百円でした", "we have a cat named Mango, she's 6"):
        assert states_amount(text), text
    for text in ("I love mugs with quotes on them", "I got a snake plant from my sister", "我喜欢喝乌龙茶",
                 "User got promoted to ward manager today (2024-06-26)"):  # a date written beside it is no amount
        assert not states_amount(text), text


@pytest.mark.hand_ranking
def test_the_turn_with_the_figure_gains(tmp_path):
    """Two turns on one topic, one giving the figure: asked "how much", the figure's turn gains `amount_bonus`
    over the other; asked something else, neither gains."""
    from memoryx.api.memory import Memory
    from tests.support import shared_embeddings

    turns = ["I bought coffee mugs as birthday gifts for my coworkers, they loved the mugs.",
             "The coffee mugs for my coworkers cost me $12 each."]

    def scores(path, query, **tuning):
        with Memory(data_dir=path, graph_backend="none", embeddings=shared_embeddings(),
                    search_tuning={"ranker": "hand", **tuning}) as m:  # (a knob of the hand ranking)
            if not m.get_all(user_id="owner")["results"]:
                m.add_many([{"messages": [{"role": "user", "content": t}], "user_id": "owner"} for t in turns],
                           infer=False)
            found = m.search(query, user_id="owner", limit=2)["results"]
            return {("$12" in r["memory"]): r["score"] for r in found}

    asked = "How much did I spend on the coffee mugs for my coworkers?"
    on, off = scores(tmp_path / "d", asked), scores(tmp_path / "d", asked, amount_bonus=0.0)
    # the best relevance is scaled to 1 after the boosts: the bonus shows as the figure's lead over the other
    assert on[True] - on[False] > off[True] - off[False] + 0.01
    other = "What did I give my coworkers?"
    assert scores(tmp_path / "d", other) == scores(tmp_path / "d", other, amount_bonus=0.0)
