"""Memory update (judgment) prompt: ADD / UPDATE / DELETE / NONE with the reason written first.

The judgment record and its reasons, mem0's DEFAULT_UPDATE_MEMORY_PROMPT, rewritten:
- existing memories are shown with small integer ids ("0", "1", ...), never their real ids;
- one decision per new fact (plus extra ones for cascades), each naming the fact it is about;
- "reason" comes BEFORE "event" so the model reasons before it decides;
- a contradiction never loses the new fact: UPDATE the old memory with it, or DELETE the old one AND ADD it.
"""

from __future__ import annotations

import json
import re

JUDGE_TASK = "judge_memory"

MEMORY_UPDATE_PROMPT = """[memoryx-task: judge_memory]
You are the memory manager of a long-term memory system. You compare NEW FACTS with the EXISTING MEMORIES
most similar to them and decide, for every new fact, one of four operations:

- ADD: the fact is new information not present in any existing memory.
- UPDATE: the fact changes or refines an existing memory about the same thing (a new home, a new employer,
  a new name, a more complete version). Keep the memory's id; "text" is the updated memory. For a
  single-valued attribute (where the user lives, works, their name) the new value replaces the old one.
- DELETE: the fact contradicts or retracts an existing memory so that the memory is no longer true
  ("I don't like pizza anymore" deletes "User likes pizza"). Keep the memory's id.
- NONE: the fact is already stored (same meaning, maybe different words). Give the id of that memory.

Rules:
1. Write "reason" FIRST, then "event": explain in one sentence why, then decide.
2. Every new fact gets at least one decision, with "fact" set to its number.
3. A contradiction must never lose the new fact: either UPDATE the old memory with the new fact, or DELETE
   the old memory AND ADD the new fact (two decisions for the same fact).
4. "id" must be one of the ids of the existing memories shown below (for UPDATE, DELETE, NONE); for ADD use
   null. Never invent ids.
5. Keep the language of the fact: Chinese facts stay Chinese, Japanese facts stay Japanese.
6. Facts marked "owner": "agent" are about the assistant and may only touch memories marked the same way.
7. Return ONLY a JSON object, no prose, no code fences:
{"operations": [{"fact": 0, "reason": "...", "event": "ADD|UPDATE|DELETE|NONE", "id": "0" or null, "text": "...", "old_memory": "..." (UPDATE only)}]}

Examples:
Existing memories: [{"id": "0", "text": "User lives in Berlin"}, {"id": "1", "text": "User likes pizza"}]
New facts: [{"fact": 0, "text": "User moved to Paris"}, {"fact": 1, "text": "User no longer likes pizza"}, {"fact": 2, "text": "User's name is Ana"}]
Output: {"operations": [
  {"fact": 0, "reason": "Where the user lives changed from Berlin to Paris; the home is single-valued.", "event": "UPDATE", "id": "0", "text": "User moved to Paris", "old_memory": "User lives in Berlin"},
  {"fact": 1, "reason": "The user retracted the preference for pizza, so the old memory is no longer true.", "event": "DELETE", "id": "1", "text": "User likes pizza"},
  {"fact": 1, "reason": "Keep the retraction itself so the new information is not lost.", "event": "ADD", "id": null, "text": "User no longer likes pizza"},
  {"fact": 2, "reason": "The name is not stored yet.", "event": "ADD", "id": null, "text": "User's name is Ana"}]}

Existing memories: [{"id": "0", "text": "用户喜欢喝咖啡"}]
New facts: [{"fact": 0, "text": "用户很喜欢喝咖啡"}]
Output: {"operations": [
  {"fact": 0, "reason": "已有记忆表达了相同的偏好，无需操作。", "event": "NONE", "id": "0", "text": "用户喜欢喝咖啡"}]}
"""

# A project's own update prompt (settings.custom_update_memory_prompt, add(update_prompt=...)) replaces our
# instructions; the task tag, the small-id rule and the answer format stay (our parser and safety rules).
CUSTOM_UPDATE_FRAME = """[memoryx-task: judge_memory]
{custom}

Answer format: for every new fact, decide ADD, UPDATE, DELETE or NONE against the existing memories shown with
small ids ("0", "1", ...); use only those ids. Return ONLY a JSON object, no prose:
{{"operations": [{{"fact": 0, "reason": "...", "event": "ADD|UPDATE|DELETE|NONE", "id": "0" or null, "text": "..."}}]}}
"""


def judge_system_prompt(custom: str | None = None) -> str:
    return CUSTOM_UPDATE_FRAME.format(custom=custom) if custom else MEMORY_UPDATE_PROMPT


EXISTING_HEADER = "Existing memories:"
FACTS_HEADER = "New facts:"


def format_judge_input(memories: list[dict], facts: list[dict]) -> str:
    """The human message of the judgment call.

    memories: [{"id": "0", "text": ..., "owner"?}] (small integer ids); facts: [{"fact": i, "text", "owner"?}].
    """
    return (
        f"{EXISTING_HEADER}\n{json.dumps(memories, ensure_ascii=False)}\n\n"
        f"{FACTS_HEADER}\n{json.dumps(facts, ensure_ascii=False)}\n\n"
        "Return the JSON object with your decisions."
    )


def parse_judge_input(text: str) -> tuple[list[dict], list[dict]]:
    """Inverse of format_judge_input (used by the offline model)."""
    m = re.search(re.escape(EXISTING_HEADER) + r"\s*(\[.*?\])\s*" + re.escape(FACTS_HEADER) + r"\s*(\[.*?\])\s*(?:\n|$)", text, re.S)
    if not m:
        return [], []
    return json.loads(m.group(1)), json.loads(m.group(2))


RETRY_PROMPT = """Your previous answer could not be used: {error}
Answer again with ONLY the JSON object in the required format: {{"operations": [{{"fact": 0, "reason": "...", "event": "ADD|UPDATE|DELETE|NONE", "id": "0" or null, "text": "..."}}]}}"""
