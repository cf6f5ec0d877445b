"""Model calls of the memory's steps: one place that gives a call the run's standard options (its LangSmith
config, the add run's deadline, the raw-answer cap) and ends it the step's way when the model's answers stay
unusable after the retry — the step falls back to its rules, or the run fails with a ModelOutputError that
names the step. The parsing and the retry itself are `call_with_retry`'s (memoryx.models.llm_io)."""

from __future__ import annotations

import logging
from typing import Any, Callable, Sequence, TypeVar

from langchain_core.messages import BaseMessage

from memoryx.core.runs import llm_config
from memoryx.errors import ModelOutputError
from memoryx.models.factory import model_name_of
from memoryx.models.llm_io import (
    ModelReply,
    RetriesExhausted,
    TimeBudgetSpent,
    call_with_retry,
    message_text,
    run_deadline,
)

log = logging.getLogger(__name__)
T = TypeVar("T")


def run_options(llm: Any, state: dict, step: str, settings: Any) -> dict:
    """call_with_retry's options for a call made inside an add run: config, deadline, raw_cap."""
    return {"config": llm_config(state, step, model_name_of(llm)),
            "deadline": run_deadline(settings.add_time_budget_s), "raw_cap": settings.llm_raw_answer_cap}


def ask_in_run(llm: Any, messages: Sequence[BaseMessage], parse: Callable[[BaseMessage], T], *, state: dict,
               step: str, settings: Any, retry_prompt: str, **options: Any) -> ModelReply[T]:
    """call_with_retry with the run's options; RetriesExhausted propagates for the step to handle."""
    return call_with_retry(llm, messages, parse, retry_prompt=retry_prompt,
                           **run_options(llm, state, step, settings), **options)


def ask_or_fall_back(llm: Any, messages: Sequence[BaseMessage], parse: Callable[[BaseMessage], T], *,
                     step: str, retry_prompt: str, fallback: str, trace_id: str | None = None,
                     **options: Any) -> ModelReply[T] | RetriesExhausted:
    """The reply, or — when the answers stay unusable — the RetriesExhausted itself (its calls, raw answers and
    problem, for the step's record), after logging that the step goes on without the model (`fallback`)."""
    try:
        return call_with_retry(llm, messages, parse, retry_prompt=retry_prompt, **options)
    except RetriesExhausted as exc:
        log.warning("%s: %s (trace %s): %s", step, fallback, trace_id, exc.problem)
        return exc


def call_record(step: str, reply: ModelReply | RetriesExhausted) -> dict:
    """What a step keeps of its model call for its record: calls, the raw answers under the step's name, and
    the problem when the answers stayed unusable."""
    problems = [{"step": step, "problem": reply.problem}] if isinstance(reply, RetriesExhausted) else []
    return {"model_calls": reply.calls, "model_raw": {step: reply.raw}, "model_problems": problems}


def ask_or_fail(llm: Any, messages: Sequence[BaseMessage], parse: Callable[[BaseMessage], T], *, what: str,
                retry_prompt: str, attempts: int, trace_id: str | None, show_answer: bool = False,
                **options: Any) -> T:
    """The parsed value, or a ModelOutputError "<what>: ..." carrying the trace id (a spent time budget is
    raised as it is: the caller skips its step). `show_answer`: quote the last answer instead of the problem."""
    try:
        return call_with_retry(llm, messages, parse, retry_prompt=retry_prompt, attempts=attempts, **options).value
    except TimeBudgetSpent:
        raise
    except RetriesExhausted as exc:
        if exc.call_failed:
            raise ModelOutputError(f"{what} {exc.problem}", trace_id=trace_id) from exc
        detail = repr(message_text(exc.answer)[:300]) if show_answer else exc.problem
        raise ModelOutputError(f"{what}: unparseable model output after {attempts} attempt(s): {detail}",
                               trace_id=trace_id) from exc

