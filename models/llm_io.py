"""Model I/O: the one place that reads what a chat model answered and asks again when it cannot.

- `message_text` / `extract_json`: the text of an answer, and the first JSON object or array in it
  (<think> blocks, code fences and prose around it tolerated). Unreadable output, nesting too deep
  included, is a `MalformedOutputError`, never a crash.
- `loads_lenient`, `collect_tool_calls`, `message_json`: tool calls as models really emit them (valid,
  invalid, or written into the text) and JSON read without raising.
- `call_with_retry`: call, parse, and on a parse error ask again showing the model its error. A degenerate
  answer (cut off at the output cap, empty, `{}`, one token repeated) is a parse error too; raw answers are
  capped before they are stored or shown back; no call starts once the add run's time budget is spent.
- `tools_or_json`: the graph steps' mode switch: tool calling, falling back to a JSON answer.
"""

from __future__ import annotations

import json
import logging
import re
import time
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Generic, Sequence, TypeVar

from memoryx.errors import ModelOutputError

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

log = logging.getLogger(__name__)

T = TypeVar("T")

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_UNOPENED_THINK_END = re.compile(r"^.*?</(?:think|thinking|reasoning)>", re.S | re.I)
_FENCE = re.compile(r"```(?:json|JSON|javascript)?\s*(.*?)```", re.S)
_TOOL_CALL_TAG = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
RAW_SEPARATOR = "\n---\n"  # between the answers of one call_with_retry in its `raw`


class MalformedOutputError(ModelOutputError, ValueError):
    """A model answer that cannot be read. A ValueError too, so every parser's "bad answer" path (and
    call_with_retry's retry) handles it like any other parse error."""


# --------------------------------------------------------------------------------------- reading answers


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_str(text: str) -> str:
    """`text` with lone UTF-16 surrogates (a JSON "\\udc00" escape, a broken decoder) as U+FFFD: they
    cannot be encoded as UTF-8, so no database, vector store or HTTP answer could take them."""
    if not _LONE_SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def clean_value(value: Any) -> Any:
    """A decoded JSON value (or tool arguments) with every string, keys included, passed through
    `clean_str`; iterative, as the value may be nested as deeply as the decoder allowed."""
    if isinstance(value, str):
        return clean_str(value)
    if not isinstance(value, (dict, list)):
        return value
    root: list = [value]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]
    while stack:
        parent, key, node = stack.pop()
        if isinstance(node, dict):
            new: Any = {}
            parent[key] = new
            for k, v in node.items():
                k = clean_str(k) if isinstance(k, str) else k
                new[k] = v
                stack.append((new, k, v))
        elif isinstance(node, list):
            new = list(node)
            parent[key] = new
            stack.extend((new, i, v) for i, v in enumerate(node))
        elif isinstance(node, str):
            parent[key] = clean_str(node)
    return root[0]


def message_text(message: Any) -> str:
    """The text of a chat message (string or content-block list), or of a plain string; lone surrogates
    replaced (`clean_str`)."""
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return clean_str(content)
    if isinstance(content, list):
        return clean_str("".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content))
    return clean_str(str(content))


def extract_json(text: str) -> Any:
    """The first JSON object/array in a model answer: <think> blocks and code fences stripped, prose
    around it tolerated. Raises MalformedOutputError (a ValueError) saying what was wrong."""
    if text is None:
        raise MalformedOutputError("the answer is empty")
    cleaned = _UNOPENED_THINK_END.sub("", _THINK.sub("", text), count=1)
    candidates = [m.group(1) for m in _FENCE.finditer(cleaned)] + [cleaned]
    decoder = json.JSONDecoder()
    last_error = "no JSON object found in the answer"
    for chunk in candidates:
        chunk = chunk.strip()
        for start, ch in enumerate(chunk):
            if ch not in "{[":
                continue
            try:
                value, _ = decoder.raw_decode(chunk[start:])
            except json.JSONDecodeError as exc:
                last_error = f"invalid JSON: {exc.msg} at position {exc.pos}"
                continue
            except RecursionError:
                # every later start position lies inside the same nesting: stop here, not after n^2 work
                raise MalformedOutputError("the JSON in the answer is nested too deeply to read") from None
            if isinstance(value, (dict, list)):
                return clean_value(value) if "\\u" in chunk else value  # only escapes make surrogates here
    raise MalformedOutputError(last_error)


