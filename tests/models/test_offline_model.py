"""The offline rule-based model and the chat-model factory."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from memoryx.core.chitchat import is_chitchat
from memoryx.errors import InvalidInputError
from memoryx.models.factory import make_chat_model, model_name_of
from memoryx.models.offline import OfflineChatModel, judge, task_of
from memoryx.models.offline_rules import fact_text, parse_statement, parse_statements
from memoryx.prompts.facts import extraction_system_prompt, format_conversation
from memoryx.prompts.judge import MEMORY_UPDATE_PROMPT, format_judge_input, parse_judge_input
from memoryx.settings import Settings


@pytest.mark.parametrize("text, attribute, value, polarity, lang, canonical", [
    ("My name is Alice", "name", "Alice", True, "en", "User's name is Alice"),
    ("Call me Al", "name", "Al", True, "en", "User's name is Al"),
    ("I live in New York", "home", "New York", True, "en", "User lives in New York"),
    ("I just moved to Paris", "home", "Paris", True, "en", "User now lives in Paris"),
    ("I work at Acme Corp", "work", "Acme Corp", True, "en", "User works at Acme Corp"),
    ("I'm working for Globex", "work", "Globex", True, "en", "User works at Globex"),
    ("I really like sushi", "like", "sushi", True, "en", "User likes sushi"),
    ("I don't like sushi anymore", "like", "sushi", False, "en", "User no longer likes sushi"),
    ("I no longer enjoy jazz", "like", "jazz", False, "en", "User no longer likes jazz"),
    ("我叫小明", "name", "小明", True, "zh", "用户叫小明"),
    ("我住在北京", "home", "北京", True, "zh", "用户住在北京"),
    ("我搬到了上海", "home", "上海", True, "zh", "用户现在住在上海"),
    ("我在阿里巴巴工作", "work", "阿里巴巴", True, "zh", "用户在阿里巴巴工作"),
    ("我喜欢喝咖啡", "like", "喝咖啡", True, "zh", "用户喜欢喝咖啡"),
    ("我不再喜欢喝咖啡", "like", "喝咖啡", False, "zh", "用户不再喜欢喝咖啡"),
    ("私の名前は田中です", "name", "田中", True, "ja", "ユーザーの名前は田中"),
    ("私は東京に住んでいます", "home", "東京", True, "ja", "ユーザーは東京に住んでいる"),
    ("私は大阪に引っ越しました", "home", "大阪", True, "ja", "ユーザーは今大阪に住んでいる"),
    ("私はトヨタで働いています", "work", "トヨタ", True, "ja", "ユーザーはトヨタで働いている"),
    ("私は寿司が好きです", "like", "寿司", True, "ja", "ユーザーは寿司が好き"),
    ("もう寿司が好きではありません", "like", "寿司", False, "ja", "ユーザーはもう寿司が好きではない"),
])
def test_covered_statements_and_their_canonical_form(text, attribute, value, polarity, lang, canonical):
    st = parse_statement(text)
    assert (st.attribute, st.value, st.polarity, st.lang) == (attribute, value, polarity, lang)
    assert fact_text(st) == canonical
    again = parse_statement(canonical)  # the canonical text reads back as the same statement
    assert (again.attribute, again.value, again.polarity, again.person) == (attribute, value, polarity, "third")


def test_clauses_chitchat_and_uncovered():
    sts = parse_statements("Hi, my name is Bob. I live in Rome and I work at Fiat, but I don't like pasta anymore.")
    assert [(s.attribute, s.value, s.polarity) for s in sts] == [
        ("name", "Bob", True), ("home", "Rome", True), ("work", "Fiat", True), ("like", "pasta", False)]
    assert parse_statement("The weather is nice") is None
    assert is_chitchat("Hi there!") and is_chitchat("谢谢！") and is_chitchat("ok, thanks")
    assert not is_chitchat("I live in Rome")


def _ask(model, system, human):
    return model.invoke([SystemMessage(content=system), HumanMessage(content=human)])


def test_offline_extraction_answers_like_a_real_model():
    model = OfflineChatModel()
    answer = _ask(model, extraction_system_prompt(now="2025-01-01", agent_facts=False), format_conversation([
        {"role": "user", "content": "Hello! I live in Lisbon. I have a dog named Rex. Where is the beach?"},
        {"role": "assistant", "content": "I live in the cloud."},
        {"role": "user", "content": "我喜欢喝茶"}]))
    facts = json.loads(answer.content)["facts"]
    assert [f["text"] for f in facts] == ["User lives in Lisbon", "User has a dog named Rex", "用户喜欢喝茶"]
    assert facts[2]["category"] == "preference" and all(f["owner"] == "user" for f in facts)
    assert answer.usage_metadata["input_tokens"] > 100 and answer.usage_metadata["output_tokens"] > 10


def test_offline_judgments_are_deterministic():
    memories = [{"id": "0", "text": "User lives in Berlin"}, {"id": "1", "text": "User likes jazz"},
                {"id": "2", "text": "User works at Acme"}, {"id": "3", "text": "User no longer likes tea"}]
    facts = [{"fact": 0, "text": "User now lives in Paris"}, {"fact": 1, "text": "User no longer likes jazz"},
             {"fact": 2, "text": "User works at Acme"}, {"fact": 3, "text": "User likes tea"},
             {"fact": 4, "text": "User has a cat"}]
    text = format_judge_input(memories, facts)
    assert parse_judge_input(text) == (memories, facts)
    answer = _ask(OfflineChatModel(), MEMORY_UPDATE_PROMPT, text)
    ops = json.loads(answer.content)["operations"]
    assert list(ops[0])[:3] == ["fact", "reason", "event"]  # the reason comes before the decision
    got = [(o["fact"], o["event"], o["id"]) for o in ops]
    assert got == [(0, "UPDATE", "0"), (1, "DELETE", "1"), (1, "ADD", None), (2, "NONE", "2"),
                   (3, "DELETE", "3"), (3, "ADD", None), (4, "ADD", None)]
    assert judge(memories, facts) == ops


def test_task_tags_and_unknown_prompts():
    assert task_of([SystemMessage(content=MEMORY_UPDATE_PROMPT)]) == "judge_memory"
    assert task_of([SystemMessage(content=extraction_system_prompt(now="x", agent_facts=True))]) == "extract_facts"
    answer = OfflineChatModel().invoke("What is the capital of France?")
    assert "MEMORYX_LLM" in answer.content


def test_graph_tools_are_delegated_to_offline_graph():
    from memoryx.models.graph_tools import EXTRACTION_TOOLS

    bound = OfflineChatModel().bind_tools(EXTRACTION_TOOLS)
    answer = bound.invoke([SystemMessage(content="Extract entities and relations."),
                           HumanMessage(content="I live in Berlin")])
    assert answer.tool_calls, answer
    assert {c["name"] for c in answer.tool_calls} <= {"extract_entities", "establish_relationships"}


def test_factory_specs():
    settings = Settings(llm_base_url="http://127.0.0.1:9/v1", llm_api_key="k")
    assert isinstance(make_chat_model("offline", settings), OfflineChatModel)
    model = make_chat_model("openai:gpt-4o-mini", settings)
    assert model_name_of(model) == "gpt-4o-mini" and "127.0.0.1:9" in str(model.openai_api_base)
    vllm = make_chat_model("vllm:Qwen/Qwen2.5-7B-Instruct", settings)
    assert model_name_of(vllm) == "Qwen/Qwen2.5-7B-Instruct"
    injected = OfflineChatModel()
    assert make_chat_model(injected, settings) is injected
    with pytest.raises(InvalidInputError, match="MEMORYX_LLM_BASE_URL"):
        make_chat_model("vllm:x", Settings())
    with pytest.raises(InvalidInputError):
        make_chat_model("nosuchprovider:model", settings)
    assert model_name_of(OfflineChatModel().bind_tools([])) == "offline"


def test_prompts_reach_the_model_as_valid_text():
    """No template leftovers ({{ }}) in what a real model receives; reasons before events in the format."""
    judge_prompt = MEMORY_UPDATE_PROMPT
    extract_prompt = extraction_system_prompt(now="2025-03-10", agent_facts=True)
    for text in (judge_prompt, extract_prompt):
        assert "{{" not in text and "}}" not in text and "{now}" not in text
    assert judge_prompt.index('"reason"') < judge_prompt.index('"event"')
    assert "2025-03-10" in extract_prompt and '"owner": "agent"' in extract_prompt
