"""The judgment log as MemoryCore reads it: one record (within the caller's scope), a page of records,
verification and statistics. A mixin of MemoryCore (memory_core.py): it uses the core's `services`."""

from __future__ import annotations

from memoryx.api.inputs import check_id, check_limit, optional_scope
from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError, NotFoundError

_VERDICTS = ("CORRECT", "INCORRECT", "PARTIAL")


class JudgmentReads:
    def judgment(self, trace_id, scope: Scope | None = None) -> dict:
        row = self.services.sql.get_judgment(check_id(trace_id, "trace_id"))
        if scope is not None and not scope.contains(row):
            raise NotFoundError(f"No judgment with trace_id {trace_id!r}; list them with `memoryx judgments list`.")
        return row

    def list_judgments(self, user_id, agent_id, run_id, limit, offset) -> list[dict]:
        return self.services.sql.list_judgments(optional_scope(user_id, agent_id, run_id),
                                                limit=check_limit(limit) or 50, offset=offset or 0)

    def verify(self, trace_id, result, notes) -> dict:
        trace_id = check_id(trace_id, "trace_id")
        if not isinstance(result, str) or result.upper() not in _VERDICTS:
            raise InvalidInputError(f"result must be one of {', '.join(_VERDICTS)}, got {result!r}.")
        return self.services.sql.verify_judgment(trace_id, result.upper(), notes)

    def judgment_stats(self, user_id, agent_id, run_id) -> dict:
        scope = optional_scope(user_id, agent_id, run_id)
        return {**self.services.sql.judgment_stats(scope), "feedback": self.services.sql.feedback_counts(scope)}
