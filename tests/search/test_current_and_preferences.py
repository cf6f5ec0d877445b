"""Present-tense questions prefer the latest fact (memoryx.search.current); recommendation questions read the
user's stated preferences (memoryx.search.preferences)."""

from __future__ import annotations

import pytest

from memoryx.search.current import asks_current, asks_current_value, ends_relation, prefer_latest, superseded_last
from memoryx.search.preferences import asks_recommendation, states_preference


def _cand(mid: str, relevance: float, when: str, invalid: str | None = None) -> dict:
    return {"id": mid, "relevance": relevance, "score": relevance,
            "memory": {"id": mid, "valid_at": when, "invalid_at": invalid}}


def test_current_questions():
    for q in ("Where do I live now?", "What's my current job?", "Who is my manager?", "我现在住在哪里?", "今の仕事は?",
              "私はどこに住んでいますか？"):
        assert asks_current(q), q
    for q in ("Where did I live before Paris?", "What was my first car?", "Where did I go last year?"):
        assert not asks_current(q), q
    # present tense without "now": current only when it names a relation that changes (the caller knows)
    assert asks_current("What sport do I do?") and not asks_current("What sport do I do?", names_relation=False)
    assert asks_current("What sport do I do now?", names_relation=False)


def test_latest_of_the_close_candidates_wins_and_far_ones_are_left_alone():
    old = _cand("old", 1.0, "2024-01-01T00:00:00+00:00")
    new = _cand("new", 0.9, "2024-09-01T00:00:00+00:00")
    far = _cand("far", 0.2, "2025-01-01T00:00:00+00:00")
    prefer_latest([old, new, far], 0.15)
    assert new["relevance"] > old["relevance"] and far["relevance"] == 0.2


def test_an_ended_relation_is_not_how_things_stand():
    """"What's my job?" after "I quit my job" (recent, sharing the question's words) and a new job: the new job
    first; asked "do I still work there?", the ending is the answer and is left alone."""
    assert ends_relation("I quit my job at the hospital") and ends_relation("I cycle to work no more")
    assert ends_relation("我不再弹吉他了") and ends_relation("仕事を辞めました")
    assert not ends_relation("I now work as a nurse at a clinic")
    # the ending and what holds instead, in one statement: it answers "what sport do I do now?"
    assert not ends_relation("I gave up tennis because of my knee, now I swim instead")
    # a chat turn mentioning "used to" in passing says nothing ended
    assert not ends_relation("I'm planning a trip to Kyoto. " * 8 + "I used to love temples as a kid.")
    assert asks_current_value("What's my job?") and asks_current_value("How do I get to work?")
    assert asks_current_value("私はどこに住んでいますか？")
    assert not asks_current_value("Do I still work at the hospital?")  # yes / no: the ending answers it
    assert not asks_current_value("What was my first job?")  # the past

    def cands():
        first = _cand("first", 0.8, "2024-01-11T00:00:00+00:00")
        quit_ = _cand("quit", 1.0, "2024-12-03T00:00:00+00:00")
        quit_["memory"]["memory"] = "I quit my job at the hospital"
        new = _cand("new", 0.9, "2024-12-18T00:00:00+00:00")
        return first, quit_, new

    first, quit_, new = cands()
    prefer_latest([first, quit_, new], 0.15, value_asked=True)
    assert new["relevance"] > quit_["relevance"] and quit_["relevance"] < 1.0
    first, quit_, new = cands()
    prefer_latest([first, quit_, new], 0.15)  # a yes / no question: the ending counts as the event it is
    assert quit_["relevance"] > 1.0
    # however far ahead (a keyword match of "work" in "I cycle to work no more"), below the best that holds,
    # with or without a bonus for the newest
    bike = _cand("bike", 1.0, "2024-12-20T00:00:00+00:00")
    bike["memory"]["memory"] = "I cycle to work no more"
    job = _cand("job", 0.45, "2024-10-01T00:00:00+00:00")
    prefer_latest([bike, job], 0.15, value_asked=True, newest=False)
    assert bike["relevance"] < job["relevance"] == 0.45


