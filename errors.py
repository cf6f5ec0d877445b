"""MemoryX errors. Every message says what went wrong and what to do next."""

from __future__ import annotations


class MemoryXError(Exception):
    """Base class. `trace_id` is set when the error happened inside an add/search run."""

    def __init__(self, message: str, *, trace_id: str | None = None):
        super().__init__(message)
        self.trace_id = trace_id

    def __str__(self) -> str:  # keep the trace id visible in logs and CLI output
        # args[0], not super().__str__(): KeyError (a base of NotFoundError) would quote the message
        base = str(self.args[0]) if self.args else ""
        return f"{base} (trace_id={self.trace_id})" if self.trace_id else base


class ScopeError(MemoryXError, ValueError):
    """No user_id/agent_id/run_id given, or a memory outside the caller's scope."""


class NotFoundError(MemoryXError, KeyError):
    """An id that does not exist (or is not visible in the given scope)."""

    __str__ = MemoryXError.__str__  # KeyError would otherwise repr() the message


class AccessDeniedError(MemoryXError, PermissionError):
    """The caller's principal may not take this action on this scope (an id it does not hold)."""


class InvalidInputError(MemoryXError, ValueError):
    """Empty, oversized or malformed input, or an unknown filter operator."""


class StoreUnavailableError(MemoryXError, RuntimeError):
    """A store could not be started or reached. The message names the setting to change."""


class ModelOutputError(MemoryXError):
    """The model's output could not be parsed even after one retry."""


class AddFailedError(MemoryXError, RuntimeError):
    """An add run raised something other than a MemoryX error; what it wrote was undone (`__cause__`: the
    original error). Retry the add."""


class ConcurrencyError(MemoryXError):
    """A scope lock could not be taken in time."""


class RollbackConflictError(ConcurrencyError):
    """A rollback refused: later runs changed the same memories. `later_traces` names them, newest first;
    roll them back first, or pass force=True to roll them back too (newest first)."""

    def __init__(self, message: str, *, trace_id: str | None = None, later_traces: list[str] | None = None):
        super().__init__(message, trace_id=trace_id)
        self.later_traces = list(later_traces or [])
