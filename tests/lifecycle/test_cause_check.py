"""Where a chat model is configured, a consolidation pass asks it about the cause links its rule found (one
batched call): a rejected link is not written and the rejection stays in the judgment record; an accepted one
carries the model's reason. (With the offline model the rule stands: tests/lifecycle/test_consolidate_causal.py.)"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

from memoryx.api.memory import Memory
from memoryx.core.scope import Scope
from memoryx.lifecycle.cause_check import check_causes, is_offline
from tests.support import shared_embeddings

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


class TaskModel(FakeMessagesListChatModel):
    """Answers each consolidation task by its tag: merges refused, causes judged by `accept(cause, effect)`."""

    accept: object = None
    asked: list = []

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        system, human = messages[0].content, messages[-1].content
        if "consolidate_cause_check" in system:
            items = json.loads(human.split("LINKS_JSON:", 1)[1])
            self.asked.append(items)
            answer = {"links": [{"link": i["link"], "causes": self.accept(i["cause"], i["effect"]),
                                 "reason": "checked"} for i in items]}
        elif "consolidate_merge" in system:
            answer = {"pairs": [{"pair": p["pair"], "same": False} for p in json.loads(human.split("PAIRS_JSON:", 1)[1])]}
        elif "consolidate_summarize" in system or "consolidate_digest" in system:
            answer = {"summaries": []}
        else:
            raise AssertionError(f"unexpected call: {system[:80]}")
        self.responses = [AIMessage(content=json.dumps(answer))]
        self.i = 0
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def test_offline_is_recognised_and_keeps_the_rule():
    links = [{"source_id": "a", "target_id": "b", "relation": "causes", "reason": "rule"}]
    kept, record = check_causes(None, links, {"a": "x", "b": "y"})
    assert kept == links and record["by"].startswith("rule (offline model")
    assert is_offline(None) and not is_offline(TaskModel(responses=[AIMessage(content="")]))


def test_the_model_rejects_a_cause_the_rule_found(tmp_path):
    model = TaskModel(responses=[AIMessage(content="")], accept=lambda cause, effect: "Oslo" not in cause, asked=[])
    alice = Scope(user_id="alice")
    with Memory(data_dir=tmp_path / "d", graph_backend="none", llm=model, embeddings=shared_embeddings()) as m:
        ids = []
        for i, text in enumerate(["My flight to Oslo was cancelled",
                                  "I missed the conference because my flight to Oslo was cancelled",
                                  "I was exhausted after the night shift",
                                  "I skipped the gym because I was exhausted after the night shift"]):
            row = m.services.sql.insert_memory(scope=alice, text=text, created_at=T0 + timedelta(hours=i))
            m.services.projector.sync_memories([row["id"]])
            ids.append(row["id"])
        report = m.consolidate(user_id="alice", now=T0 + timedelta(days=1))
        assert report["cause_check"] == "model" and len(model.asked) == 1 and len(model.asked[0]) == 2
        causes = {(k["source_id"], k["target_id"]) for k in m.services.sql.memory_links(ids)
                  if k["relation"] == "causes"}
        assert causes == {(ids[2], ids[3])}  # the Oslo cause was refused by the model
        record = m.judgments(report["trace_id"])["parsed_operations"]
        [rejected] = record["cause_check"]["rejected"]
        assert (rejected["source_id"], rejected["target_id"]) == (ids[0], ids[1]) and "model:" in rejected["reason"]
        [kept] = [k for k in record["links"] if k["relation"] == "causes"]
        assert re.search(r"model: checked", kept["reason"])