def test_of_the_statements_of_one_relation_the_latest_stands():
    """"I live in Leeds" matches "where do I live" better than "I moved to Manchester" does, and a sister's home
    is newer than both: with `statements` (the question names one relation of the user's), the statements of it
    are levelled and the latest comes first; the sister's gets nothing. Without, the newest bonus goes by time
    among every close candidate."""
    def cands():
        leeds = _cand("leeds", 1.0, "2024-01-08T00:00:00+00:00")
        moved = _cand("moved", 0.7, "2024-11-03T00:00:00+00:00")
        sister = _cand("sister", 0.8, "2025-08-31T00:00:00+00:00")
        for c, text in ((leeds, "I live in Leeds"), (moved, "I moved to Manchester"),
                        (sister, "My sister lives in Lisbon")):
            c["memory"]["memory"] = text
        leeds["states_relation"] = moved["states_relation"] = True  # set by expand_context
        return leeds, moved, sister

    leeds, moved, sister = cands()
    prefer_latest([leeds, moved, sister], 0.15, statements=True)
    assert moved["relevance"] == 1.15 and leeds["relevance"] == 1.0 and sister["relevance"] == 0.8
    leeds, moved, sister = cands()
    prefer_latest([leeds, moved, sister], 0.15)
    assert leeds["relevance"] > moved["relevance"]
    # a chat turn saying "I moved" in passing is no statement of the home; one statement alone: time as before
    leeds, moved, sister = cands()
    moved["memory"]["memory"] = "I moved the meeting to Friday. " * 10
    prefer_latest([leeds, moved, sister], 0.15, statements=True)
    assert leeds["relevance"] == 1.0 and sister["relevance"] > 0.8


def test_where_do_i_live_now_through_the_api(tmp_path):
    """Statements added as said (`infer=False`, no judgment superseding the old home): the move, though it
    shares fewer words with the question, answers it; a question naming two relations (the husband's job) is
    not answered by the user's latest job."""
    from memoryx.api.memory import Memory
    from tests.support import shared_embeddings

    said = [("2024-01-08", "My name is Sam and I live in Leeds."),
            ("2024-01-20", "My husband Tom works as an architect."),
            ("2024-11-03", "Big news: I moved to Manchester."), ("2025-03-01", "I work as a nurse at a clinic."),
            ("2025-08-31", "My sister Ana lives in Lisbon.")]
    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings()) as m:
        for day, text in said:
            m.add([{"role": "user", "content": text, "timestamp": f"{day}T19:00:00+00:00"}], user_id="sam", infer=False)
        now = "2025-12-20T12:00:00+00:00"
        top = m.search("Where do I live now?", user_id="sam", limit=3, now=now)["results"]
        assert "Manchester" in top[0]["memory"]
        top = m.search("What does my husband do for a living?", user_id="sam", limit=3, now=now)["results"]
        assert "architect" in top[0]["memory"]


def test_superseded_memories_rank_below_valid_ones():
    gone = _cand("gone", 1.0, "2024-01-01T00:00:00+00:00", invalid="2024-06-01T00:00:00+00:00")
    valid = _cand("valid", 0.5, "2024-06-01T00:00:00+00:00")
    assert [c["id"] for c in superseded_last([gone, valid], None)] == ["valid", "gone"]
    # as of a time before it was superseded, it still stands
    as_of = 1704153600.0  # 2024-01-02
    assert [c["id"] for c in superseded_last([gone, valid], as_of)] == ["gone", "valid"]


def test_recommendation_questions_and_preferences():
    for q in ("What should I cook tonight?", "Can you suggest a book?", "Any ideas for a gift for my wife?",
              "推荐一部电影", "おすすめの本は?"):
        assert asks_recommendation(q), q
    for q in ("What is my dog's name?", "When did I move?"):
        assert not asks_recommendation(q), q
    assert states_preference("I love Italian food") and states_preference("我喜欢猫")
    assert states_preference("辛いものが苦手です") and not states_preference("I moved to Paris")
    assert states_preference("I don't eat pork") and states_preference("I can't drink milk")
    # the user's own, not one of their people's
    for text in ("User's daughter loves drawing", "用户女儿喜欢画画", "ユーザーの夫はサッカーが大好きです"):
        assert states_preference(text) and not states_preference(text, own=True), text
    assert states_preference("User likes hiking in the Alps", own=True) and states_preference("我喜欢寿司", own=True)


