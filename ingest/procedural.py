"""Procedural memory for agents (mem0's `memory_type="procedural_memory"`): one summary of how an
agent run went, step by step, stored verbatim for that agent and recalled before similar tasks.

    m.add(run_messages, agent_id="scraper", memory_type="procedural_memory")
    m.search("scrape a blog", agent_id="scraper", filters={"metadata.memory_type": "procedural_memory"})

The summary's shape is mem0's (PROCEDURAL_MEMORY_SYSTEM_PROMPT, rewritten): the task objective, the progress,
then numbered steps, each the agent's action and its result verbatim. A project's own prompt (`prompt=` on
add) replaces ours; the task tag stays so the offline model still recognises the task. The offline model
answers with a deterministic step list built from the messages (memoryx.models.offline).
"""

from __future__ import annotations

import re

from langchain_core.messages import HumanMessage, SystemMessage

from memoryx.errors import InvalidInputError
from memoryx.models.llm_io import message_text
from memoryx.models.offline_answers import answers_task

PROCEDURAL = "procedural_memory"
PROCEDURAL_TASK_TAG = "[memoryx-task: procedural_memory]"
RUN_HEADER = "Agent run:"

PROCEDURAL_PROMPT = """[memoryx-task: procedural_memory]
You are the memory of an AI agent. You are given the messages of one of its runs (the task, the agent's
actions, the tool results). Write the summary the agent will read before a similar task, so that it can
repeat what worked and avoid what failed.

Structure:
## Summary of the agent's execution history
**Task Objective**: the overall goal of the run.
**Progress Status**: how far the run got (steps done, completed or not).

1. **Agent Action**: exactly what the agent did (tool, parameters, target).
   **Action Result**: the result, verbatim (data, responses, error messages as received).
   **Key Findings**: what was learned (URLs, values, errors and how they were recovered from).
2. ...

Rules: number the steps in the order they happened; keep every output verbatim; answer with the summary
only, no preamble.
"""


def format_run(messages: list[dict]) -> str:
    """The human message of the summary call: one line per message, roles kept (tool results included)."""
    lines = [RUN_HEADER]
    for m in messages:
        content = str(m.get("content") or "").replace("\n", " ")
        name = f" ({m['name']})" if m.get("name") else ""
        lines.append(f"{m.get('role', 'user')}{name}: {content}")
    return "\n".join(lines)


def summarize_run(llm, messages: list[dict], prompt: str | None = None, config: dict | None = None) -> str:
    """The procedural summary of a run (one model call)."""
    system = f"{PROCEDURAL_TASK_TAG}\n{prompt}" if prompt else PROCEDURAL_PROMPT
    answer = llm.invoke([SystemMessage(content=system),
                         HumanMessage(content=format_run(messages) + "\n\nCreate the procedural memory of this run.")],
                        config=config)
    text = message_text(answer).strip()
    if text.startswith("```"):
        text = text.strip("`").split("\n", 1)[-1].strip()
    if not text:
        raise InvalidInputError("The model returned an empty procedural summary; nothing was stored.")
    return text


@answers_task("procedural_memory")
def offline_summary(human: str) -> str:
    """What the offline model answers: the task (first user message) and one step per assistant/tool message,
    each action followed by the result that came after it. Deterministic; nothing is paraphrased."""
    turns = []
    for line in human.split(RUN_HEADER, 1)[-1].splitlines():
        m = re.match(r"^(user|assistant|tool|system|function)(?: \([^)]*\))?: (.*)$", line.strip())
        if m:
            turns.append((m.group(1), m.group(2)))
    objective = next((c for r, c in turns if r == "user"), "(no task message)")
    steps: list[list[str]] = []
    for role, content in turns:
        if role == "assistant":
            steps.append([f"**Agent Action**: {content}"])
        elif role in ("tool", "function") and steps:
            steps[-1].append(f"   **Action Result**: {content}")
        elif role == "user" and steps:
            steps[-1].append(f"   **User Reply**: {content}")
    out = ["## Summary of the agent's execution history", f"**Task Objective**: {objective}",
           f"**Progress Status**: {len(steps)} step(s) recorded."]
    out += [f"{i}. " + "\n".join(step) for i, step in enumerate(steps, 1)]
    return "\n".join(out)