def loads_lenient(text: Any) -> Any | None:
    """A JSON value out of a model answer (as `extract_json`), also with trailing commas; a dict or list
    passes through. None when nothing can be read."""
    if isinstance(text, (dict, list)):
        return text
    if not isinstance(text, str):
        return None
    for variant in (text, _TRAILING_COMMA.sub(r"\1", text)):
        try:
            return extract_json(variant)
        except ValueError:
            pass
    return None


def message_json(message: Any) -> Any | None:
    """The JSON value in a message's text, or None."""
    return loads_lenient(message_text(message))


def collect_tool_calls(message: Any) -> list[dict]:
    """[{"name", "args"}] from an AIMessage: parsed tool calls, invalid ones whose arguments can still be
    read, and tool calls written into the text (`<tool_call>{...}</tool_call>` or a bare
    {"name": ..., "arguments": ...} object), as emitted by models served without a tool parser."""
    calls: list[dict] = []
    for tc in getattr(message, "tool_calls", None) or []:
        args = tc.get("args")
        args = loads_lenient(args) if isinstance(args, str) else clean_value(args)
        calls.append({"name": clean_str(tc.get("name") or ""), "args": args if isinstance(args, (dict, list)) else {}})
    for tc in getattr(message, "invalid_tool_calls", None) or []:
        args = loads_lenient(tc.get("args") or "")
        if isinstance(args, (dict, list)):
            calls.append({"name": clean_str(tc.get("name") or ""), "args": args})
    if calls:
        return calls
    text = _THINK.sub("", message_text(message))
    blobs = [loads_lenient(b) for b in _TOOL_CALL_TAG.findall(text)] or [loads_lenient(text)]
    for blob in blobs:
        for item in blob if isinstance(blob, list) else [blob]:
            if isinstance(item, dict) and isinstance(item.get("name"), str) and any(
                k in item for k in ("arguments", "args", "parameters")
            ):
                args = item.get("arguments", item.get("args", item.get("parameters")))
                args = loads_lenient(args) if isinstance(args, str) else args
                calls.append({"name": clean_str(item["name"]), "args": args if isinstance(args, (dict, list)) else {}})
    return calls


# --------------------------------------------------------------------------------------- asking again


# --------------------------------------------------------------------------------------- bounds

DEADLINE_KEY = "memoryx_deadline"  # configurable key of an add run's deadline (epoch seconds, add_run_config)
RAW_CAP = 4000  # characters of one raw answer kept (settings.llm_raw_answer_cap overrides per call)
_UNUSABLE = re.compile(r"^<((?:unusable|warning): .*)>$", re.M)
_CUT_OFF = {"length", "max_tokens", "max_output_tokens", "model_length_context_window_exceeded"}


