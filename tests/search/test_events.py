"""Two-event questions split into their events, and the keyword lists merged so each event's best match is a
top hit."""

from __future__ import annotations

import pytest

from memoryx.search.events import covering_first, event_phrases, merged_hits, with_covers


@pytest.mark.parametrize("question, events", [
    ("How many days had passed between the Walk for Hunger event and the Coastal Cleanup event?",
     ("the Walk for Hunger event", "the Coastal Cleanup event")),
    ("Which event happened first, the purchase of the coffee maker or the malfunction of the stand mixer?",
     ("the purchase of the coffee maker", "the malfunction of the stand mixer")),
    ("How many days before the Rack Fest did I participate in the Turbocharged Tuesdays event?",
     ("the Rack Fest", "participate in the Turbocharged Tuesdays event")),
    ("How long did I use my new binoculars before I saw the American goldfinches returning?",
     ("use my new binoculars", "saw the American goldfinches returning")),
    ("How many weeks had passed since I recovered from the flu when I went on my 10th jog outdoors?",
     ("recovered from the flu", "went on my 10th jog outdoors")),
])
def test_a_two_event_question_gives_its_two_events(question, events):
    assert event_phrases(question) == events


@pytest.mark.parametrize("question", ["What is my dog's name?", "How many days between Monday and Friday?",
                                      "Where did I go before lunch?", "我什么时候搬到上海的？", ""])
def test_other_questions_give_none(question):
    assert event_phrases(question) == ()


def test_each_lists_best_hit_counts_as_much_as_the_questions():
    whole = [{"id": "a", "score": 12.0}, {"id": "b", "score": 6.0}]
    first = [{"id": "c", "score": 3.0}, {"id": "b", "score": 2.4}]
    second = [{"id": "d", "score": 0.5}]
    merged = merged_hits([whole, first, second, []])
    assert {h["id"]: h["score"] for h in merged} == pytest.approx({"a": 1.0, "c": 1.0, "d": 1.0, "b": 0.8})
    assert [h["id"] for h in merged][-1] == "b"


def test_the_total_of_two_things_gives_both():
    assert event_phrases("What is the total number of comments on my Facebook Live session and my most popular "
                         "YouTube video?") == ("comments on my Facebook Live session", "my most popular YouTube video")
    assert event_phrases("What is the total number of apples and pears?") == ()  # one word each: no events


def test_each_events_best_keyword_hit_is_marked():
    merged = [{"id": "a", "score": 1.0}, {"id": "c", "score": 1.0}, {"id": "b", "score": 0.8}]
    marked = with_covers(merged, [[{"id": "c", "score": 3.0}, {"id": "b", "score": 2.4}], [{"id": "c", "score": 1}]])
    assert [h.get("covers") for h in marked] == [None, [0, 1], None]


def test_a_question_about_the_user_marks_the_users_own_account():
    """"Which did I buy first ...?": the assistant's reply naming the event ("Congratulations on your new coffee
    maker!") tops the phrase's search, but the user's turn is the account of the event that is marked."""
    def hit(mid, role):
        return {"id": mid, "score": 1.0, "payload": {"metadata": {"role": role}}}

    merged = [hit("reply", "assistant"), hit("told", "user"), hit("other", "user")]
    per_event = [[hit("reply", "assistant"), hit("told", "user")], [hit("other", "user")]]
    marked = {h["id"]: h.get("covers") for h in with_covers(merged, per_event, role="user")}
    assert marked == {"reply": None, "told": [0], "other": [1]}
    assert {h["id"]: h.get("covers") for h in with_covers(merged, per_event)}["reply"] == [0]  # no side asked


def test_a_buried_event_hit_moves_up_to_just_after_the_best():
    ranked = [{"id": i, "score": s, "sources": ["keyword"]} for i, s in (("a", 0.9), ("b", 0.8), ("c", 0.7),
                                                                          ("d", 0.6), ("e", 0.5))]
    ranked[3]["covers"], ranked[4]["covers"] = [0], [1]
    out = covering_first(ranked)
    assert [c["id"] for c in out] == ["a", "d", "e", "b", "c"]
    assert [c["score"] for c in out] == [0.9, 0.8, 0.8, 0.8, 0.7]  # a moved hit takes the score it now precedes
    assert out[1]["sources"] == ["keyword", "event"] and ranked[3]["sources"] == ["keyword"]  # input untouched
    assert covering_first([dict(c, covers=None) for c in ranked]) == [dict(c, covers=None) for c in ranked]
    ranked[0]["covers"] = [0]  # the best hit already covers the first event: only the second moves
    assert [c["id"] for c in covering_first(ranked)] == ["a", "e", "b", "c", "d"]


@pytest.mark.parametrize("question, events", [
    ("我参加慈善义走和海滩清洁活动之间隔了多少天？", ("我参加慈善义走", "海滩清洁活动")),
    ("买咖啡机和搅拌机坏掉，哪个先发生？", ("买咖啡机", "搅拌机坏掉")),
    ("ウォーク・フォー・ハンガーとコースタル・クリーンアップの間は何日ですか？", ("ウォーク・フォー・ハンガー", "コースタル・クリーンアップ")),
    ("コーヒーメーカーの購入とスタンドミキサーの故障、どちらが先でしたか？", ("コーヒーメーカーの購入", "スタンドミキサーの故障")),
])
def test_chinese_and_japanese_two_event_questions(question, events):
    assert event_phrases(question) == events


@pytest.mark.parametrize("question", ["我和妻子住在哪里？", "東京と大阪、どちらが好き？", "猫和狗之间", "私と妻はどこに住んでいますか？"])
def test_chinese_and_japanese_questions_naming_two_things_but_no_two_events(question):
    assert event_phrases(question) == ()