def test_a_recommendation_for_me_reads_my_preferences(tmp_path):
    """"Suggest a dinner for me": the dietary rule the user stated, not what their daughter likes (said in
    Chinese, which the preference path's words find first); "a gift for my daughter" reads hers."""
    from memoryx.api.memory import Memory
    from tests.support import shared_embeddings

    said = [("2024-01-08", "My husband Marco is a chef."), ("2024-03-01", "I don't eat pork."),
            ("2024-04-01", "I love hiking in the Alps."), ("2024-05-01", "My favourite film is Cinema Paradiso."),
            ("2024-06-01", "我女儿喜欢画画。"), ("2024-07-01", "I started learning German."),
            ("2024-08-01", "我每天早上喝绿茶。")]
    with Memory({"data_dir": str(tmp_path / "d"), "graph_backend": "none"}, llm="offline",
                embeddings=shared_embeddings()) as m:
        for day, text in said:
            m.add([{"role": "user", "content": text, "timestamp": f"{day}T19:00:00+00:00"}], user_id="e")

        def first(q: str) -> str:
            return m.search(q, user_id="e", limit=3, now="2025-01-20T12:00:00+00:00")["results"][0]["memory"]

        assert "pork" in first("Suggest a dinner for me.")
        assert "画画" in first("Suggest a gift for my daughter.")


def test_the_preference_path_reads_both_spellings():
    """"User's favourite film is ..." is a preference the path searches for, as "favorite" is."""
    from memoryx.core.text import tokenize
    from memoryx.search.preferences import PREFERENCE_WORDS

    words = set(tokenize(PREFERENCE_WORDS))
    assert set(tokenize("favourite")) <= words and set(tokenize("favorite")) <= words


def test_a_food_recommendation_reads_what_the_user_eats():
    from memoryx.search.preferences import asks_food, states_food

    for q in ("Can you suggest a dinner recipe for me?", "What should I cook tonight?", "推荐一道菜",
              "晩ご飯のおすすめは？"):
        assert asks_food(q), q
    assert not asks_food("Suggest a book I might enjoy.") and not asks_food("Recommend a TV show for me.")
    for text in ("I don't eat pork, never have.", "I can't have gluten, I have coeliac disease.", "我不吃辣",
                 "乳製品のアレルギーがあります"):
        assert states_food(text), text
    assert not states_food("My favourite author is Agatha Christie")


def test_a_dinner_recipe_is_answered_by_the_diet_not_the_favourite_author(tmp_path):
    from tests.support import told

    said = [("2024-01-08", "My favourite author is Agatha Christie, I've read all her books twice."),
            ("2024-02-01", "I don't eat pork, never have."), ("2024-03-01", "I love the sea in winter.")]
    with told(tmp_path, said) as first:
        assert "pork" in first("Can you suggest a dinner recipe for me?")


@pytest.mark.hand_ranking
def test_do_i_still_is_answered_by_the_newest_memory_saying_it_ended(tmp_path):
    """"Do I still go to the gym?": "No more gym for me" is the answer, though "I go to the gym" states the habit
    in the question's own words; asked what holds now, an ended relation still does not answer."""
    from memoryx.search.current import asks_still, ends_topic
    from tests.support import told

    assert asks_still("Do I still go to the gym?") and asks_still("Am I still with Sam?")
    assert not asks_still("What do I still owe?") and not asks_still("Did I still go?")
    assert ends_topic("No more gym for me, I do yoga at home now.", "Do I still go to the gym?")
    assert not ends_topic("No more coffee for me.", "Do I still go to the gym?")
    said = [("2024-01-23", "please remember I go to the gym Mon/Wed/Fri at 7am"),
            ("2024-03-01", "Keep in mind I don't drink alcohol."),
            ("2024-12-23", "No more gym for me, I do yoga at home now.")]
    with told(tmp_path, said, now="2025-12-20T12:00:00+00:00") as first:
        assert "No more gym" in first("Do I still go to the gym?")


