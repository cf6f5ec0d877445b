"""The LangGraph server's door (server/langgraph_auth.py) without a server: each handler asked as langgraph-api asks
it, with a key ring of three keys. (tests/api/test_langgraph_store_served.py checks the same through `langgraph
dev` and the SDK.)"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from langgraph_sdk import Auth

from memoryx.server import langgraph_auth
from memoryx.server.auth import KeyRing, parse_key_spec

KEYS = {"key-alice": ["alice"], "key-alice-bot": {"users": ["alice"], "agents": ["bot"]},
        "key-admin": {"users": [], "admin": True}}


@pytest.fixture
def keys(monkeypatch):
    principals = {p.name: p for p in (parse_key_spec(k, v) for k, v in KEYS.items())}
    monkeypatch.setattr(langgraph_auth, "_keys", lambda: (KeyRing(KEYS), principals))
    return {k: parse_key_spec(k, v).name for k, v in KEYS.items()}


def _identity(key: str | None) -> str:
    headers = {b"x-api-key": key.encode()} if key else {}
    return asyncio.run(langgraph_auth.authenticate(headers))["identity"]


def _store(identity: str, action: str, namespace) -> int:
    ctx = SimpleNamespace(user=SimpleNamespace(identity=identity), resource="store", action=action)
    try:
        asyncio.run(langgraph_auth.authorize_store(ctx, {"namespace": namespace}))
        return 200
    except Auth.exceptions.HTTPException as exc:
        return exc.status_code


def test_keys_are_checked(keys):
    assert _identity("key-alice") == keys["key-alice"]
    for bad in (None, "key-nobody"):
        with pytest.raises(Auth.exceptions.HTTPException) as err:
            _identity(bad)
        assert err.value.status_code == 401


def test_each_store_action_reaches_only_the_keys_namespaces(keys):
    alice = keys["key-alice"]
    for action in ("put", "get", "search", "delete", "list_namespaces"):
        assert _store(alice, action, ("memories", "alice", "notes")) == 200
        assert _store(alice, action, ("memories", "bob")) == 403
        assert _store(keys["key-admin"], action, ("memories", "bob")) == 200
    # a key bound to one agent within alice holds less than ("memories", "alice") names: refused, not widened
    assert _store(keys["key-alice-bot"], "get", ("memories", "alice")) == 403
    # a namespace naming no tenant is left to the store, which refuses it with its rule (400)
    assert _store(alice, "put", ("memories",)) == 200


def test_runs_and_threads_need_an_admin_key(keys):
    def other(identity):
        ctx = SimpleNamespace(user=SimpleNamespace(identity=identity), resource="threads", action="create_run")
        try:
            asyncio.run(langgraph_auth.admin_only(ctx, {}))
            return 200
        except Auth.exceptions.HTTPException as exc:
            return exc.status_code

    assert other(keys["key-alice"]) == 403
    assert other(keys["key-admin"]) == 200
