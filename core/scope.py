"""The tenant scope every read and write carries: user_id / agent_id / run_id, and group_id for group chats.

user_id / agent_id / run_id are wildcards when unset (`Scope(user_id='a')` sees a's rows of every agent and
run). group_id is not: an unset group_id matches only rows outside any group, so a user's private memories
and the memories of a group chat the user takes part in never mix unless the caller names both
(`Scope(user_id='caroline', group_id='g1')`: Caroline's memories in g1). `Scope(group_id='g1')` alone is the
whole group, every participant.

`no_user=True` makes an unset user_id exact as well: `Scope(agent_id='bot', no_user=True)` is the agent's global
memories only (rows without a user), the scope an agent-only API key is granted (core/authorization.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from memoryx.errors import ScopeError

SCOPE_FIELDS = ("user_id", "agent_id", "run_id", "group_id")


@dataclass(frozen=True)
class Scope:
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    group_id: str | None = None
    no_user: bool = False  # an unset user_id matches only rows without a user (not every user's)

    def __post_init__(self) -> None:
        for name in SCOPE_FIELDS:
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ScopeError(f"{name} must be a non-empty string, got {value!r}")
        if not any(getattr(self, name) for name in SCOPE_FIELDS):
            raise ScopeError("At least one of user_id, agent_id, run_id or group_id is required; "
                             "pass e.g. user_id='alice'.")
        if self.no_user and self.user_id is not None:
            raise ScopeError("no_user=True is a scope without a user; drop user_id or no_user.")

    @classmethod
    def of(cls, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
           group_id: str | None = None) -> "Scope":
        return cls(user_id=user_id, agent_id=agent_id, run_id=run_id, group_id=group_id)

    def as_dict(self) -> dict[str, str]:
        """Only the fields that are set (what a written row carries)."""
        return {k: getattr(self, k) for k in SCOPE_FIELDS if getattr(self, k)}

    def match(self) -> dict[str, str | None]:
        """The exact-match conditions a store applies: the set fields, plus group_id=None (no group) when the
        scope names no group, so group memories stay out of user/agent scopes."""
        out: dict[str, str | None] = dict(self.as_dict())
        out.setdefault("group_id", None)
        if self.no_user:
            out["user_id"] = None
        return out

    def key(self) -> str:
        """Stable string for locks and logs: 'user_id=alice|agent_id=-|run_id=-' (+ '|group_id=g' in a group)."""
        fields = SCOPE_FIELDS if self.group_id else SCOPE_FIELDS[:3]  # keys of non-group scopes unchanged
        return "|".join(f"{k}={getattr(self, k) or '-'}" for k in fields) + ("|no_user" if self.no_user else "")

    def contains(self, record: dict) -> bool:
        """True when a record (dict with scope fields) lies inside this scope."""
        return all((record.get(k) or None) == v for k, v in self.match().items())


def same_scope(record: dict, scope: Scope) -> bool:
    """Exactly this scope: every scope field equal, unset ones unset."""
    return all((record.get(k) or None) == getattr(scope, k) for k in SCOPE_FIELDS)
