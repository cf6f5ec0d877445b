"""Whose turns answer a question (memoryx.search.speakers)."""

from __future__ import annotations

from memoryx.search.speakers import asked_role, said_by


def test_the_side_a_question_asks_about():
    assert asked_role("How much did I spend on coffee mugs?") == "user"
    assert asked_role("我的狗叫什么名字?") == "user" and asked_role("私の犬の名前は?") == "user"
    assert asked_role("What was the third restaurant you recommended?") == "assistant"
    assert asked_role("Can you remind me what you told me about the hotel?") == "assistant"
    assert asked_role("What did Caroline paint?") is None


def test_said_by_reads_the_stored_role():
    assert said_by({"metadata": {"role": "user"}}, "user")
    assert not said_by({"metadata": {"role": "assistant"}}, "user") and not said_by({"metadata": {}}, "user")


def test_the_relation_a_question_names():
    from memoryx.search.relations import names_query, relation_words

    assert relation_words("What's my dog's name?") == {"dog"}
    assert relation_words("Who is my manager?") == {"manager"}
    assert relation_words("Where do I live now?") == {"liv"}
    assert relation_words("What is the capital of France?") == set()
    assert names_query({"relation": "has_dog", "source": "User", "target": "Rex"}, {"dog"})
    assert names_query({"relation": "lives_in", "source": "User", "target": "Paris"}, relation_words("where do I live"))
    assert not names_query({"relation": "is_named", "source": "User", "target": "Sam"}, {"dog"})