def cap_text(text: str, limit: int = RAW_CAP) -> str:
    """`text` cut to `limit` characters with a marker saying how much was dropped (a runaway answer of
    8,000 tokens must not fill the judgment record nor the retry's context)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[{len(text) - limit} more characters dropped]"


def degenerate(message: Any) -> str | None:
    """Why an answer cannot be a real one — cut off at the output-token cap, empty, an empty JSON object, or
    the same few tokens repeated — or None. Said in words the model can act on in a retry."""
    meta = getattr(message, "response_metadata", None) or {}
    finish = meta.get("finish_reason") or meta.get("stop_reason") or meta.get("done_reason")
    if isinstance(finish, str) and finish.lower() in _CUT_OFF:
        return f"the answer was cut off at the output-token limit (finish_reason={finish}); answer much shorter"
    if getattr(message, "tool_calls", None) or getattr(message, "invalid_tool_calls", None):
        return None
    text = _THINK.sub("", message_text(message)).strip()
    if not text:
        return "the answer is empty"
    if re.fullmatch(r"(?:```(?:json)?\s*)?\{\s*\}(?:\s*```)?", text):
        return "the answer is an empty JSON object {}"
    if len(text) >= 1000 and len(zlib.compress(text.encode("utf-8", "replace"))) < len(text) * 0.04:
        return "the answer repeats the same text over and over"
    return None


def unusable_notes(raw: str | None) -> list[str]:
    """The problems `call_with_retry` wrote into a `raw` after each unusable (or usable but degenerate)
    answer."""
    return _UNUSABLE.findall(raw or "")


def run_deadline(budget_s: float | None) -> float | None:
    """The deadline (epoch seconds) of the add run this node runs in: the one its config carries
    (add_run_config), else `budget_s` from now (a run started without it, e.g. by `langgraph dev`: each step
    then gets the whole budget). None: no budget."""
    from langgraph.config import get_config  # LangGraph's run config: only inside a run

    value = None
    try:
        value = (get_config().get("configurable") or {}).get(DEADLINE_KEY)
    except RuntimeError:  # called outside a graph run (a node test, a direct call)
        pass
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return time.time() + budget_s if budget_s else None


def time_left(deadline: float | None) -> float | None:
    """Seconds left before `deadline` (negative once spent); None without a deadline."""
    return None if deadline is None else deadline - time.time()


def check_deadline(deadline: float | None, step: str) -> None:
    """TimeBudgetSpent when the run's time budget is spent: no model call may start any more."""
    left = time_left(deadline)
    if left is not None and left <= 0:
        raise TimeBudgetSpent(f"{step}: the add run's time budget is spent", call_failed=True, raw="",
                              latency_ms=0.0, calls=0, answer=None)


@dataclass
class ModelReply(Generic[T]):
    """What `call_with_retry` got: the parsed value, every answer's text joined by RAW_SEPARATOR (a failed
    call as "<error: ...>"), the latency of all calls in ms, and the number of calls made."""

    value: T
    raw: str
    latency_ms: float
    calls: int


class RetriesExhausted(ModelOutputError):
    """`call_with_retry` gave up. `problem`: the last parse error, or "model call failed: <error>";
    `call_failed`: the last attempt failed in the call itself (then `answer` is None, else the last answer
    message); `raw`, `latency_ms`, `calls` as in ModelReply."""

    def __init__(self, problem: str, *, call_failed: bool, raw: str, latency_ms: float, calls: int,
                 answer: BaseMessage | None):
        super().__init__(f"The model's answer could not be used after {calls} attempt(s): {problem}")
        self.problem, self.call_failed, self.answer = problem, call_failed, answer
        self.raw, self.latency_ms, self.calls = raw, latency_ms, calls


class TimeBudgetSpent(RetriesExhausted):
    """The add run's time budget (settings.add_time_budget_s) was spent before a model call could start:
    the step keeps what it has (the judge ADDs its facts by rule, the graph steps skip) and says so."""


