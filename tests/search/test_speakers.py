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
    from memoryx.search.relation_terms import relation_words
    from memoryx.search.relations import names_query

    # the question's own word, with the other words of its relation (memoryx.search.relation_terms)
    assert {"dog", "puppy", "狗", "犬"} == relation_words("What's my dog's name?")
    assert {"manager", "boss"} <= relation_words("Who is my manager?")
    assert {"liv", "mov", "住"} <= relation_words("Where do I live now?")
    assert relation_words("Who is my dentist?") == {"dentist"}  # outside the table: its own word only
    assert relation_words("What is the capital of France?") == set()
    assert names_query({"relation": "has_dog", "source": "User", "target": "Rex"}, {"dog"})
    assert names_query({"relation": "lives_in", "source": "User", "target": "Paris"}, relation_words("where do I live"))
    assert not names_query({"relation": "is_named", "source": "User", "target": "Sam"}, {"dog"})


def test_the_other_sides_turns_borrow_no_context(tmp_path):
    """A question about the user's own life: the assistant's reply next to the user's turn neither gets a share
    of its neighbour's relevance nor lends its own (one conversation's turns would crowd the top k); a question
    naming neither side leaves context propagation as it was, and so does the `context_role` knob off."""
    from memoryx.api.memory import Memory
    from tests.support import shared_embeddings

    turns = [{"role": "user", "content": "I adopted a golden retriever puppy and named him Max.",
              "timestamp": "2024-03-02T10:00:00+00:00"},
             {"role": "assistant", "content": "Congratulations! Golden retrievers are friendly dogs; start house "
              "training early and keep the sessions short.", "timestamp": "2024-03-02T10:00:05+00:00"},
             # another day's turn: the weakest hit of each path, so that both turns above lend
             {"role": "user", "content": "The bakery on the corner sells rye bread.",
              "timestamp": "2024-01-10T08:00:00+00:00"}]

    def sources(m, query):
        found = m.search(query, user_id="owner", limit=5)["results"]
        return {r["metadata"]["role"]: r["sources"] for r in found if "bread" not in r["memory"]}

    with Memory(data_dir=tmp_path / "on", graph_backend="none", embeddings=shared_embeddings()) as m:
        m.add_many([{"messages": [t], "user_id": "owner"} for t in turns], infer=False)
        mine = sources(m, "What did I name my puppy?")
        assert "context" not in mine["user"] and "context" not in mine["assistant"]
        theirs = sources(m, "What is the golden retriever puppy called?")
        assert "context" in theirs["user"] and "context" in theirs["assistant"]
    with Memory(data_dir=tmp_path / "off", graph_backend="none", embeddings=shared_embeddings(),
                search_tuning={"context_role": False}) as m:
        m.add_many([{"messages": [t], "user_id": "owner"} for t in turns], infer=False)
        mine = sources(m, "What did I name my puppy?")
        assert "context" in mine["user"] and "context" in mine["assistant"]


def test_a_memory_stating_the_users_relation_is_told_from_one_sharing_words():
    from memoryx.search.relation_terms import relation_words
    from memoryx.search.relations import cjk_relation, states_relation

    dog = relation_words("What's my dog's name?")
    assert states_relation("User's dog is called Biscuit", dog)
    assert states_relation("Our dog Biscuit is a beagle", dog) and states_relation("my old dog Rex died", dog)
    assert not states_relation("User's name is Sam", dog)
    assert not states_relation("The neighbour's dog barks", dog)  # someone else's dog
    # what the user has: "we adopted two cats", "I got a new dog"
    cats = relation_words("What are my cats called?")
    assert states_relation("We adopted two cats last week, Pip and Olive", cats)
    assert states_relation("I just got a new dog", dog) and not states_relation("I have a meeting about cats", cats)
    assert not states_relation("User's dog is called Biscuit", set())
    assert "狗" in cjk_relation("我的狗叫什么名字？") and "犬" in cjk_relation("私の犬の名前は？")
    assert cjk_relation("我的老师叫什么？") == {"老"}  # outside the table: the character after 我的
    assert cjk_relation("What is my dog's name?") == {"狗", "犬"}  # the relation's CJK words, for CJK memories
    assert cjk_relation("What is the capital of France?") == set()
    assert states_relation("用户的狗叫旺财", set(), {"狗"}) and states_relation("ユーザーの犬はポチ", set(), {"犬"})
    assert not states_relation("用户的名字是小明", set(), {"狗"})
    assert not states_relation("邻居的狗很吵", set(), {"狗"})  # not the user's
    # the user as subject names the relation anywhere in its clause; a family member the user possesses is the
    # subject of what follows: their home is not the user's
    home = {"住", "搬"}
    assert states_relation("用户住在上海", set(), home) and states_relation("ユーザーは東京に住んでいる", set(), home)
    assert not states_relation("ユーザーの母は大阪に住んでいます", set(), home)
    assert not states_relation("用户的奶奶住在斯德哥尔摩", set(), home)
    assert states_relation("ユーザーの母は大阪に住んでいます", set(), {"母", "住"})
    assert states_relation("用户妹妹下个月结婚", set(), {"妹妹"})


def test_what_is_my_dogs_name_finds_the_dog_not_the_name(tmp_path):
    """What a user meets with the offline model and no graph relation drawn: the name fact ranks high (a name is
    important) and shares the word "name"; the memory whose text says the user's dog, or wife, comes first."""
    from memoryx.api.memory import Memory
    from tests.support import shared_embeddings

    m = Memory({"data_dir": str(tmp_path / "d"), "graph_backend": "none"}, llm="offline",
               embeddings=shared_embeddings())
    try:
        for text in ("My name is Sam and I live in Leeds.", "My dog is called Biscuit, he's a beagle.",
                     "My wife Priya is a teacher.", "我叫小明。", "我的狗叫旺财。"):
            m.add(text, user_id="sam")
        first = lambda q: m.search(q, user_id="sam", limit=3)["results"][0]["memory"]  # noqa: E731
        assert first("What's my dog's name?") == "User's dog is called Biscuit, he's a beagle"
        assert first("What is my wife's name?") == "User's wife Priya is a teacher"
        assert first("我的狗叫什么名字？") == "用户的狗叫旺财"
        assert first("What is my name?") == "User's name is Sam"
    finally:
        m.close()
