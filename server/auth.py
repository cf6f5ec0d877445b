"""API keys of the HTTP server (`X-API-Key`), each bound to the user ids and agent ids it may touch.

`MEMORYX_API_KEYS` is a JSON map: key -> list of user ids, or key -> {"users": [...], "agents": [...],
"admin": true|false}. It is validated strictly when the server starts (`KeyRing`): admin must be a JSON
boolean, users / agents lists of non-empty strings, no other fields, and a non-admin key must grant
something. A bad entry stops the server with a message naming the entry by its fingerprint (never the key).

Tenancy: a user's memories (and the agent memories learned in that user's conversations) belong to the
user. A key bound to users touches those users' scopes; when it also lists agents, only those agents within
them. The agent-global scope (an agent id without a user: memories added with agent_memory="global") is
reached only by an agent key: one that lists the agent and no users. An admin key touches every scope. No keys configured: local
development mode (everything allowed), announced loudly at start.

Group chats: {"groups": ["g1"]} binds a key to group chats. A group's memories (every record
with that group_id, whichever participant it belongs to) are reached only by a key listing the group (or an
admin key); a key bound to user "caroline" never reaches Caroline's memories inside a group, and a group
key never reaches a user's private memories.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from dataclasses import dataclass, field
from typing import Any, Iterable

from fastapi import HTTPException, Request

log = logging.getLogger("memoryx.server")

HEADER = "X-API-Key"
KEY_FIELDS = ("users", "agents", "groups", "admin")


def _forbidden(message: str) -> HTTPException:
    return HTTPException(403, detail={"type": "forbidden", "message": message})


def _bad_scope(message: str) -> HTTPException:
    return HTTPException(400, detail={"type": "scope_error", "message": message})


def id_value(name: str, value: Any) -> str | None:
    """A scope id from a request: None or a non-empty string (a list or a number is a 422, not a 500)."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise HTTPException(422, detail={"type": "validation_error",
                                         "message": f"{name} must be a non-empty string, got {type(value).__name__}."})
    return value


@dataclass(frozen=True)
class Principal:
    """Who is calling: the user and agent ids the key may touch (an admin touches all)."""

    name: str  # a short fingerprint of the key, safe to log
    users: frozenset[str] = field(default_factory=frozenset)
    agents: frozenset[str] = field(default_factory=frozenset)
    admin: bool = False
    groups: frozenset[str] = field(default_factory=frozenset)  # group chats

    def can(self, user_id: str | None, agent_id: str | None = None, group_id: str | None = None) -> bool:
        """May this key touch a record of (user_id, agent_id[, group_id])?"""
        if self.admin:
            return True
        if group_id is not None:  # a group's records: the group's keys only, whichever participant
            return group_id in self.groups and (not self.agents or agent_id is None or agent_id in self.agents)
        if user_id is not None:
            return user_id in self.users and (not self.agents or agent_id is None or agent_id in self.agents)
        return self.can_global(agent_id)

    def can_global(self, agent_id: str | None) -> bool:
        """The agent-global scope (an agent without a user) is an agent key's: one that lists the agent and
        no users. A key listing users stays inside those users' tenancies, even for its agents."""
        return self.admin or (agent_id is not None and agent_id in self.agents and not self.users)

    def can_record(self, record: dict) -> bool:
        return self.can(record.get("user_id"), record.get("agent_id"), record.get("group_id") or None)

    def group_scope_ids(self, user_id: Any, agent_id: Any = None,
                        group_id: Any = None) -> tuple[str | None, str | None, str | None]:
        """(user_id, agent_id, group_id) a request acts for. Without a group: `scope_ids` (a key bound to
        exactly one group and nothing else acts in that group). With one: the key must list the group; the
        user id is then a participant of the group (any), the agent one of the key's agents if it lists any."""
        group_id = id_value("group_id", group_id)
        if group_id is None and self.groups and not (self.users or self.agents or self.admin):
            if len(self.groups) != 1:
                raise _bad_scope("group_id is required: this API key is bound to several groups; pass the one to act for.")
            group_id = next(iter(self.groups))
        if group_id is None:
            return (*self.scope_ids(user_id, agent_id), None)
        if not self.admin and group_id not in self.groups:
            raise _forbidden(f"This API key may not access group_id {group_id!r}; use a key bound to that group.")
        user_id, agent_id = id_value("user_id", user_id), id_value("agent_id", agent_id)
        if agent_id is not None and self.agents and not self.admin and agent_id not in self.agents:
            raise _forbidden(f"This API key may not access agent_id {agent_id!r}; use a key bound to that agent.")
        return user_id, agent_id, group_id

    def visible(self, records: Iterable[dict]) -> list[dict]:
        """The records this key may see. A scope without a user matches every user's records in the stores
        (unset fields are wildcards), so results of agent-only scopes are filtered here."""
        return [r for r in records if self.can_record(r)]

    def scope_ids(self, user_id: Any, agent_id: Any = None) -> tuple[str | None, str | None]:
        """The (user_id, agent_id) a request acts for: the ones given (checked) or, for a key of exactly one
        user (agent), that one. Raises 400/403/422 HTTP errors with a message that says what to send."""
        user_id, agent_id = id_value("user_id", user_id), id_value("agent_id", agent_id)
        if self.admin:
            return user_id, agent_id
        if self.agents:
            if agent_id is None:
                if len(self.agents) != 1:
                    raise _bad_scope("agent_id is required: this API key is bound to several agents; pass the one to act for.")
                agent_id = next(iter(self.agents))
            elif agent_id not in self.agents:
                raise _forbidden(f"This API key may not access agent_id {agent_id!r}; use a key bound to that agent.")
        if user_id is None:
            if len(self.users) == 1:
                return next(iter(self.users)), agent_id
            if self.can_global(agent_id):
                return None, agent_id  # the agent's global memories
            raise _bad_scope("user_id is required: this API key is bound to several users; pass the one to act for.")
        if user_id not in self.users:
            raise _forbidden(f"This API key may not access user_id {user_id!r}; use a key bound to that user.")
        return user_id, agent_id

    def scope_user(self, user_id: Any, agent_id: Any = None) -> str | None:
        """The user id of `scope_ids` (routes that carry no agent id)."""
        return self.scope_ids(user_id, agent_id)[0]

    def check_global_agent(self, agent_id: str | None) -> None:
        """Writing agent-global memories (agent_memory="global") needs a key bound to that agent."""
        if agent_id is None:
            raise _bad_scope('agent_memory="global" needs an agent_id.')
        if not self.can_global(agent_id):
            raise _forbidden(f'agent_memory="global" writes memories every user of agent {agent_id!r} shares; '
                             f"it needs an agent key ({{\"agents\": [{agent_id!r}]}}, no users) or an admin key.")


