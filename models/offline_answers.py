"""The offline model's registry of rule answers, kept apart from the model so that registering one is cheap.

Tasks answered by the deterministic rules of the domain module that owns their prompt: procedural summaries
(memoryx.ingest.procedural), consolidation (memoryx.lifecycle.prompts), episodes (memoryx.knowledge.episodes,
memoryx.knowledge.perspectives) and profiles (memoryx.knowledge.profiles). Each module registers its answer with
`answers_task` when it is imported, which is before it can send its prompt; the model layer never imports the
domain. This module imports nothing of LangChain: a domain module registering an answer (the profile reads a
search does) does not load the chat-model stack.
"""

from __future__ import annotations

from typing import Callable

RULE_TASKS = {"procedural_memory", "consolidate_merge", "consolidate_summarize", "consolidate_digest", "summarize_episode",
              "profile_update", "perspective_episodes"}
_RULE_ANSWERS: dict[str, Callable[[str], str]] = {}


def answers_task(task: str) -> Callable[[Callable[[str], str]], Callable[[str], str]]:
    """Register `fn(human_text) -> answer text` as the offline model's answer to `task` (one of RULE_TASKS)."""
    if task not in RULE_TASKS:
        raise ValueError(f"{task!r} is not a rule task of the offline model; add it to RULE_TASKS")

    def register(fn: Callable[[str], str]) -> Callable[[str], str]:
        _RULE_ANSWERS[task] = fn
        return fn

    return register


def rule_answer(task: str) -> Callable[[str], str]:
    try:
        return _RULE_ANSWERS[task]
    except KeyError:
        raise RuntimeError(f"the offline model has no answer registered for {task!r}: import the module that "
                           "owns its prompt") from None
