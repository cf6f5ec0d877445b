"""The tenant scope every read and write carries: user_id / agent_id / run_id."""

from __future__ import annotations

from dataclasses import dataclass

from memoryx.errors import ScopeError

SCOPE_FIELDS = ("user_id", "agent_id", "run_id")


@dataclass(frozen=True)
class Scope:
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None

    def __post_init__(self) -> None:
        for name in SCOPE_FIELDS:
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ScopeError(f"{name} must be a non-empty string, got {value!r}")
        if not any(getattr(self, name) for name in SCOPE_FIELDS):
            raise ScopeError("At least one of user_id, agent_id or run_id is required; pass e.g. user_id='alice'.")

    @classmethod
    def of(cls, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> "Scope":
        return cls(user_id=user_id, agent_id=agent_id, run_id=run_id)

    def as_dict(self) -> dict[str, str]:
        """Only the fields that are set (used as an exact-match filter in every store)."""
        return {k: getattr(self, k) for k in SCOPE_FIELDS if getattr(self, k)}

    def key(self) -> str:
        """Stable string for locks and logs: 'user_id=alice|agent_id=-|run_id=-'."""
        return "|".join(f"{k}={getattr(self, k) or '-'}" for k in SCOPE_FIELDS)

    def contains(self, record: dict) -> bool:
        """True when a record (dict with scope fields) lies inside this scope."""
        return all(record.get(k) == v for k, v in self.as_dict().items())
