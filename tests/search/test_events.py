"""Two-event questions split into their events, and the keyword lists merged so each event's best match is a
top hit."""

from __future__ import annotations

import pytest

from memoryx.search.events import event_phrases, merged_hits


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
