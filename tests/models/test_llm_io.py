"""models/llm_io: reading model answers (think blocks, fences, prose, deep nesting), call_with_retry (the
model sees its parse error; giving up is a clean RetriesExhausted) and the tools -> JSON mode switch."""

from __future__ import annotations

import time

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import Field

from memoryx.errors import ModelOutputError
from memoryx.models.llm_io import (
    MalformedOutputError,
    RetriesExhausted,
    ToolsUnavailable,
    call_with_retry,
    collect_tool_calls,
    extract_json,
    loads_lenient,
    message_text,
    tools_or_json,
)

PROMPT = [SystemMessage(content="Answer JSON."), HumanMessage(content="question")]
RETRY = "Your answer could not be used: {error}. Answer with {{\"x\": ...}} only."


class Recording(FakeMessagesListChatModel):
    """Answers from `responses` in order; records the messages of every call; the first `failures`
    calls raise."""

    calls: list = Field(default_factory=list)
    failures: int = 0

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.calls.append(list(messages))
        if len(self.calls) <= self.failures:
            raise ConnectionError("endpoint down")
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def scripted(*answers: str, failures: int = 0) -> Recording:
    return Recording(responses=[AIMessage(content=a) for a in answers], failures=failures)


def parse_x(answer) -> int:
    data = extract_json(message_text(answer))
    if not isinstance(data, dict) or not isinstance(data.get("x"), int):
        raise ValueError('the answer has no integer "x"')
    return data["x"]


# --------------------------------------------------------------------------------------- reading


def test_think_blocks_fences_and_prose_are_tolerated():
    raw = '<think>maybe {"x": 0}</think>\nHere it is:\n```json\n{"x": 1}\n```\nHope that helps.'
    assert extract_json(raw) == {"x": 1}
    assert extract_json('<reasoning>[1]</reasoning> Answer: [2, 3] done') == [2, 3]
    assert extract_json('no opening tag</think>{"x": 4}') == {"x": 4}
    assert extract_json('```\n{"x": 5}\n```') == {"x": 5}
    assert extract_json('prose {not json} then {"x": 6}') == {"x": 6}


@pytest.mark.parametrize("text", ["no json here", "", "{broken", "<think>{\"x\": 1}</think> nothing"])
def test_unreadable_answers_are_malformed_output(text):
    with pytest.raises(MalformedOutputError):
        extract_json(text)


@pytest.mark.parametrize("text", ["[" * 100_000, '{"a": ' * 100_000, "prose " + "[" * 50_000 + "]" * 50_000])
def test_deep_nesting_is_malformed_output_not_a_crash(text):
    start = time.perf_counter()
    with pytest.raises(MalformedOutputError, match="nested too deeply") as info:
        extract_json(text)
    assert isinstance(info.value, ValueError) and isinstance(info.value, ModelOutputError)
    assert time.perf_counter() - start < 5, "no quadratic rescan of the nesting"
    assert loads_lenient(text) is None


def test_message_text_and_lenient_json():
    assert message_text(AIMessage(content=[{"type": "text", "text": "a"}, "b"])) == "ab"
    assert message_text("plain") == "plain"
    assert loads_lenient('{"a": [1, 2,],}') == {"a": [1, 2]}
    assert loads_lenient({"a": 1}) == {"a": 1} and loads_lenient(None) is None


def test_tool_calls_are_read_from_the_call_list_and_from_the_text():
    parsed = AIMessage(content="", tool_calls=[{"name": "t", "args": {"a": 1}, "id": "1"}])
    assert collect_tool_calls(parsed) == [{"name": "t", "args": {"a": 1}}]
    in_text = AIMessage(content='<think>x</think><tool_call>{"name": "t", "arguments": {"a": 2}}</tool_call>')
    assert collect_tool_calls(in_text) == [{"name": "t", "args": {"a": 2}}]
    assert collect_tool_calls(AIMessage(content="just prose")) == []


# --------------------------------------------------------------------------------------- call_with_retry


def test_first_good_answer_is_one_call():
    llm = scripted('{"x": 7}')
    reply = call_with_retry(llm, PROMPT, parse_x, retry_prompt=RETRY)
    assert (reply.value, reply.calls, reply.raw) == (7, 1, '{"x": 7}')
    assert reply.latency_ms >= 0 and len(llm.calls) == 1