def test_a_new_job_announced_is_where_the_user_works_now(tmp_path):
    """"New job! I'm moving to a tech startup as head of marketing" states the job ("New job!"), so asked where the
    user works now, it is the newer statement of it and comes before the introduction naming the bank."""
    from tests.support import told

    said = [("2024-01-08", "Hey, I'm Wei Ling, I work in marketing at a bank in Singapore."),
            ("2024-03-01", "I do pilates on Monday and Wednesday evenings"),
            ("2024-07-17", "New job! I'm moving to a tech startup as head of marketing"),
            ("2024-08-16", "We're moving into a flat in Tiong Bahru next month")]
    with told(tmp_path, said, now="2025-12-20T12:00:00+00:00") as first:
        assert "startup" in first("Where do I work now?")


@pytest.mark.hand_ranking
def test_can_i_eat_is_answered_by_the_diet_and_my_bakery_by_the_one_i_run(tmp_path):
    """"Can I eat normal bread?" asks about food, as a recommendation does: the diet ("I'm coeliac") answers it, not
    the bakery's best seller. "I run a small bakery called Flour & Co" states the user's bakery, so it names it
    before "her name is Joana" (the new baker's name)."""
    from memoryx.search.preferences import asks_food, asks_recommendation
    from tests.support import told

    assert asks_recommendation("Can I eat normal bread?") and asks_food("Can I eat normal bread?")
    said = [("2024-01-08", "Hi, I'm Rosa. I run a small bakery called Flour & Co in Porto with my brother Tiago."),
            ("2024-01-17", "Our best seller is the pastel de nata, we bake about 300 a day"),
            ("2024-01-26", "I'm coeliac, funny for a baker I know"),
            ("2024-02-25", "We hired a new baker, her name is Joana, she starts Monday")]
    with told(tmp_path, said, now="2025-12-20T12:00:00+00:00") as first:
        assert "coeliac" in first("Can I eat normal bread?")
        assert "Flour & Co" in first("What's the name of my bakery?")


@pytest.mark.hand_ranking
def test_asked_what_holds_now_the_later_memory_on_the_same_thing_comes_first(tmp_path):
    """"What days is crew practice now?": the coach moved practice twice; the later message shares fewer of the
    question's words ("practice", not "crew") but tells how things stand, so it comes first."""
    from memoryx.core.text import tokenize
    from memoryx.search.current import now_topic
    from tests.support import told

    asked = "What days is crew practice now?"
    assert now_topic(asked, tuple(tokenize(asked))) == tuple(sorted(set(tokenize("days crew practice"))))
    assert now_topic("What days was practice before?", tuple(tokenize("days practice"))) == ()
    said = [("2024-01-08", "Hey! I'm Nina, 27. I coach age-group swimming at the Southeast Portland YMCA."),
            ("2024-03-08", "Coach Rivera just moved our morning crew practices to Tuesdays and Thursdays at 5:30am."),
            ("2024-12-01", "Big news: I got hired as head swim coach at Lakeridge High School!"),
            ("2025-02-03", "Coach Rivera changed practice again, now it's Monday, Wednesday and Friday at 6am."),
            ("2025-03-01", "Sam's birthday is March 14, he always jokes that it's Pi Day.")]
    with told(tmp_path, said, now="2025-12-20T12:00:00+00:00") as first:
        assert "Monday" in first("What days is crew practice now?")


def test_what_i_cannot_stand_or_eat_is_answered_by_the_preference_said_in_passing(tmp_path):
    """"Which herb can't I stand?", "私が食べちゃいけないもの": the dislike or allergy the user said inside a request
    answers, as a recommendation question's preferences do."""
    from memoryx.search.preferences import asks_recommendation

    for q in ("Which herb can't I stand?", "Is there any food I really don't like?", "私が食べちゃいけないものって何？",
              "我不吃的配料是什么？"):
        assert asks_recommendation(q), q
    assert not asks_recommendation("Where do I live now?")
