"""Which memories a consolidation pass owns, and the scopes the schedule passes over.

A consolidation pass compares memories of ONE owner only: duplicates of two users are two users' facts, never one.
`Scope(agent_id="a")` alone matches every user's memories written with agent a, so a pass over it takes
the agent's own memories (no user) only; likewise a run's (no user, no agent) and a group's own (no
participant). The first of user_id / agent_id / run_id the scope sets decides: the record must have
none of the fields before it. A group chat is a separate owner per participant: `Scope(user_id="caroline",
group_id="g1")` (two participants saying the same thing are two statements, each attributed).
"""

from __future__ import annotations

from memoryx.core.scope import Scope

_OWNERS = ("user_id", "agent_id", "run_id")


def owned_by(scope: Scope, record: dict) -> bool:
    """True when a pass over `scope` takes `record` (a dict with scope fields)."""
    if not scope.contains(record):
        return False
    for field in _OWNERS:
        if getattr(scope, field):
            return True
        if record.get(field):
            return False
    return True


def owner_scope(record: dict) -> Scope:
    """The scope a consolidation pass over this record's owner takes (the record is owned_by it)."""
    group = record.get("group_id") or None
    for field in _OWNERS:
        if record.get(field):
            return Scope(**{field: record[field]}, group_id=group)
    return Scope(group_id=group)


__all__ = ["owned_by", "owner_scope"]
