"""API keys of the HTTP server (`X-API-Key`), each bound to the user ids it may touch.

`MEMORYX_API_KEYS` is a JSON map: key -> list of user ids, or key -> {"users": [...], "admin": true}.
An admin key may touch every scope. No keys configured: local development mode (everything allowed),
announced loudly at start.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from dataclasses import dataclass, field

from fastapi import HTTPException, Request

log = logging.getLogger("memoryx.server")

HEADER = "X-API-Key"


@dataclass(frozen=True)
class Principal:
    """Who is calling: the user ids the key may touch (empty for admins, who may touch all)."""

    name: str  # a short fingerprint of the key, safe to log
    users: frozenset[str] = field(default_factory=frozenset)
    admin: bool = False

    def can(self, user_id: str | None) -> bool:
        if self.admin:
            return True
        return user_id is not None and user_id in self.users

    def scope_user(self, user_id: str | None) -> str | None:
        """The user id a request acts for: the one given (checked) or, for a key of exactly one user,
        that user. Raises 400/403 HTTP errors with a message that says what to send."""
        if self.admin:
            return user_id
        if user_id is None:
            if len(self.users) == 1:
                return next(iter(self.users))
            raise HTTPException(400, detail={"type": "scope_error", "message": "user_id is required: this API key is bound to several users; pass the one to act for."})
        if user_id not in self.users:
            raise HTTPException(403, detail={"type": "forbidden", "message": f"This API key may not access user_id {user_id!r}; use a key bound to that user."})
        return user_id


DEV_PRINCIPAL = Principal(name="local-dev", admin=True)


def _fingerprint(key: str) -> str:
    return "key-" + hashlib.sha256(key.encode()).hexdigest()[:8]


class KeyRing:
    def __init__(self, api_keys: dict | None):
        self._keys: list[tuple[bytes, Principal]] = []
        for key, spec in (api_keys or {}).items():
            if not isinstance(key, str) or not key:
                raise ValueError("MEMORYX_API_KEYS: keys must be non-empty strings")
            if isinstance(spec, dict):
                users = spec.get("users") or []
                admin = bool(spec.get("admin", False))
            elif isinstance(spec, (list, tuple)):
                users, admin = spec, False
            elif isinstance(spec, str):
                users, admin = [spec], False
            else:
                raise ValueError(f"MEMORYX_API_KEYS[{_fingerprint(key)}]: expected a list of user ids or {{'users': [...], 'admin': bool}}")
            self._keys.append((key.encode(), Principal(name=_fingerprint(key), users=frozenset(map(str, users)), admin=admin)))

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
        principal = self.authenticate(request.headers.get(HEADER))
        request.state.principal = principal
        return principal
