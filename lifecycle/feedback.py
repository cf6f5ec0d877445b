"""Feedback on a memory or a search result (mem0's `feedback(memory_id, feedback, reason)`).

Stored one row per call in SQL (memory_feedback, memoryx.stores.sql.feedback). It feeds:
- the judgment statistics: `judgment_stats()["feedback"]` counts POSITIVE / NEGATIVE / VERY_NEGATIVE in the
  scope (every call counts, a withdrawn one too);
- the ranking: a memory whose LATEST feedback is VERY_NEGATIVE has its search score multiplied by
  (1 - settings.feedback_very_negative_penalty), 0.3 by default, and the results are re-sorted. POSITIVE and
  NEGATIVE do not move the score (they are signals for review, not for retrieval). The penalty is applied
  inside the search graph (nodes/expand_context.py reads the latest feedback with the ranked rows;
  nodes/finalize.py demotes), so every route running that graph applies it once.
"""

from __future__ import annotations

from typing import Any

from memoryx.errors import InvalidInputError
from memoryx.stores.sql.feedback import FEEDBACK_VALUES


def check_feedback(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value.strip().upper().replace(" ", "_") not in FEEDBACK_VALUES:
        raise InvalidInputError(f"feedback must be one of {', '.join(FEEDBACK_VALUES)} or None, got {value!r}.")
    return value.strip().upper().replace(" ", "_")


def give(sql, memory_id: str, feedback: Any, reason: Any = None, *, scope=None, actor: str = "api") -> dict:
    """Record feedback on a memory (within `scope` when given: another scope's memory is not found)."""
    value = check_feedback(feedback)
    if reason is not None and not isinstance(reason, str):
        raise InvalidInputError(f"reason must be a string, got {type(reason).__name__}.")
    sql.get_memory(memory_id, scope=scope)  # NotFoundError outside the scope
    row = sql.add_feedback(memory_id, value, (reason or "").strip() or None, actor=actor)
    return {"message": "Feedback recorded.", **row}