DEV_PRINCIPAL = Principal(name="local-dev", admin=True)


def request_key(request: Request) -> str | None:
    """The API key a request carries: `X-API-Key`, else `Authorization: Token KEY` (what mem0's own client
    sends; `Bearer` too). Both reach the same KeyRing, so a key is bound to the same users either way."""
    key = request.headers.get(HEADER)
    if key:
        return key
    scheme, _, token = (request.headers.get("Authorization") or "").strip().partition(" ")
    if scheme.lower() in ("token", "bearer") and token.strip():
        return token.strip()
    return None


def _fingerprint(key: str) -> str:
    return "key-" + hashlib.sha256(key.encode()).hexdigest()[:8]


def _ids(where: str, what: str, value: Any) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"{where}: {what} must be a JSON list of non-empty strings, got {type(value).__name__}"
                         + (f" {value!r}" if isinstance(value, (bool, int, float)) else ""))
    return frozenset(value)


def parse_key_spec(key: Any, spec: Any) -> Principal:
    """One MEMORYX_API_KEYS entry as a Principal (ValueError naming the entry by its fingerprint)."""
    if not isinstance(key, str) or not key.strip():
        raise ValueError("MEMORYX_API_KEYS: keys must be non-empty strings")
    where = f"MEMORYX_API_KEYS[{_fingerprint(key)}]"
    if isinstance(spec, list):
        users, agents, admin, groups = _ids(where, "the user list", spec), frozenset(), False, frozenset()
    elif isinstance(spec, dict):
        unknown = sorted(set(spec) - set(KEY_FIELDS))
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {unknown}; allowed: {', '.join(KEY_FIELDS)}")
        admin = spec.get("admin", False)
        if not isinstance(admin, bool):
            raise ValueError(f"{where}: admin must be a JSON boolean (true or false), got {type(admin).__name__}")
        users = _ids(where, "users", spec.get("users", []))
        agents = _ids(where, "agents", spec.get("agents", []))
        groups = _ids(where, "groups", spec.get("groups", []))
    else:
        raise ValueError(f"{where}: expected a list of user ids or {{\"users\": [...], \"agents\": [...], "
                         f"\"admin\": false}}, got {type(spec).__name__}")
    if not admin and not users and not agents and not groups:
        raise ValueError(f"{where}: the key grants nothing; list users, agents and/or groups, or set \"admin\": true")
    return Principal(name=_fingerprint(key), users=users, agents=agents, admin=admin, groups=groups)


class KeyRing:
    def __init__(self, api_keys: dict | None):
        if api_keys is not None and not isinstance(api_keys, dict):
            raise ValueError("MEMORYX_API_KEYS must be a JSON object: {\"<key>\": [\"<user_id>\"], ...}")
        self._keys: list[tuple[bytes, Principal]] = [
            (key.encode(), parse_key_spec(key, spec)) for key, spec in (api_keys or {}).items()]

    @property
    def dev_mode(self) -> bool:
        return not self._keys

    def authenticate(self, key: str | None) -> Principal:
        if self.dev_mode:
            return DEV_PRINCIPAL
        if not key:
            raise HTTPException(401, detail={"type": "unauthorized", "message": f"Missing {HEADER} header; send the API key configured in MEMORYX_API_KEYS."}, headers={"WWW-Authenticate": HEADER})
        given = key.encode()
        found = None
        for stored, principal in self._keys:  # compare against every key: no early exit timing signal
            if hmac.compare_digest(stored, given):
                found = principal
        if found is None:
            raise HTTPException(401, detail={"type": "unauthorized", "message": f"Invalid API key in {HEADER}; check MEMORYX_API_KEYS on the server."}, headers={"WWW-Authenticate": HEADER})
        return found

    def __call__(self, request: Request) -> Principal:
        principal = self.authenticate(request_key(request))
        request.state.principal = principal
        return principal
