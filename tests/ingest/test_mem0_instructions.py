"""Custom instructions (extraction / update prompts, includes, excludes), custom categories,
procedural memory and image parts, through the Python API with the offline model or scripted fakes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

from memoryx import Memory
from memoryx.ingest.add_options import effective_instructions, instruction_input
from memoryx.ingest.instructions import apply_excludes, assign_categories, group_by_category, topic_keywords
from memoryx.models.llm_io import message_text
from memoryx.settings import Settings
from tests.support import facts_answer


class Recording(FakeMessagesListChatModel):
    """Scripted answers; remembers the system prompt of every call."""

    seen: list = []

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any):
        self.seen.append(message_text(messages[0]))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def _recording(*answers: str) -> Recording:
    return Recording(responses=[AIMessage(content=a) for a in answers], seen=[])


# ---- the rules alone --------------------------------------------------------------------------------------


def test_exclude_rule_lexicon_and_own_words():
    facts = [{"text": t} for t in ("User has type 2 diabetes", "User is allergic to peanuts", "User lives in Berlin",
                                   "用户有过敏", "User's salary is 80k", "User plays chess")]
    kept, dropped = apply_excludes(facts, "no health data, chess")
    assert [f["text"] for f in kept] == ["User lives in Berlin", "User's salary is 80k"]
    assert {d["text"]: d["exclude"] for d in dropped}["User plays chess"] == "chess"
    assert {d["text"]: d["keyword"] for d in dropped}["User has type 2 diabetes"] == "diabet"
    assert "health" not in topic_keywords("chess")  # a topic outside the lexicon brings only its own words


def test_categories_by_keywords_and_model_names_checked():
    cats = {"food": "meals, cooking, restaurants, sushi", "travel": "trips and flights"}
    facts = [{"text": "User loves sushi"}, {"text": "User booked flights to Rome"},
             {"text": "User likes jazz", "categories": ["music", "food"]}, {"text": "User is tall"}]
    out = assign_categories(facts, cats)
    assert [f["categories"] for f in out] == [["food"], ["travel"], ["food"], []]
    groups = group_by_category([{"id": "1", "metadata": {"categories": ["food"]}}, {"id": "2", "category": "fact"}])
    assert set(groups) == {"food", "fact"}


def test_settings_give_defaults_per_call_overrides():
    s = Settings(custom_fact_extraction_prompt="S", memory_excludes="health", custom_categories={"a": "b"})
    eff = effective_instructions(s, instruction_input(prompt="P", includes="hobbies"))
    assert eff == {"prompt": "P", "includes": "hobbies", "excludes": "health", "categories": {"a": "b"}}
    assert instruction_input(categories=[{"food": "meals"}, "misc"])["categories"] == {"food": "meals", "misc": ""}


# ---- through Memory ---------------------------------------------------------------------------------------


def test_excludes_enforced_and_recorded_with_the_offline_model(tmp_path):
    with Memory(data_dir=tmp_path / "d", graph_backend="none") as m:
        out = m.add("I have type 2 diabetes. I live in Berlin.", user_id="u", excludes="health data")
        assert [r["memory"] for r in out["results"]] == ["User lives in Berlin"]
        record = m.judgments(out["trace_id"])
        assert "dropped by the exclude rule: topic 'health data'" in record["reasoning"]
        # every fact excluded: nothing written, and the run's record still says why
        out = m.add("I was diagnosed with asthma last year.", user_id="u", excludes="health")
        assert out["results"] == []
        assert "asthma" in m.judgments(out["trace_id"])["reasoning"]
        assert [r["memory"] for r in m.get_all(user_id="u")["results"]] == ["User lives in Berlin"]


def test_custom_prompts_reach_the_models_and_keep_the_format(tmp_path):
    extraction = _recording(facts_answer("User likes green tea"), facts_answer("User likes black tea"))
    judgment = _recording(json.dumps({"operations": [{"fact": 0, "event": "ADD", "reason": "r", "id": None,
                                                        "text": "User likes black tea"}]}))
    with Memory(data_dir=tmp_path / "d", graph_backend="none", extraction_llm=extraction, judgment_llm=judgment,
                custom_update_memory_prompt="OUR-UPDATE-RULES") as m:
        m.add("I like green tea", user_id="u", prompt="OUR-EXTRACTION-RULES", includes="drinks",
              custom_instructions="Write facts in English.")
        m.add("I like black tea", user_id="u", excludes="coffee")
    first, second = extraction.seen
    assert first.startswith("[memoryx-task: extract_facts]\nOUR-EXTRACTION-RULES") and '"facts"' in first
    assert "Remember in particular: drinks" in first and "Write facts in English." in first
    assert "NEVER extract facts about: coffee" in second and "OUR-EXTRACTION-RULES" not in second
    assert judgment.seen[0].startswith("[memoryx-task: judge_memory]\nOUR-UPDATE-RULES") and '"operations"' in judgment.seen[0]


def test_mem0_config_names_are_accepted():
    m_settings = Memory.from_config.__func__  # noqa: F841 - the classmethod exists
    from memoryx.api.mem0_config import settings_from_config

    s = settings_from_config({"llm": {"provider": "offline"}, "custom_fact_extraction_prompt": "X",
                              "custom_update_memory_prompt": "Y"})
    assert (s.custom_fact_extraction_prompt, s.custom_update_memory_prompt) == ("X", "Y")


def test_custom_categories_assigned_filtered_and_grouped(tmp_path):
    cats = {"food": "what the user eats: sushi, pizza, cooking", "places": "cities and homes where the user lives"}
    with Memory(data_dir=tmp_path / "d", graph_backend="none") as m:
        m.add("I love sushi. I live in Osaka. I have a dog named Max.", user_id="u", custom_categories=cats)
        rows = m.get_all(user_id="u")["results"]
        by_text = {r["memory"]: r["metadata"].get("categories") for r in rows}
        assert by_text["User likes sushi"] == ["food"] and by_text["User lives in Osaka"] == ["places"]
        assert by_text["User has a dog named Max"] is None
        food = m.get_all(user_id="u", filters={"metadata.categories": {"in": ["food"]}})["results"]
        assert [r["memory"] for r in food] == ["User likes sushi"]
        found = m.search("what does the user eat", user_id="u", filters={"metadata.categories": {"contains": "food"}})
        assert [r["memory"] for r in found["results"]] == ["User likes sushi"]
        assert set(group_by_category(rows)) == {"food", "places", "fact"}


def test_procedural_memory_for_an_agent(tmp_path):
    run = [{"role": "user", "content": "Scrape the titles of the OpenAI blog"},
           {"role": "assistant", "content": "Open https://openai.com/blog"},
           {"role": "tool", "content": "200 OK: 10 posts listed"},
           {"role": "assistant", "content": "Extract the h2 titles"},
           {"role": "tool", "content": "['GPT-5', 'Safety']"}]
    with Memory(data_dir=tmp_path / "d", graph_backend="none") as m:
        out = m.add(run, agent_id="scraper", memory_type="procedural_memory")
        (res,) = out["results"]
        text = m.get(res["id"])["memory"]
        assert "**Task Objective**: Scrape the titles of the OpenAI blog" in text
        assert "1. **Agent Action**: Open https://openai.com/blog" in text and "**Action Result**: 200 OK" in text
        assert text.index("1. **Agent Action**") < text.index("2. **Agent Action**: Extract the h2 titles")
        assert m.get(res["id"])["metadata"]["memory_type"] == "procedural_memory"
        recalled = m.search("scrape a blog", agent_id="scraper",
                            filters={"metadata.memory_type": "procedural_memory"})["results"]
        assert [r["id"] for r in recalled] == [res["id"]]
        with pytest.raises(Exception, match="agent_id"):
            m.add(run, user_id="u", memory_type="procedural_memory")
        with pytest.raises(Exception, match="memory_type"):
            m.add(run, agent_id="scraper", memory_type="semantic")


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def test_images_without_a_vision_model_are_noted_never_a_crash(tmp_path):
    msg = {"role": "user", "content": [{"type": "text", "text": "I live in Lisbon."},
                                       {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                                       {"type": "image_url", "image_url": "https://example.org/cat.jpg"}]}
    with Memory(data_dir=tmp_path / "d", graph_backend="none") as m:
        out = m.add([msg], user_id="u")
        assert len(out["warnings"]) == 2 and "not read: no vision model is configured" in out["warnings"][0]
        (row,) = m.get_all(user_id="u")["results"]
        assert row["memory"] == "User lives in Lisbon"
        assert row["metadata"]["images"][1] == "https://example.org/cat.jpg"
        assert row["metadata"]["images"][0].startswith("inline:image/png;sha256:")
        # mem0's single part as the whole content, and an image part without any url
        out = m.add([{"role": "user", "content": {"type": "image_url", "image_url": {"url": "https://x.org/a.png"}}},
                     {"role": "user", "content": [{"type": "image"}]}], user_id="u", infer=False)
        assert any("without a URL" in w for w in out["warnings"])
        assert "[image https://x.org/a.png: not read" in out["results"][0]["memory"]


def test_images_described_by_a_vision_model(tmp_path):
    vision = _recording("A red bicycle leaning on a wall.", "")
    msg = {"role": "user", "content": [{"type": "text", "text": "My new bike:"},
                                       {"type": "image_url", "image_url": {"url": "https://x.org/bike.jpg"}},
                                       {"type": "image_url", "image_url": {"url": "https://x.org/broken.jpg"}}]}
    with Memory(data_dir=tmp_path / "d", graph_backend="none", vision_llm=vision) as m:
        out = m.add([msg], user_id="u", infer=False)
        text = out["results"][0]["memory"]
        assert "[image https://x.org/bike.jpg] A red bicycle leaning on a wall." in text
        assert out["warnings"] == ["image https://x.org/broken.jpg was not read: the vision model failed: "
                                   "ValueError: the vision model returned no description"]
