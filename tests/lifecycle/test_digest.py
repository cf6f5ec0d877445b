"""Digests: more than digest_min_memories episodic memories of one period become one summary memory linked to
its sources (the chat model writes it; the offline model an extractive summary), and the pass's rollback
removes it and gives the sources back."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

from memoryx import Memory
from memoryx.lifecycle.digest import extractive, period_of
from tests.support import shared_embeddings

WEEK = datetime(2025, 3, 3, 8, tzinfo=timezone.utc)  # a Monday: ISO week 2025-W10
EVENTS = ["Ran 5 km along the river", "Met Lena for coffee at Café Kranz", "Fixed the kitchen tap",
          "Watched the Bayern match with Tom", "Booked flights to Lisbon for May", "Dentist checkup, no cavities",
          "Baked sourdough bread", "Visited grandma in Potsdam", "Finished reading Dune",
          "Team offsite at the lake", "Bought a new bike helmet", "Cooked ramen for the neighbours",
          "Car service at the garage", "Went to a jazz concert at B-Flat", "Planted tomatoes on the balcony",
          "Paid the electricity bill", "Yoga class with Mia", "Repaired the bike's back tyre",
          "Painted the hallway blue", "Called the insurance about the flood", "Took the cat to the vet",
          "Gave a talk at the Python meetup"]


def _tell(m, events, user="ivy", start=WEEK):
    ids = []
    for i, text in enumerate(events):
        when = (start + timedelta(hours=7 * i)).isoformat()  # all in one week
        ids.append(m.add([{"role": "user", "content": text, "timestamp": when}], user_id=user, infer=False)
                   ["results"][0]["id"])
    return ids


def test_periods_and_the_extractive_summary():
    assert period_of(WEEK, "week") == "2025-W10" and period_of(WEEK, "day") == "2025-03-03"
    assert period_of(WEEK, "month") == "2025-03"
    text = extractive("2025-W10", EVENTS)
    assert text.startswith("2025-W10: 22 events") and text == extractive("2025-W10", EVENTS)  # deterministic
    assert sum(e.rstrip(".") in text for e in EVENTS) == 5


def test_more_than_twenty_episodes_of_a_week_become_one_linked_summary(tmp_path):
    with Memory(data_dir=tmp_path / "d", graph_backend="none", embeddings=shared_embeddings()) as m:
        ids = _tell(m, EVENTS)
        _tell(m, [f"Again: {e}" for e in EVENTS[:5]], start=WEEK + timedelta(days=14))  # another week, five: none
        report = m.consolidate(user_id="ivy", now=WEEK + timedelta(days=30))
        assert report["digests"] == 1, report
        [digest] = [m.get(i) for i in report["summary_ids"] if m.get(i)["metadata"].get("sources") and
                    set(m.get(i)["metadata"]["sources"]) == set(ids)]
        assert digest["memory"].startswith("2025-W10: 22 events") and digest["memory_type"] == "semantic"
        assert all(m.get(i)["status"] == "summarized" and m.get(i)["metadata"]["summary_id"] == digest["id"] for i in ids)
        why = m.judgments(report["trace_id"])["parsed_operations"]["summaries"]
        assert any(x.get("digest") == "2025-W10" and "extractive (offline model)" in x["reason"] for x in why)
        m.rollback(report["trace_id"])
        assert m.get_all(user_id="ivy")["results"] and all(m.get(i)["status"] != "summarized" for i in ids)
        assert digest["id"] not in {r["id"] for r in m.get_all(user_id="ivy", limit=1000)["results"]}


def test_twenty_is_not_more_than_twenty_and_a_chat_model_writes_the_digest(tmp_path):
    class Digester(FakeMessagesListChatModel):
        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            system = messages[0].content
            if "consolidate_episode_digest" in system:
                answer = {"summaries": [{"cluster": 1, "text": "A busy week: sport, repairs, family and a talk."}]}
            else:  # merge / summarize / fold / cause checks: nothing
                answer = {"pairs": [], "summaries": [], "links": []}
            self.responses, self.i = [AIMessage(content=json.dumps(answer))], 0
            return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)

    llm = Digester(responses=[AIMessage(content="")])
    with Memory(data_dir=tmp_path / "d", graph_backend="none", llm=llm, embeddings=shared_embeddings()) as m:
        _tell(m, EVENTS[:20])
        assert m.consolidate(user_id="ivy", now=WEEK + timedelta(days=30))["digests"] == 0
        _tell(m, EVENTS[20:])
        report = m.consolidate(user_id="ivy", now=WEEK + timedelta(days=30))
        assert report["digests"] == 1
        texts = {m.get(i)["memory"] for i in report["summary_ids"]}
        assert "A busy week: sport, repairs, family and a talk." in texts
