"""Every route x every principal, generated from the app itself: a route the app serves without an entry in
MATRIX below fails `test_every_route_has_an_entry` (and an entry for a route that is gone fails too), so a
new route is classified (its authorize() action, who owns the target it is sent at) before it merges.

The target of every scoped request is alice's data (her memory, her add run's judgment, her profile; the
group's profile for group routes). For each route and principal, over real HTTP (uvicorn on 127.0.0.1):
- anonymous gets 401 everywhere but /healthz;
- the owners of the target get an answer below 400 (and, for reads that show it, alice's marker);
- no answer ever holds a marker of data the principal does not hold (alice's, bob's, the agent's global
  memories, the group's);
- an answer >= 400 leaves the stores as they were (every table's rows counted, memories and judgments
  compared); an answer below 400 to a non-owner left alice's private rows and profile as they were.
The MCP tools, listed through the SDK's client, get the same treatment (TOOLS below).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import httpx
import httpx2
import pytest
import sqlalchemy as sa
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memoryx import Memory
from memoryx.core.authorization import Action
from memoryx.server.app import create_app
from tests.support import ServerThread

pytestmark = pytest.mark.integration

KEYS = {
    "k-alice": ["alice"],
    "k-bob": ["bob"],
    "k-carol": ["carol"],  # a second user key holding nothing of the others'
    "k-agent": {"agents": ["agentX"]},
    "k-alice-agent": {"users": ["alice"], "agents": ["agentX"]},
    "k-group": {"groups": ["g1"]},
    "k-admin": {"admin": True},
}
PRINCIPALS = {"anonymous": None, "bob": "k-bob", "carol": "k-carol", "agent": "k-agent", "group": "k-group",
              "alice": "k-alice", "alice_agent": "k-alice-agent", "admin": "k-admin"}  # owners run last
MARKS = {"ALICEMARK": {"alice", "alice_agent", "admin"}, "BOBMARK": {"bob", "admin"},
         "AGENTMARK": {"agent", "admin"}, "GROUPMARK": {"group", "admin"},
         # said by alice to another agent than the user + agent key's: her user key reads it, that key never
         "SAKEMARK": {"alice", "admin"}}

ALICE = frozenset({"alice", "alice_agent", "admin"})
GROUP = frozenset({"group", "admin"})
ADMIN = frozenset({"admin"})
ANY_KEY = frozenset(PRINCIPALS) - {"anonymous"}
EVERYONE = frozenset(PRINCIPALS)


@dataclass(frozen=True)
class Entry:
    """One route: the authorize() action it asks (None: no tenant data), who owns its target, the request."""

    action: Action | None
    owners: frozenset[str]
    request: Callable[[dict], dict]  # targets -> {"url", "json"?, "params"?}
    shows: bool = False  # an owner's answer holds alice's marker
    mutates: bool = False  # an owner's call changes the target: seed again after it
    owner_ok: Callable[[int], bool] = field(default=lambda status: status < 400)
    also: frozenset[str] = frozenset()  # non-owners answered below 400 all the same (acting in their own scope)


def at(url: str, **kw) -> Callable[[dict], dict]:
    return lambda t: {"url": url.format(**t), **{k: _fill(v, t) for k, v in kw.items()}}


def _fill(value: Any, t: dict) -> Any:
    if isinstance(value, str):
        return value.format(**t)
    if isinstance(value, dict):
        return {k: _fill(v, t) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, t) for v in value]
    return value


def _schema(action=None):
    return Entry(None, ANY_KEY, at("{_path}"))


A = Action
MSG = [{"role": "user", "content": "I like green tea"}]
ANY_BELOW_500 = lambda status: status < 500  # noqa: E731 - an owner's call on a target in the wrong state
MATRIX: dict[tuple[str, str], Entry] = {
    ("GET", "/healthz"): Entry(None, EVERYONE, at("/healthz")),
    ("GET", "/metrics"): Entry(A.METRICS, ADMIN, at("/metrics")),
    # the API's documentation and the page icon: open (no tenant data; a browser sends no key for them)
    ("GET", "/docs"): Entry(None, EVERYONE, at("/docs")),
    ("GET", "/docs/oauth2-redirect"): Entry(None, EVERYONE, at("/docs/oauth2-redirect")),
    ("GET", "/openapi.json"): Entry(None, EVERYONE, at("/openapi.json")),
    ("GET", "/redoc"): Entry(None, EVERYONE, at("/redoc")),
    ("GET", "/favicon.ico"): Entry(None, EVERYONE, at("/favicon.ico")),
    ("POST", "/mcp"): Entry(None, ANY_KEY, at("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                                headers={"Accept": "application/json, text/event-stream"})),
    # REST
    ("POST", "/v1/memories"): Entry(A.WRITE, ALICE, at("/v1/memories", json={"messages": MSG, "user_id": "alice"})),
    ("POST", "/v1/memories/search"): Entry(A.SEARCH, ALICE, at("/v1/memories/search", json={"query": "vault code", "user_id": "alice"}), shows=True),
    ("POST", "/v1/memories/context"): Entry(A.SEARCH, ALICE, at("/v1/memories/context", json={"query": "vault code", "user_id": "alice"}), shows=True),
    ("GET", "/v1/memories"): Entry(A.LIST, ALICE, at("/v1/memories", params={"user_id": "alice"}), shows=True),
    ("DELETE", "/v1/memories"): Entry(A.DELETE, ALICE, at("/v1/memories", params={"user_id": "alice", "run_id": "r1"}), mutates=True),
    ("GET", "/v1/memories/{memory_id}"): Entry(A.READ, ALICE, at("/v1/memories/{mid}"), shows=True),
    ("PUT", "/v1/memories/{memory_id}"): Entry(A.WRITE, ALICE, at("/v1/memories/{mid}", json={"text": "ALICEMARK moved"}), mutates=True),
    ("DELETE", "/v1/memories/{memory_id}"): Entry(A.DELETE, ALICE, at("/v1/memories/{mid}"), mutates=True),
    ("GET", "/v1/memories/{memory_id}/history"): Entry(A.READ, ALICE, at("/v1/memories/{mid}/history"), shows=True),
    ("POST", "/v1/memories/{memory_id}/restore"): Entry(A.WRITE, ALICE, at("/v1/memories/{mid}/restore"), owner_ok=ANY_BELOW_500),
    ("POST", "/v1/reviews/{trace_id}"): Entry(A.WRITE, ALICE, at("/v1/reviews/{trace}", json={"operations": []}), owner_ok=ANY_BELOW_500),
    ("POST", "/v1/memories/batch"): Entry(A.WRITE, ALICE, at("/v1/memories/batch", json={"items": [{"messages": MSG, "user_id": "alice"}], "infer": False})),
    ("GET", "/v1/judgments"): Entry(A.JUDGMENTS, ALICE, at("/v1/judgments", params={"user_id": "alice"}), shows=True),
    ("GET", "/v1/judgments/stats"): Entry(A.JUDGMENTS, ALICE, at("/v1/judgments/stats", params={"user_id": "alice"})),
    ("GET", "/v1/judgments/{trace_id}"): Entry(A.JUDGMENTS, ALICE, at("/v1/judgments/{trace}"), shows=True),
    ("POST", "/v1/judgments/{trace_id}/verify"): Entry(A.VERIFY, ALICE, at("/v1/judgments/{trace}/verify", json={"result": "CORRECT"}), mutates=True),
    ("GET", "/v1/memories/{memory_id}/explain"): Entry(A.READ, ALICE, at("/v1/memories/{mid}/explain"), shows=True),
    # the judgment log's audit (no finding exists for the target: an owner's by-id call may answer 404)
    ("GET", "/v1/judgments/findings"): Entry(A.JUDGMENTS, ALICE, at("/v1/judgments/findings", params={"user_id": "alice"})),
    ("GET", "/v1/judgments/findings/{finding_id}"): Entry(A.JUDGMENTS, ALICE, at("/v1/judgments/findings/f-none"), owner_ok=ANY_BELOW_500),
    ("POST", "/v1/judgments/findings/{finding_id}/settle"): Entry(A.VERIFY, ALICE, at("/v1/judgments/findings/f-none/settle", json={"dismiss": True, "reason": "checked"}), owner_ok=ANY_BELOW_500),
    ("POST", "/v1/judgments/audit"): Entry(A.JUDGMENTS, ALICE, at("/v1/judgments/audit", json={"user_id": "alice"}), mutates=True),
    ("GET", "/v1/judgments/report"): Entry(A.JUDGMENTS, ALICE, at("/v1/judgments/report", params={"user_id": "alice", "days": 2})),
    ("POST", "/v1/judgments/verify"): Entry(A.VERIFY, ALICE, at("/v1/judgments/verify", json={"trace_ids": ["{trace}"], "result": "CORRECT"}), mutates=True),
    ("POST", "/v1/judgments/{trace_id}/rollback"): Entry(A.ROLLBACK, ALICE, at("/v1/judgments/{trace}/rollback"), mutates=True, owner_ok=ANY_BELOW_500),
    ("GET", "/v1/profiles/{user_id}"): Entry(A.PROFILE, ALICE, at("/v1/profiles/alice", params={"include_history": "true"}), shows=True),
    ("GET", "/v1/groups/{group_id}/profile"): Entry(A.PROFILE, GROUP, at("/v1/groups/g1/profile")),
    ("POST", "/v1/consolidate"): Entry(A.WRITE, ALICE, at("/v1/consolidate", json={"user_id": "alice", "dry_run": True})),
    ("POST", "/v1/runs/{run_id}/end"): Entry(A.END_RUN, ALICE, at("/v1/runs/r1/end", json={"user_id": "alice"}), mutates=True),
    ("POST", "/v1/purge"): Entry(A.PURGE, ALICE, at("/v1/purge", json={"user_id": "alice", "compact": False}), mutates=True),
    # the review page's API
    ("GET", "/v1/ui/me"): Entry(None, ANY_KEY, at("/v1/ui/me")),
    ("GET", "/v1/ui/users"): Entry(A.JUDGMENTS, ANY_KEY, at("/v1/ui/users")),
    ("GET", "/v1/ui/judgments"): Entry(A.JUDGMENTS, ALICE, at("/v1/ui/judgments", params={"user_id": "alice"}), shows=True),
    ("GET", "/v1/ui/judgments/{trace_id}/rollback-links"): Entry(A.JUDGMENTS, ALICE, at("/v1/ui/judgments/{trace}/rollback-links")),
    ("GET", "/v1/ui/reviews"): Entry(A.JUDGMENTS, ALICE, at("/v1/ui/reviews", params={"user_id": "alice"})),
    ("GET", "/v1/ui/timeline"): Entry(A.JUDGMENTS, ALICE, at("/v1/ui/timeline", params={"user_id": "alice"})),
    ("GET", "/v1/ui/graph"): Entry(A.LIST, ALICE, at("/v1/ui/graph", params={"user_id": "alice"})),
    # mem0's routes
    ("GET", "/v1/ping/"): Entry(None, ANY_KEY, at("/v1/ping/")),
    ("POST", "/v1/memories/"): Entry(A.WRITE, ALICE, at("/v1/memories/", json={"messages": MSG, "user_id": "alice", "infer": False})),
    ("POST", "/v2/memories/"): Entry(A.LIST, ALICE, at("/v2/memories/", json={"filters": {"user_id": "alice"}}), shows=True),
    ("POST", "/v2/memories/search/"): Entry(A.SEARCH, ALICE, at("/v2/memories/search/", json={"query": "vault code", "filters": {"user_id": "alice"}}), shows=True),
    ("GET", "/v1/memories/{memory_id}/"): Entry(A.READ, ALICE, at("/v1/memories/{mid}/"), shows=True),
    ("PUT", "/v1/memories/{memory_id}/"): Entry(A.WRITE, ALICE, at("/v1/memories/{mid}/", json={"text": "ALICEMARK moved"}), mutates=True),
    ("DELETE", "/v1/memories/{memory_id}/"): Entry(A.DELETE, ALICE, at("/v1/memories/{mid}/"), mutates=True),
    ("GET", "/v1/memories/{memory_id}/history/"): Entry(A.READ, ALICE, at("/v1/memories/{mid}/history/"), shows=True),
    ("DELETE", "/v1/memories/"): Entry(A.DELETE, ALICE, at("/v1/memories/", params={"user_id": "alice", "run_id": "r1"}), mutates=True),
    ("PUT", "/v1/batch/"): Entry(A.WRITE, ALICE, at("/v1/batch/", json={"memories": [{"memory_id": "{mid}", "text": "ALICEMARK b"}]}), mutates=True),
    ("DELETE", "/v1/batch/"): Entry(A.DELETE, ALICE, at("/v1/batch/", json={"memories": [{"memory_id": "{mid}"}]}), mutates=True),
    ("POST", "/v1/feedback/"): Entry(A.WRITE, ALICE, at("/v1/feedback/", json={"memory_id": "{mid}", "feedback": "POSITIVE"})),
    ("POST", "/v1/exports/"): Entry(A.EXPORT, ALICE, at("/v1/exports/", json={"filters": {"user_id": "alice"}})),
    ("POST", "/v1/exports/get/"): Entry(A.EXPORT, ALICE, at("/v1/exports/get/", json={"filters": {"user_id": "alice"}}), shows=True),
    # LangServe
    ("POST", "/graphs/add/invoke"): Entry(A.WRITE, ALICE, at("/graphs/add/invoke", json={"input": {"messages": MSG, "user_id": "alice"}})),
    ("POST", "/graphs/add/batch"): Entry(A.WRITE, ALICE, at("/graphs/add/batch", json={"inputs": [{"messages": MSG, "user_id": "alice"}]})),
    ("POST", "/graphs/add/stream"): Entry(A.WRITE, ALICE, at("/graphs/add/stream", json={"input": {"messages": MSG, "user_id": "alice"}})),
    ("POST", "/graphs/search/invoke"): Entry(A.SEARCH, ALICE, at("/graphs/search/invoke", json={"input": {"query": "vault code", "user_id": "alice"}}), shows=True),
    ("POST", "/graphs/search/batch"): Entry(A.SEARCH, ALICE, at("/graphs/search/batch", json={"inputs": [{"query": "vault code", "user_id": "alice"}]}), shows=True),
    ("POST", "/graphs/search/stream"): Entry(A.SEARCH, ALICE, at("/graphs/search/stream", json={"input": {"query": "vault code", "user_id": "alice"}}), shows=True),
    ("POST", "/graphs/add_review/invoke"): Entry(A.WRITE, ALICE, at("/graphs/add_review/invoke", json={"input": {"messages": "I like tea", "user_id": "alice"}})),
    ("POST", "/graphs/add_review/batch"): Entry(A.WRITE, ALICE, at("/graphs/add_review/batch", json={"inputs": [{"messages": "I like tea", "user_id": "alice"}]})),
    ("POST", "/graphs/resume/invoke"): Entry(A.WRITE, ALICE, at("/graphs/resume/invoke", json={"input": {"trace_id": "{trace}"}}), owner_ok=ANY_BELOW_500),
    ("POST", "/graphs/resume/batch"): Entry(A.WRITE, ALICE, at("/graphs/resume/batch", json={"inputs": [{"trace_id": "{trace}"}]}), owner_ok=ANY_BELOW_500),
}
# mem0's routes answer without their trailing slash too (curl and many clients do not follow a 307 for a POST)
for _method, _path in [("GET", "/v1/ping/"), ("POST", "/v2/memories/"), ("POST", "/v2/memories/search/"),
                       ("PUT", "/v1/batch/"), ("DELETE", "/v1/batch/"), ("POST", "/v1/feedback/"),
                       ("POST", "/v1/exports/"), ("POST", "/v1/exports/get/")]:
    _entry = MATRIX[(_method, _path)]
    _slashed = _entry.request
    MATRIX[(_method, _path.rstrip("/"))] = replace(
        _entry, request=lambda t, _r=_slashed: {**_r(t), "url": _r(t)["url"].rstrip("/")})
for graph in ("add", "search", "add_review", "resume"):
    for schema in ("input_schema", "output_schema", "config_schema"):
        MATRIX[("GET", f"/graphs/{graph}/{schema}")] = Entry(None, ANY_KEY, at(f"/graphs/{graph}/{schema}"))

# a group key given alice's user_id acts in its group (alice as a participant there): answered, never with
# alice's private memories, never changing them (the checks below hold it to that)
for _route in [("DELETE", "/v1/memories"), ("DELETE", "/v1/memories/"), ("GET", "/v1/judgments"),
               ("GET", "/v1/memories"), ("GET", "/v1/ui/graph"), ("GET", "/v1/ui/judgments"), ("GET", "/v1/ui/reviews"),
               ("GET", "/v1/ui/timeline"), ("POST", "/graphs/add/batch"), ("POST", "/graphs/add/invoke"),
               ("POST", "/graphs/add/stream"), ("POST", "/graphs/add_review/batch"), ("POST", "/graphs/add_review/invoke"),
               ("POST", "/graphs/search/batch"), ("POST", "/graphs/search/invoke"), ("POST", "/graphs/search/stream"),
               ("POST", "/v1/consolidate"), ("POST", "/v1/exports/"), ("POST", "/v1/exports/get/"),
               ("POST", "/v1/memories"), ("POST", "/v1/memories/"), ("POST", "/v1/memories/context"),
               ("POST", "/v1/memories/search"), ("POST", "/v1/purge"), ("POST", "/v1/runs/{run_id}/end"),
               ("POST", "/v2/memories/"), ("POST", "/v2/memories/search/"), ("POST", "/v1/exports"),
               ("POST", "/v1/exports/get"), ("POST", "/v2/memories"), ("POST", "/v2/memories/search"),
               ("GET", "/v1/judgments/findings"), ("GET", "/v1/judgments/report")]:
    MATRIX[_route] = replace(MATRIX[_route], also=frozenset({"group"}))
# the batch add answers 200 with a per-item error for an item the key may not write (and writes nothing of it)
MATRIX[("POST", "/v1/memories/batch")] = replace(MATRIX[("POST", "/v1/memories/batch")], also=ANY_KEY)
# batch verification answers 200 with "not_found" for a run the key may not see (and verifies nothing of it)
MATRIX[("POST", "/v1/judgments/verify")] = replace(MATRIX[("POST", "/v1/judgments/verify")], also=ANY_KEY)

# MCP tools (listed through the SDK): the arguments, sent at alice's data
TOOLS: dict[str, tuple[Action, dict, bool]] = {
    "memory_add": (A.WRITE, {"messages": MSG, "user_id": "alice"}, False),
    "memory_search": (A.SEARCH, {"query": "vault code", "user_id": "alice"}, True),
    "memory_get_context": (A.SEARCH, {"query": "vault code", "user_id": "alice"}, True),
    "memory_update": (A.WRITE, {"memory_id": "{mid}", "text": "ALICEMARK moved", "user_id": "alice"}, False),
    "memory_forget": (A.DELETE, {"memory_id": "{mid}", "user_id": "alice"}, False),
    # a description no memory fits: the owner is asked back (no error, nothing written), others are refused
    "memory_link": (A.WRITE, {"source": "{mid}", "target": "a lecture on quantum physics", "relation": "related",
                              "user_id": "alice"}, False),
}


def app_routes(app) -> set[tuple[str, str]]:
    """(method, path) of every route the app serves, included routers and mounted LangServe paths too."""
    out: set[tuple[str, str]] = set()

    def walk(routes):
        for r in routes:
            if hasattr(r, "original_router"):
                walk(r.original_router.routes)
            elif getattr(r, "path", None) == "/mcp":
                out.add(("POST", "/mcp"))
            else:
                out.update((m, r.path) for m in (getattr(r, "methods", None) or ()) if m != "HEAD")

    walk(app.routes)
    return out


def seed(m: Memory, targets: dict) -> None:
    """alice's memory and add run (the targets), and her profile (a value said to agentX, one said to
    another agent: derived data every read of it must keep behind the lock)."""
    n = targets["n"] = targets.get("n", 0) + 1  # a new text each time: the same one again adds nothing
    targets["mid"] = m.add(f"ALICEMARK vault code 4711-{n}", user_id="alice", agent_id="agentX", run_id="r1",
                           infer=False)["results"][0]["id"]
    targets["trace"] = m.add(f"My vault code is ALICEMARK. I live in Berlin since {2000 + n}.", user_id="alice",
                             agent_id="agentX", run_id="r1")["trace_id"]
    for agent, value in (("agentX", "ALICEMARK green tea"), ("other", "SAKEMARK sake")):
        mid = m.add(f"{value} {n}", user_id="alice", agent_id=agent, infer=False)["results"][0]["id"]
        m.services.sql.apply_profile_changes("user:alice", [{"op": "add", "field": "preference", "value": value,
                                                             "key": value.lower(), "memory_id": mid}])


def seed_others(m: Memory) -> None:
    m.add("BOBMARK vault code 9902", user_id="bob", agent_id="agentX", run_id="r1", infer=False)
    m.add("My vault code is BOBMARK. I live in Oslo.", user_id="bob", agent_id="agentX", run_id="r1")
    m.add("AGENTMARK vault code policy", agent_id="agentX", infer=False)
    m.add("GROUPMARK vault code of the club", user_id="alice", group_id="g1", infer=False)


_SKIP = {"projection_outbox", "schema_version"}  # the replay loop drains the outbox meanwhile


def snapshot(m: Memory) -> tuple:
    eng = m.services.sql.engine
    with eng.connect() as c:
        tables = sorted(set(sa.inspect(eng).get_table_names()) - _SKIP)
        counts = tuple((t, c.execute(sa.text(f'SELECT count(*) FROM "{t}"')).scalar()) for t in tables)
        rows = c.execute(sa.text("SELECT id, text, status, deleted_at FROM memories ORDER BY id")).all()
        judged = c.execute(sa.text("SELECT trace_id, is_verified, status FROM memory_judgments ORDER BY trace_id")).all()
    return counts, hashlib.sha256(repr((rows, judged)).encode()).hexdigest()


def alice_private(m: Memory) -> tuple:
    rows = sorted((r["id"], r["memory"], r.get("status")) for r in m.get_all(user_id="alice", limit=10000)["results"])
    return rows, m.get_profile(user_id="alice")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("matrix"), graph_backend="none", api_keys=KEYS) as m:
        targets: dict = {}
        seed_others(m)
        seed(m, targets)
        app = create_app(memory=m)
        with ServerThread(app) as srv:
            yield m, app, srv.url, targets


def test_every_route_has_an_entry(world):
    _, app, _, _ = world
    served = app_routes(app)
    assert not served - set(MATRIX), f"routes without a matrix entry (classify them): {sorted(served - set(MATRIX))}"
    assert not set(MATRIX) - served, f"matrix entries for routes that are gone: {sorted(set(MATRIX) - served)}"


def _marks_leaked(principal: str, text: str) -> list[str]:
    return [mark for mark, holders in MARKS.items() if principal not in holders and mark in text]


def test_route_matrix(world):
    m, _, url, targets = world
    cells = 0
    failures: list[str] = []
    with httpx.Client(base_url=url, timeout=120) as http:
        for (method, path), entry in sorted(MATRIX.items()):
            for principal, key in PRINCIPALS.items():
                spec = entry.request({**targets, "_path": path})
                headers = {**spec.get("headers", {}), **({"X-API-Key": key} if key else {})}
                before, private = snapshot(m), alice_private(m)
                r = http.request(method, spec["url"], params=spec.get("params"), json=spec.get("json"), headers=headers)
                cells += 1
                where = f"{method} {path} as {principal}: {r.status_code}"
                if r.status_code >= 500:
                    failures.append(f"{where} (server error) {r.text[:200]}")
                if leaked := _marks_leaked(principal, r.text):
                    failures.append(f"{where} leaked {leaked}")
                owner = principal in entry.owners
                if principal == "anonymous" and not owner and r.status_code != 401:
                    failures.append(f"{where}: expected 401")
                if not owner and principal not in entry.also and not 400 <= r.status_code < 500:
                    failures.append(f"{where}: a non-owner was not refused")
                if owner and not entry.owner_ok(r.status_code):
                    failures.append(f"{where}: the owner was refused {r.text[:200]}")
                if owner and entry.shows and "ALICEMARK" not in r.text and principal != "anonymous":
                    failures.append(f"{where}: the owner's read lacks alice's memory")
                if r.status_code >= 400 and snapshot(m) != before:
                    failures.append(f"{where}: refused, yet the stores changed")
                if not owner and r.status_code < 400 and alice_private(m) != private:
                    failures.append(f"{where}: a non-owner changed alice's private memories or profile")
                if owner and entry.mutates and r.status_code < 400:
                    seed(m, targets)
    assert cells == len(MATRIX) * len(PRINCIPALS)
    assert not failures, "\n".join(failures)


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_tool_matrix(world):
    m, _, url, targets = world
    failures: list[str] = []
    for principal, key in PRINCIPALS.items():
        if key is None:
            continue  # the /mcp route's own cell: 401 without a key
        client = Client(streamable_http_client(f"{url}/mcp", http_client=httpx2.AsyncClient(
            headers={"X-API-Key": key}, timeout=120)))
        async with client:
            listed = {t.name for t in (await client.list_tools()).tools}
            assert listed == set(TOOLS), f"MCP tools without a matrix entry: {sorted(listed - set(TOOLS))}"
            for name, (_action, args, shows) in sorted(TOOLS.items()):
                before, private = snapshot(m), alice_private(m)
                result = await client.call_tool(name, _fill(args, targets))
                text = " ".join(getattr(c, "text", "") for c in result.content) + str(result.structured_content)
                where = f"MCP {name} as {principal}: {'error' if result.is_error else 'ok'}"
                owner = principal in ALICE
                if leaked := _marks_leaked(principal, text):
                    failures.append(f"{where} leaked {leaked}")
                if owner and result.is_error:
                    failures.append(f"{where}: the owner was refused: {text[:200]}")
                if not owner and principal != "group" and not result.is_error:  # group: acts in its group
                    failures.append(f"{where}: a non-owner was not refused")
                if owner and shows and "ALICEMARK" not in text:
                    failures.append(f"{where}: the owner's read lacks alice's memory")
                if result.is_error and snapshot(m) != before:
                    failures.append(f"{where}: refused, yet the stores changed")
                if not owner and not result.is_error and alice_private(m) != private:
                    failures.append(f"{where}: a non-owner changed alice's private memories")
                if owner and not result.is_error and name in ("memory_update", "memory_forget"):
                    seed(m, targets)
    assert not failures, "\n".join(failures)