def call_with_retry(llm: Any, messages: Sequence[BaseMessage], parse: Callable[[BaseMessage], T], *,
                    retry_prompt: str, attempts: int = 2, config: dict | None = None,
                    retry_call_errors: bool = False, deadline: float | None = None,
                    raw_cap: int = RAW_CAP) -> ModelReply[T]:
    """Call `llm` with `messages` and return `parse(answer)` in a ModelReply.

    `parse` gets the answer message (use `message_text(answer)` for its text, `extract_json` for its JSON)
    and raises ValueError (MalformedOutputError, pydantic's ValidationError, ...) when the answer is
    unusable. Then, while attempts remain, the model is called again with its answer and
    `retry_prompt.format(error=<the parse error>)` appended to the conversation, so it sees what was wrong
    (literal braces in `retry_prompt` are written `{{` `}}`).

    `attempts` counts calls (2: one retry; 1: no retry). When the call itself raises, the same conversation
    is sent again while attempts remain if `retry_call_errors`, else the caller gives up at once.

    A degenerate answer (see `degenerate`: cut off at the output cap, empty, `{}`, repetition) that `parse`
    rejects is retried with both problems named; one it can read (a whole JSON object, then junk up to the
    cap) is kept, with a "<warning: ...>" line in `raw`. Each raw answer is capped at `raw_cap` characters, in `raw` and in the
    answer echoed back to the model (a runaway answer must not overflow the retry's context); an unusable
    one is followed in `raw` by a line "<unusable: problem>" (`unusable_notes` reads them back).
    No call starts after `deadline` (epoch seconds, see `run_deadline`): TimeBudgetSpent (a
    RetriesExhausted) instead; one call may still overrun it by at most the client's request timeout.

    Giving up raises RetriesExhausted (a ModelOutputError) carrying the last problem, whether the call
    failed, the raw answers, the latency and the last answer, for the caller to record or to reword with
    its trace id; it is chained to the last parse or call error. Anything else the parser raises (a bug,
    not a bad answer) propagates unchanged.
    """
    start = time.perf_counter()
    conversation = list(messages)
    raws: list[str] = []
    problem, answer, cause = "", None, None
    calls = 0
    while calls < attempts:
        left = time_left(deadline)
        if left is not None and left <= 0:
            spent = "the add run's time budget is spent" + (f" (after: {problem})" if problem else "")
            raise TimeBudgetSpent(spent, call_failed=answer is None, raw=RAW_SEPARATOR.join(raws),
                                  latency_ms=_ms(start), calls=calls, answer=answer) from cause
        calls += 1
        try:
            answer = llm.invoke(conversation, config=config or {})
        except Exception as exc:  # noqa: BLE001 - any failing call: an endpoint down, a refusal, a timeout
            problem, answer, cause = f"model call failed: {type(exc).__name__}: {exc}", None, exc
            raws.append(f"<error: {problem}>")
            if not retry_call_errors:
                break
            continue
        raw = cap_text(message_text(answer), raw_cap)
        raws.append(raw)
        bad = degenerate(answer)
        try:
            value = parse(answer)
        except ValueError as exc:
            problem, cause = cap_text(f"{bad}; {exc}" if bad else str(exc), 500), exc
            raws[-1] += f"\n<unusable: {' '.join(problem.split())}>"
            if calls < attempts:
                from langchain_core.messages import AIMessage, HumanMessage  # the chat-model stack: on use

                conversation += [AIMessage(content=raw), HumanMessage(content=retry_prompt.format(error=problem))]
            continue
        if bad:  # a usable answer that still ran away (say, whole JSON then junk up to the cap): noted, kept
            raws[-1] += f"\n<warning: {bad}>"
        return ModelReply(value=value, raw=RAW_SEPARATOR.join(raws), latency_ms=_ms(start), calls=calls)
    raise RetriesExhausted(problem, call_failed=answer is None, raw=RAW_SEPARATOR.join(raws),
                           latency_ms=_ms(start), calls=calls, answer=answer) from cause


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 3)


# --------------------------------------------------------------------------------------- tools, then JSON


class ToolsUnavailable(Exception):
    """Tool calling failed in a way a JSON answer may fix. `no_call`: the model answered without calling
    a tool (for a tool-calling model that usually means it found nothing)."""

    def __init__(self, message: str, *, no_call: bool = False):
        super().__init__(message)
        self.no_call = no_call


def tools_or_json(mode: str, by_tools: Callable[[], T], by_json: Callable[[int], T], *, step: str,
                  trace_id: str | None, when_no_call: Callable[[], T] | None = None) -> T:
    """Run a graph step in `mode` (settings.graph_extraction_mode):

    * ``tools``: `by_tools()` only. A ToolsUnavailable is a ModelOutputError naming the settings to change,
      except a model that called nothing when `when_no_call` is given: its value is returned.
    * ``auto``: `by_tools()`; on ToolsUnavailable, `by_json(1)`: one JSON attempt, so the step costs at
      most two calls.
    * ``json``: `by_json(2)`: a JSON answer with one retry.

    `step` names the step in messages ("Graph extraction").
    """
    if mode in ("tools", "auto"):
        try:
            return by_tools()
        except ToolsUnavailable as exc:
            if mode == "tools" and exc.no_call and when_no_call is not None:
                return when_no_call()
            if mode == "tools":
                raise ModelOutputError(
                    f"{step} by tool calling failed: {exc}. Use a model with tool calling for MEMORYX_GRAPH_LLM, "
                    "or set MEMORYX_GRAPH_EXTRACTION_MODE=json (or auto).", trace_id=trace_id,
                ) from exc
            log.info("%s: tool calling failed (%s); falling back to JSON mode", step, exc)
            return by_json(1)
    return by_json(2)
