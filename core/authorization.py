"""Who may touch what: the one decision every door asks (REST, mem0's routes, LangServe, MCP over HTTP and
stdio, the review page's API, the CLI through a server).

A door turns its caller into a `Principal` (an API key's users, agents and groups, an admin key, local
development mode, the users `memoryx mcp` was started for) and calls `authorize(principal, action,
requested)` with the ids the request named. The answer is the `Scope` the request may act on; ids in a body
only narrow what the principal holds, they never widen it. No door builds a scope from request fields.

| principal           | reaches (memories, and what is derived from them: profile, context block, ...)  |
| ------------------- | ------------------------------------------------------------------------------- |
| user key {users}    | its users' memories, with any agent or run inside them; their whole profiles    |
| user + agent key    | its users' memories with its agents; profile values said to its agents only     |
| agent key {agents}  | its agents' global memories (rows without a user); never a user's              |
| group key {groups}  | its groups' shared memories, any participant; never a private memory / profile |
| admin key, dev mode | everything; metrics and admin actions                                           |

Derived data follows the memories it was read from: a profile value counts in a scope while a memory inside
that scope backs it (`profile_scope`), so a context block, an export or an explanation never shows more than
the memories the same key may list.

A request naming an id the principal does not hold is refused (AccessDeniedError: 403) before anything is
read or written; a record outside the principal read by id is reported as missing (404) by the door, so
that another tenant's ids are never confirmed. Adding an action: add it to `Action`, say in `WRITES` whether
it changes data, and document it in docs/security.md (the route x principal matrix test names the action
of every route).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Iterable, Mapping

from memoryx.core.scope import Scope
from memoryx.errors import AccessDeniedError, InvalidInputError, ScopeError


class Action(str, Enum):
    READ = "read"  # one record by id, its history
    LIST = "list"  # a scope's memories
    SEARCH = "search"  # search, the context block
    WRITE = "write"  # add, update, consolidate, restore, feedback, resume a paused add
    DELETE = "delete"  # one memory or a scope's memories
    EXPORT = "export"
    END_RUN = "end_run"
    PROFILE = "profile"  # a user's or a group's profile
    JUDGMENTS = "judgments"  # the records of add runs: list, stats, one record, the review page
    VERIFY = "verify"  # a human's verdict on a judgment
    ROLLBACK = "rollback"
    PURGE = "purge"
    METRICS = "metrics"  # /metrics: every tenant's figures
    ADMIN = "admin"  # anything across tenants


WRITES = frozenset({Action.WRITE, Action.DELETE, Action.END_RUN, Action.VERIFY, Action.ROLLBACK, Action.PURGE})
UNSCOPED = frozenset({Action.METRICS, Action.ADMIN})  # no scope: all-access principals only
WHOLE_STORE = frozenset({Action.JUDGMENTS, Action.LIST})  # an all-access principal may name no id at all
_IDS = ("user_id", "agent_id", "run_id", "group_id")


@dataclass(frozen=True)
class Requested:
    """The ids a request names (unchecked: any JSON value may arrive here)."""

    user_id: Any = None
    agent_id: Any = None
    run_id: Any = None
    group_id: Any = None

    @classmethod
    def of(cls, fields: Mapping[str, Any] | None) -> "Requested":
        fields = fields or {}
        return cls(**{k: fields.get(k) for k in _IDS})


@dataclass(frozen=True)
class Principal:
    """Who is calling: the users, agents and groups it holds; admin and local development mode hold all."""

    name: str  # safe to log (a key's fingerprint, "local-dev", "stdio")
    users: frozenset[str] = field(default_factory=frozenset)
    agents: frozenset[str] = field(default_factory=frozenset)
    admin: bool = False
    groups: frozenset[str] = field(default_factory=frozenset)
    dev: bool = False  # no keys configured: everything allowed, the server says so loudly

    @property
    def all_access(self) -> bool:
        return self.admin or self.dev

    def can(self, user_id: str | None, agent_id: str | None = None, group_id: str | None = None) -> bool:
        """May this principal touch a record of (user_id, agent_id, group_id)?"""
        if self.all_access:
            return True
        agent_ok = not self.agents or agent_id is None or agent_id in self.agents
        if group_id is not None:  # a group's records: the group's principals only, whichever participant
            return group_id in self.groups and agent_ok
        if user_id is not None:
            return user_id in self.users and agent_ok
        # the agent-global scope: an agent key's (one that lists the agent and no users)
        return agent_id is not None and agent_id in self.agents and not self.users

    def can_record(self, record: Mapping[str, Any]) -> bool:
        return self.can(record.get("user_id") or None, record.get("agent_id") or None, record.get("group_id") or None)

    def visible(self, records: Iterable[dict]) -> list[dict]:
        """The records this principal may see (a second check behind the scope the stores applied)."""
        return [r for r in records if self.can_record(r)]


DEV_PRINCIPAL = Principal(name="local-dev", dev=True)


def stdio_principal(user_ids: Iterable[str]) -> Principal:
    """`memoryx mcp --user-id alice`: the users the process was started for."""
    return Principal(name="stdio", users=frozenset(user_ids))


def _id(name: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"{name} must be a non-empty string, got {type(value).__name__}.")
    return value


def _denied(what: str, value: str, hint: str) -> AccessDeniedError:
    return AccessDeniedError(f"This API key may not access {what} {value!r}; {hint}")


def _one(held: frozenset[str], what: str) -> str:
    if len(held) != 1:
        raise ScopeError(f"{what} is required: this API key is bound to several {what.split('_')[0]}s; "
                         "pass the one to act for.")
    return next(iter(held))


def _agent(principal: Principal, agent: str | None) -> str | None:
    if not principal.agents:
        return agent
    if agent is None:
        return _one(principal.agents, "agent_id")
    if agent not in principal.agents:
        raise _denied("agent_id", agent, "use a key bound to that agent.")
    return agent


def authorize(principal: Principal, action: Action, requested: Requested | Mapping[str, Any] | None = None) -> Scope | None:
    """The scope `principal` may `action` on, narrowed by the ids the request named.

    None only for an all-access principal on an unscoped action (metrics, admin) or one that names no id on
    a whole-store read (judgments, lists). Raises AccessDeniedError (403) for an id the principal does not
    hold or an action it may not take, ScopeError (400) when the request must say which of several ids it
    acts for, InvalidInputError (422) for an id that is not a non-empty string."""
    action = Action(action)
    req = requested if isinstance(requested, Requested) else Requested.of(requested)
    user, agent, run, group = (_id(k, getattr(req, k)) for k in _IDS)
    if principal.all_access:
        if action in UNSCOPED or (action in WHOLE_STORE and not any((user, agent, run, group))):
            return None
        return Scope(user_id=user, agent_id=agent, run_id=run, group_id=group)
    if action in UNSCOPED:
        raise AccessDeniedError(f"{action.value} needs an admin API key.")
    if action is Action.PROFILE and user is not None:  # a user's profile is private, whichever group is named
        if user not in principal.users:
            raise _denied("user_id", user, "a user's profile is read with a key bound to that user.")
        return Scope(user_id=user, agent_id=_agent(principal, agent))  # an agent-bound key: its agents' values
    if group is None and principal.groups and not (principal.users or principal.agents):
        group = _one(principal.groups, "group_id")  # a key of one group acts in that group
    if group is not None:
        if group not in principal.groups:
            raise _denied("group_id", group, "use a key bound to that group.")
        if agent is not None and principal.agents and agent not in principal.agents:
            raise _denied("agent_id", agent, "use a key bound to that agent.")
        return Scope(user_id=user, agent_id=agent, run_id=run, group_id=group)
    if principal.users:
        if user is None:
            user = _one(principal.users, "user_id")
        elif user not in principal.users:
            raise _denied("user_id", user, "use a key bound to that user.")
        return Scope(user_id=user, agent_id=_agent(principal, agent), run_id=run)
    if principal.agents:
        if user is not None:
            raise _denied("user_id", user, "an agent key reaches its agents' global memories only; "
                                           "a user's memories need a key bound to that user.")
        if action is Action.PURGE:
            raise AccessDeniedError("Purging an agent's scope needs an admin key; an agent key may delete its "
                                    "global memories (DELETE /v1/memories?agent_id=...).")
        return Scope(agent_id=_agent(principal, agent), run_id=run, no_user=True)
    raise AccessDeniedError("This API key holds no user, agent or group.")


def profile_scope(scope: Scope | None) -> Scope | None:
    """Whose profile data read in `scope` may show (the context block, an answer built on the profile): the
    scope's user, with only the values said in the scope's agent when it names one (a value counts while a
    memory inside that scope backs it). None for a group scope (a user's profile is written from their private
    conversations only, so a group's principals never reach it) and for a scope without a user."""
    if scope is None or scope.group_id or not scope.user_id:
        return None
    return Scope(user_id=scope.user_id, agent_id=scope.agent_id)


def authorize_participants(principal: Principal, participants: Mapping[str, Any] | None) -> None:
    """A group add's `participants` {speaker name: user id} writes each speaker's "I" facts under that user
    (search and the profile by user id find them): a key may map speakers only to users it holds, so a group
    key cannot write into a user it does not hold. Raises AccessDeniedError (403) for the first user it does
    not hold; all-access principals may name any user."""
    if not participants or principal.all_access:
        return
    for name, user in participants.items():
        if user not in principal.users:
            raise _denied("user_id", str(user), f"participants maps {name!r} to it; map speakers only to users "
                                                "this key holds (a key with {\"users\": [...], \"groups\": [...]}), or "
                                                "leave the speaker out to keep their facts under their name in the group.")


def authorize_messages(principal: Principal, messages: Any, participants: Mapping[str, Any] | None = None) -> None:
    """Every scope field an add's messages carry, checked like `participants`: a message's own `user_id`
    files its facts under that user (in a group: as that participant), so a key may name only users it holds;
    a message's `agent_id` (not a field the add reads today), only agents it holds when it is bound to
    agents. A speaker `name` counts as a user only through `participants` (checked there); unmapped, it stays
    a name inside the group. Raises AccessDeniedError (403) naming the first message field the key may not
    use; all-access principals may name anyone. Every door that adds calls this before anything is written."""
    authorize_participants(principal, participants)
    if principal.all_access or not isinstance(messages, (list, tuple)):
        return
    for index, message in enumerate(messages):
        fields = message if isinstance(message, Mapping) else {}
        user, agent = fields.get("user_id"), fields.get("agent_id")
        if user is not None and user not in principal.users:
            raise _denied(f"messages[{index}].user_id", str(user), "a message may name only users this key holds "
                          "(a key with {\"users\": [...], \"groups\": [...]}); leave user_id out to keep the "
                          "speaker's facts under their name in the group.")
        if agent is not None and principal.agents and agent not in principal.agents:  # as for the body's agent_id
            raise _denied(f"messages[{index}].agent_id", str(agent), "a message may name only agents this key holds.")


__all__ = ["Action", "DEV_PRINCIPAL", "Principal", "Requested", "UNSCOPED", "WRITES", "authorize",
           "authorize_messages", "authorize_participants", "profile_scope", "stdio_principal"]
