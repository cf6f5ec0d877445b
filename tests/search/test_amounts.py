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


def test_ages_asked_and_given():
    from memoryx.search.amounts import asks_age, asks_own_age, gives_age, gives_own_age

    for q in ("How old am I?", "What age is my son?", "我女儿几岁了？", "私は何歳ですか？"):
        assert asks_age(q), q
    assert asks_own_age("How old am I?") and asks_own_age("我几岁？") and not asks_own_age("How old is our dog?")
    for text in ("User is 67 and retired", "hi, I'm Jonas, 34, software developer", "I turned 40 today",
                 "I'm 29 years old", "我今年34岁", "私は30歳です"):
        assert gives_own_age(text), text
    for text in ("Rocco is getting old, he turned ten", "My son is 7", "I'm 5 minutes away", "我女儿6岁"):
        assert not gives_own_age(text), text
    for text in ("User is 67 and retired", "He's 8 months old", "Rocco is getting old, he turned ten",
                 "we have a daughter called Sofia, she is four.", "我女儿6岁", "娘は5歳です"):
        assert gives_age(text), text
    for text in ("My husband passed away three years ago (2021)", "I ran 10 km", "It is one of the best",
                 "the flat is 5 km away", "I was there for 3 hours"):
        assert not gives_age(text), text


@pytest.mark.hand_ranking
def test_the_users_age_and_their_dogs(tmp_path):
    """Asked "how old am I", the user giving their age comes first, above a granddaughter's birthday news that
    reads closer; asked the dog's age, the statement giving it (in words) comes above the dog's introduction."""
    from tests.support import told

    said = [("2024-01-08", "Good morning. My name is Margaret, I'm 67 and retired from teaching primary school."),
            ("2024-01-28", "My granddaughter Evie turned 5 last week, she's mad about unicorns."),
            ("2024-02-14", "Our dog is a labrador called Rocco."),
            ("2024-06-02", "I volunteer at the Oxfam shop on Tuesdays."),
            ("2024-09-20", "Rocco is getting old, he turned ten.")]
    with told(tmp_path, said) as first:
        assert "67" in first("How old am I?")
        assert "turned ten" in first("How old is our dog?")
        assert "Margaret" in first("What's my name?")  # "retired" ends no name


def test_how_old_am_i_this_year_is_answered_by_the_age_not_this_years_news(tmp_path):
    """"我今年多大" ("how old am I this year"): 今年 is the age's year, not a period the answer was said in, and
    "我叫刘洋，今年36岁" gives the user's own age as an introduction does; "29歳で、..." opens on it, and "私って
    何歳" asks it as "私は何歳" does."""
    from memoryx.search.amounts import asks_own_age, gives_own_age
    from tests.support import told

    assert gives_own_age("你好，我叫刘洋，今年36岁，在杭州一家装修设计公司做室内设计师。")
    assert gives_own_age("はじめまして！佐藤美咲です。29歳で、大阪の梅田で働いてます。")
    assert gives_own_age("bday tomorrow, turning 30. hana got me a keyboard")
    assert not gives_own_age("我女儿朵朵今年五岁。")
    assert asks_own_age("私って何歳って言ってたっけ？")
    said = [("2024-01-08", "你好，我叫刘洋，今年36岁，在杭州一家装修设计公司做室内设计师。"),
            ("2025-05-20", "今天五月二十号，是我和周敏结婚十周年，我偷偷订了西湖边的一家餐厅。"),
            ("2025-06-01", "公司年底要派我去深圳出差两周，大概十二月八号到二十二号。")]
    with told(tmp_path, said, now="2025-12-20T12:00:00+00:00") as first:
        assert "36岁" in first("你还记得我今年多大吗？")
