"""The extraction decider: rules first (greetings, acknowledgements, questions without content; no model
call), then the extraction model; the decision and its reason are in the run's judgment record."""

from __future__ import annotations

import json

import pytest

from memoryx import Memory
from memoryx.core.chitchat import is_empty_question, rule_decision
from tests.support import NoModel, facts_answer, scripted


@pytest.mark.unit
def test_rules_in_three_languages():
    assert rule_decision(["Hi!", "thanks"]) == ("skip", "greetings, thanks and acknowledgements only")
    assert rule_decision(["What's the weather like today?"])[0] == "skip"
    assert is_empty_question("今天星期几？") and is_empty_question("今日は何曜日ですか？")
    assert not is_empty_question("Do you remember my dog's name?")  # about the speaker: the model decides
    assert not is_empty_question("我养的猫叫什么？")
    assert rule_decision(["I moved to Lyon last week."]) is None


def test_a_rule_skip_calls_no_model_and_says_why(tmp_path):
    with Memory(data_dir=tmp_path / "d", graph_backend="none", llm=NoModel()) as m:
        out = m.add([{"role": "user", "content": "Hello!"}, {"role": "user", "content": "What time is it?"}],
                    user_id="ann")
        assert out["results"] == []
        record = m.judgments(out["trace_id"])
        assert "extraction decision: skip (rule): questions without content" in json.dumps(record)


def test_the_model_decides_the_rest_and_the_record_says_so(tmp_path):
    llm = scripted(json.dumps({"facts": []}), facts_answer("User moved to Lyon"))
    with Memory(data_dir=tmp_path / "d", graph_backend="none", llm=llm) as m:
        nothing = m.add("The movie last night was something else.", user_id="ann")
        assert nothing["results"] == []
        assert "extraction decision: skip (model)" in json.dumps(m.judgments(nothing["trace_id"]))
        kept = m.add("I moved to Lyon last week.", user_id="ann")
        assert kept["results"][0]["event"] == "ADD"
        assert "extraction decision: remember (model)" in json.dumps(m.judgments(kept["trace_id"]))
