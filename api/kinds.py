"""What a caller may tell MemoryX about one memory beside its text: its type and importance (MCP memory_add,
the seed's `memory.add` schema), and why it is forgotten (memory_forget's reason, kept in the judgment log)."""

from __future__ import annotations

import math

from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError

MEMORY_TYPES = ("episodic", "semantic", "preference", "fact")
FORGET_KIND = "FORGET"
MAX_REASON_CHARS = 1000


def check_kind(memory_type, importance) -> tuple[str | None, float | None]:
    """(memory_type, importance) checked: a type of MEMORY_TYPES, an importance in [0, 1]; None leaves it."""
    if memory_type is not None and memory_type not in MEMORY_TYPES:
        raise InvalidInputError(f"memory_type must be one of {', '.join(MEMORY_TYPES)}, got {memory_type!r}.")
    if importance is not None:
        if isinstance(importance, bool) or not isinstance(importance, (int, float)) or not math.isfinite(importance) \
                or not 0.0 <= float(importance) <= 1.0:
            raise InvalidInputError(f"importance must be a number from 0 to 1, got {importance!r}.")
        importance = float(importance)
    return memory_type, importance


def check_reason(reason) -> str | None:
    if reason is None:
        return None
    if not isinstance(reason, str):
        raise InvalidInputError(f"reason must be a string, got {type(reason).__name__}.")
    reason = reason.strip()
    if len(reason) > MAX_REASON_CHARS:
        raise InvalidInputError(f"reason is {len(reason)} characters; keep it under {MAX_REASON_CHARS}.")
    return reason or None


def record_forget(sql, trace_id: str, scope: Scope, memory: dict, reason: str, actor: str) -> None:
    """The forget as a judgment record (operation_type FORGET): the memory, the reason, what was executed.
    The delete's history rows carry the same trace id, so `rollback(trace_id)` brings the memory back."""
    op = {"event": "DELETE", "id": memory["id"], "text": memory.get("memory"), "reason": reason}
    sql.save_judgment(trace_id, scope=scope, operation_type=FORGET_KIND, input_content=f"forget: {reason}",
                      parsed_operations=[op], executed_operations=[{"op": 0, "id": memory["id"], "event": "DELETE"}],
                      reasoning=f"forgotten on request ({actor}): {reason}", execution_success=True, status="done")


__all__ = ["FORGET_KIND", "MEMORY_TYPES", "check_kind", "check_reason", "record_forget"]
