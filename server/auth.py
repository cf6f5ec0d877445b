"""API keys of the HTTP server (`X-API-Key`), each bound to the user ids and agent ids it may touch.

`MEMORYX_API_KEYS` is a JSON map: key -> list of user ids, or key -> {"users": [...], "agents": [...],
"admin": true|false}. It is validated strictly when the server starts (`KeyRing`): admin must be a JSON
boolean, users / agents lists of non-empty strings, no other fields, and a non-admin key must grant
something. A bad entry stops the server with a message naming the entry by its fingerprint (never the key).

Each key becomes a `Principal` (memoryx.core.authorization), and every route asks `authorize()` for the
scope it may act on. Tenancy: a user's memories (and the agent memories learned in that user's conversations) belong to the
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
from typing import Any

from fastapi import HTTPException, Request

from memoryx.core.authorization import DEV_PRINCIPAL, Principal

log = logging.getLogger("memoryx.server")

HEADER = "X-API-Key"
KEY_FIELDS = ("users", "agents", "groups", "admin")


def id_value(name: str, value: Any) -> str | None:
    """A scope id from a request: None or a non-empty string (a list or a number is a 422, not a 500)."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise HTTPException(422, detail={"type": "validation_error",
                                         "message": f"{name} must be a non-empty string, got {type(value).__name__}."})
    return value


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
