"""A Chinese or Japanese statement no rule of the offline model reads is kept nearly as said when it is one: a
declarative sentence (not small talk, not a question) that says something particular, here who someone in the
speaker's life is or what they are called ("X は <someone>さん / ...人です", "X的名字是 / 姓 / 叫 Y", "X是...老师 / ...的人").
The sentences are written for this test, beside the ones the rules were first shown; small talk and descriptions
of the world beside them must stay out, so the shape cannot pass as a list of phrasings."""

from __future__ import annotations

import uuid

import pytest

from memoryx import Memory
from memoryx.models.offline import extract_user_facts

STATEMENTS = [
    # Japanese: a topic (は/が), then someone named with an honorific or called a person, or a name
    ("店長は松本さん", "店長は松本さん"),
    ("夫の名前は健太です", "夫の名前は健太です"),
    ("上司は厳しい人です", "上司は厳しい人です"),
    ("担任は山田先生です。", "担任は山田先生です"),
    ("大家さんはとても親切な人だ", "大家さんはとても親切な人だ"),
    ("うちのインコの名前はピーちゃん", "インコの名前はピーちゃん"),
    ("隣の部署の部長が佐々木さん", "部長が佐々木さん"),
    # Chinese: what is said of someone (是 ... 老师 / 的人), or their name (姓, 叫)
    ("我女儿在北京上大学", "女儿在北京上大学"),
    ("班主任是陈老师", "班主任是陈老师"),
    ("房东是个很好说话的人。", "房东是个很好说话的人"),
    ("老板姓王", "老板姓王"),
    ("楼下那只橘猫叫大黄", "橘猫叫大黄"),
]


@pytest.mark.parametrize("text, kept", STATEMENTS)
def test_a_statement_no_rule_reads_is_kept_nearly_as_said(text, kept):
    texts = [f["text"] for f in extract_user_facts(text)]
    assert len(texts) == 1 and kept in texts[0], texts


@pytest.mark.parametrize("text", [
    # small talk: a greeting, a remark on the day asking for agreement, a laugh and an okay
    "おはよう", "今日は暑いね", "哈哈好的", "今日はいい天気ですね。", "めっちゃ寒いよね", "好累啊", "好热啊！",
    # descriptions of the world and questions, in the same shapes
    "東京は人が多いです", "この店は人気です", "京都はきれいな町だ", "上海是个大城市", "店長は誰ですか", "老板姓什么？",
])
def test_small_talk_descriptions_and_questions_give_no_fact(text):
    assert extract_user_facts(text) == []


def test_small_talk_beside_a_statement_does_not_join_it():
    texts = [f["text"] for f in extract_user_facts("今日は暑いね。夫の名前は健太です")]
    assert texts == ["ユーザーの夫の名前は健太です"]


def test_the_statements_are_stored_and_found_and_small_talk_is_not(tmp_path):
    """Through the real add and search graphs on the offline model: each statement is a memory, and a question
    about it, in its language and worded otherwise, finds it among the first three."""
    user, idle = f"cjk-{uuid.uuid4().hex[:6]}", f"idle-{uuid.uuid4().hex[:6]}"
    asks = {"店長は誰ですか？": "松本", "上司はどんな人？": "厳しい", "夫の名前は？": "健太", "担任の先生は誰？": "山田",
            "インコの名前は何？": "ピーちゃん", "我女儿在哪里上大学？": "北京", "班主任是谁？": "陈老师",
            "房东人怎么样？": "好说话", "老板姓什么？": "姓王", "那只橘猫叫什么名字？": "大黄"}
    with Memory(data_dir=tmp_path) as m:
        for text, _ in STATEMENTS:
            m.add(text, user_id=user)
        for text in ("おはよう", "今日は暑いね", "哈哈好的", "好累啊"):
            m.add(text, user_id=idle)
        stored = [r["memory"] for r in m.get_all(user_id=user)["results"]]
        assert len(stored) == len(STATEMENTS), stored
        assert all(any(kept in s for s in stored) for _, kept in STATEMENTS), stored
        for question, word in asks.items():
            found = [r["memory"] for r in m.search(question, user_id=user, limit=3)["results"]]
            assert any(word in f for f in found), (question, found)
        assert m.get_all(user_id=idle)["results"] == []
