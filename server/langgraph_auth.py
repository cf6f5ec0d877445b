"""MemoryX's keys on the LangGraph server (`langgraph dev`, LangGraph Platform): langgraph.json's "auth".

The LangGraph server is a door to MemoryX: its store is MemoryXStore (memoryx.api.langgraph_store.served_store).
Like every door, it turns its caller into a principal and asks core/authorization.authorize for the scope:

- `authenticate`: the request's `X-API-Key` against MEMORYX_API_KEYS (server/auth.py `KeyRing`); no keys
  configured is local development mode (everything allowed), as for `memoryx serve`. A missing or unknown key
  is 401.
- `store`: every store operation's namespace is read with the served store's namespace rule and authorised
  for its action (put -> write, get -> read, search, delete, list_namespaces -> list); a namespace the key may
  not reach is 403 before the store is called.

- everything else (runs, threads, assistants): an admin key, or development mode. A run's input names the
  MemoryX ids the served graphs act for and a thread keeps a conversation's state; this door does not read
  them, so a user key is refused there rather than trusted (it reaches the store, within its namespaces).
"""

from __future__ import annotations

from functools import lru_cache

from langgraph_sdk import Auth

from memoryx.api.store_namespaces import NamespaceRule, NamespaceScopeError
from memoryx.core.authorization import Action, Principal, authorize
from memoryx.errors import MemoryXError
from memoryx.server.auth import HEADER, KeyRing, parse_key_spec
from memoryx.settings import get_settings

auth = Auth()

_ACTIONS = {"put": Action.WRITE, "get": Action.READ, "search": Action.SEARCH, "delete": Action.DELETE,
            "list_namespaces": Action.LIST}
_RULE = NamespaceRule()  # the served store's rule (served_store uses the default too)


@lru_cache(maxsize=1)
def _keys() -> tuple[KeyRing, dict[str, Principal]]:
    keys = get_settings().api_keys
    principals = [parse_key_spec(key, spec) for key, spec in (keys or {}).items()]
    return KeyRing(keys), {p.name: p for p in principals}


@auth.authenticate
async def authenticate(headers: dict) -> Auth.types.MinimalUserDict:
    ring, _ = _keys()
    raw = headers.get(HEADER.lower().encode()) or headers.get(HEADER.lower())
    key = raw.decode() if isinstance(raw, bytes) else raw
    try:
        principal = ring.authenticate(key)
    except Exception as exc:  # fastapi's HTTPException: the same 401 and message as memoryx serve
        detail = getattr(exc, "detail", {}) or {}
        raise Auth.exceptions.HTTPException(status_code=401, detail=detail.get("message") or str(exc)) from None
    return {"identity": principal.name, "is_authenticated": True}


def _principal(identity: str) -> Principal:
    ring, principals = _keys()
    if ring.dev_mode:
        return ring.authenticate(None)
    return principals[identity]


@auth.on.store
async def authorize_store(ctx: Auth.types.AuthContext, value: dict) -> None:
    namespace = value.get("namespace")
    if not namespace:
        return  # the store refuses a namespace that names no tenant (400), whoever asks
    try:
        scope = _RULE.scope_of(tuple(namespace))
    except NamespaceScopeError:
        return  # refused by the store with the rule in its message
    try:
        allowed = authorize(_principal(ctx.user.identity), _ACTIONS.get(ctx.action, Action.WRITE), scope.as_dict())
    except MemoryXError as exc:
        raise Auth.exceptions.HTTPException(status_code=403, detail=str(exc)) from None
    if allowed is not None and allowed != scope:
        # the key holds less than the namespace names (e.g. one agent within the user): the served store would
        # act on the whole namespace's scope, so the key is refused rather than widened
        raise Auth.exceptions.HTTPException(status_code=403, detail=(
            f"This API key reaches {allowed.as_dict()} only; the namespace {tuple(namespace)!r} names "
            f"{scope.as_dict()}. Use a key bound to that scope."))


@auth.on
async def admin_only(ctx: Auth.types.AuthContext, value: dict) -> None:
    principal = _principal(ctx.user.identity)
    if not principal.all_access:
        raise Auth.exceptions.HTTPException(status_code=403, detail=(
            f"{ctx.resource}.{ctx.action} on this LangGraph server needs an admin API key: a run's input names "
            "MemoryX ids and a thread keeps a conversation, which this door does not check. A user key reaches "
            "the store (/store) within its own namespaces."))