def test_retry_shows_the_model_its_answer_and_its_parse_error():
    llm = scripted("Sure, x is seven.", '{"x": 7}')
    reply = call_with_retry(llm, PROMPT, parse_x, retry_prompt=RETRY)
    assert (reply.value, reply.calls) == (7, 2)
    assert "Sure, x is seven." in reply.raw and '{"x": 7}' in reply.raw
    second = llm.calls[1]
    assert second[: len(PROMPT)] == PROMPT
    assert isinstance(second[-2], AIMessage) and second[-2].content == "Sure, x is seven."
    assert isinstance(second[-1], HumanMessage)
    assert "no JSON object found" in second[-1].content and '{"x": ...}' in second[-1].content


def test_gives_up_cleanly_after_the_attempts():
    llm = scripted("nonsense", '{"y": 1}', '{"x": 1}')
    with pytest.raises(RetriesExhausted) as info:
        call_with_retry(llm, PROMPT, parse_x, retry_prompt=RETRY)
    err = info.value
    assert isinstance(err, ModelOutputError) and not err.call_failed
    assert err.calls == 2 and len(llm.calls) == 2 and 'integer "x"' in err.problem
    assert "nonsense" in err.raw and err.answer.content == '{"y": 1}'
    assert isinstance(err.__cause__, ValueError)


def test_deeply_nested_answer_is_retried_then_given_up_without_recursion_error():
    llm = scripted("[" * 100_000, "{" * 100_000)
    with pytest.raises(RetriesExhausted):
        call_with_retry(llm, PROMPT, parse_x, retry_prompt=RETRY)
    assert "nested too deeply" in llm.calls[1][-1].content


def test_single_attempt_means_no_retry():
    llm = scripted("nonsense", '{"x": 1}')
    with pytest.raises(RetriesExhausted) as info:
        call_with_retry(llm, PROMPT, parse_x, retry_prompt=RETRY, attempts=1)
    assert info.value.calls == 1 and len(llm.calls) == 1


def test_call_errors_give_up_at_once_unless_retried():
    llm = scripted('{"x": 1}', failures=1)
    with pytest.raises(RetriesExhausted) as info:
        call_with_retry(llm, PROMPT, parse_x, retry_prompt=RETRY)
    assert info.value.call_failed and info.value.answer is None and len(llm.calls) == 1
    assert "endpoint down" in info.value.problem and isinstance(info.value.__cause__, ConnectionError)

    llm = scripted('{"x": 1}', failures=1)
    reply = call_with_retry(llm, PROMPT, parse_x, retry_prompt=RETRY, retry_call_errors=True)
    assert reply.value == 1 and reply.calls == 2 and reply.raw.startswith("<error: model call failed")
    assert llm.calls[1] == PROMPT  # the same conversation again: there is no answer to show

    llm = scripted('{"x": 1}', failures=2)
    with pytest.raises(RetriesExhausted, match="endpoint down"):
        call_with_retry(llm, PROMPT, parse_x, retry_prompt=RETRY, retry_call_errors=True)


def test_a_parser_bug_is_not_a_bad_answer():
    def buggy(answer):
        raise TypeError("bug in the parser")

    llm = scripted('{"x": 1}')
    with pytest.raises(TypeError):
        call_with_retry(llm, PROMPT, buggy, retry_prompt=RETRY)
    assert len(llm.calls) == 1


# --------------------------------------------------------------------------------------- tools, then JSON


def _switch(mode, tools_result, *, no_call=None):
    seen = []

    def by_tools():
        seen.append("tools")
        if isinstance(tools_result, Exception):
            raise tools_result
        return tools_result

    def by_json(attempts):
        seen.append(f"json{attempts}")
        return "from json"

    return tools_or_json(mode, by_tools, by_json, step="Test step", trace_id="trace-x", when_no_call=no_call), seen


def test_tools_or_json_modes():
    assert _switch("tools", "from tools") == ("from tools", ["tools"])
    assert _switch("auto", "from tools") == ("from tools", ["tools"])
    assert _switch("auto", ToolsUnavailable("400")) == ("from json", ["tools", "json1"])
    assert _switch("json", "unused") == ("from json", ["json2"])
    assert _switch("tools", ToolsUnavailable("prose", no_call=True), no_call=lambda: "nothing") == ("nothing", ["tools"])
    with pytest.raises(ModelOutputError, match="trace-x") as info:
        _switch("tools", ToolsUnavailable("400"))
    assert "Test step by tool calling failed: 400" in str(info.value) and "GRAPH_EXTRACTION_MODE" in str(info.value)


# --------------------------------------------------------------------------------------- bounds


def test_degenerate_answers_are_named_and_retried():
    from memoryx.models.llm_io import degenerate

    cut = AIMessage(content='{"x": 1', response_metadata={"finish_reason": "length"})
    assert "cut off" in degenerate(cut)
    assert degenerate(AIMessage(content="")) == "the answer is empty"
    assert "empty JSON" in degenerate(AIMessage(content="```json\n{ }\n```"))
    assert "repeats" in degenerate(AIMessage(content="the " * 2000))
    assert degenerate(AIMessage(content='{"x": 1}')) is None
    llm = scripted("{}", '{"x": 2}')
    reply = call_with_retry(llm, PROMPT, parse_x, retry_prompt=RETRY)
    assert reply.value == 2 and "empty JSON" in llm.calls[1][-1].content
    assert "<unusable: the answer is an empty JSON object {}" in reply.raw


def test_raw_answers_are_capped_in_the_record_and_in_the_retry():
    from memoryx.models.llm_io import unusable_notes

    llm = scripted("y" * 50_000, '{"x": 3}')
    reply = call_with_retry(llm, PROMPT, parse_x, retry_prompt=RETRY, raw_cap=1000)
    assert len(reply.raw) < 1300 and "more characters dropped" in reply.raw
    assert len(llm.calls[1][-2].content) < 1100  # the echoed answer: the retry cannot overflow the context
    assert unusable_notes(reply.raw) and unusable_notes(reply.raw)[0].startswith("unusable:")


def test_no_call_starts_once_the_time_budget_is_spent():
    from memoryx.models.llm_io import TimeBudgetSpent

    llm = scripted('{"x": 1}')
    with pytest.raises(TimeBudgetSpent) as info:
        call_with_retry(llm, PROMPT, parse_x, retry_prompt=RETRY, deadline=time.time() - 1)
    assert llm.calls == [] and info.value.calls == 0 and isinstance(info.value, ModelOutputError)
    llm = scripted("nonsense", '{"x": 1}')

    class Slow(type(llm)):
        def _generate(self, *a, **k):
            time.sleep(0.2)
            return super()._generate(*a, **k)

    slow = Slow(responses=[AIMessage(content="nonsense"), AIMessage(content='{"x": 1}')])
    with pytest.raises(TimeBudgetSpent) as info:  # the retry would start after the deadline: it does not
        call_with_retry(slow, PROMPT, parse_x, retry_prompt=RETRY, deadline=time.time() + 0.1)
    assert info.value.calls == 1 and "nonsense" in info.value.raw and "no JSON object" in info.value.problem


def test_lone_surrogates_never_leave_the_reader():
    assert extract_json('{"a": "x\\ud800y"}') == {"a": "x\ufffdy"}
    assert message_text(AIMessage(content="a\udc00b")) == "a\ufffdb"
    assert collect_tool_calls(AIMessage(content="", tool_calls=[{"name": "t", "args": {"k": "\ud800"}, "id": "1"}]))[0]["args"] == {"k": "\ufffd"}


def test_models_from_specs_are_bounded_per_role():
    from memoryx.models.factory import make_chat_model
    from memoryx.settings import Settings

    settings = Settings(llm_base_url="http://127.0.0.1:9/v1", judgment_max_tokens=77, judgment_timeout_s=12.0)
    llm = make_chat_model("openai-compatible:gemma", settings, role="judgment")
    assert llm.max_tokens == 77 and llm.request_timeout == 12.0 and llm.max_retries == 0
    payload = llm._get_request_payload([HumanMessage(content="hi")])
    # langchain-openai sends max_completion_tokens; llama.cpp's server reads only max_tokens: both go out
    assert payload["max_completion_tokens"] == 77 and payload["extra_body"] == {"max_tokens": 77}
    default = make_chat_model("openai:gpt-4o-mini", Settings(llm_api_key="k"), role="graph")
    assert default.max_tokens == 1024 and default.request_timeout == 60.0
