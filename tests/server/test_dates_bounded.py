"""Dates in one place: every route that takes a date or time reads it through core.instants (years 1-9999 in
UTC after the offset, numbers as epoch seconds within that range) and answers anything else with a 422 naming
the field, never a 5xx; a streaming route refuses before its stream opens. The edges the red team found first,
then property-based tests (hypothesis) over date strings and numbers on every such route."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryx import Memory
from memoryx.core.instants import MAX_EPOCH, MIN_EPOCH, instant
from memoryx.errors import InvalidInputError
from memoryx.server.app import create_app
from tests.support import shared_embeddings

H = {"X-API-Key": "k-alice"}
KEYS = {"k-alice": ["alice"]}

# (method, path, body builder): every route with a date or time input, the value put where it is read
ROUTES = {
    "search now": ("POST", "/v1/memories/search", lambda v: {"query": "tea", "user_id": "alice", "now": v}),
    "search as_of": ("POST", "/v1/memories/search", lambda v: {"query": "tea", "user_id": "alice", "as_of": v}),
    "search start": ("POST", "/v1/memories/search", lambda v: {"query": "tea", "user_id": "alice", "start": v}),
    "search end": ("POST", "/v1/memories/search", lambda v: {"query": "tea", "user_id": "alice", "end": v}),
    "search filter": ("POST", "/v1/memories/search",
                      lambda v: {"query": "tea", "user_id": "alice", "filters": {"created_at": {"gte": v}}}),
    "mem0 search filter": ("POST", "/v2/memories/search/", lambda v: {
        "query": "tea", "filters": {"AND": [{"user_id": "alice"}, {"created_at": {"lte": v}}]}}),
    "graph search now": ("POST", "/graphs/search/invoke", lambda v: {
        "input": {"query": "tea", "user_id": "alice", "now": v}}),
    "graph search stream": ("POST", "/graphs/search/stream", lambda v: {
        "input": {"query": "tea", "user_id": "alice", "as_of": v}}),
    "add timestamp": ("POST", "/v1/memories", lambda v: {"user_id": "alice", "infer": False, "messages": [
        {"role": "user", "content": "I like tea.", "timestamp": v}]}),
    "mem0 add timestamp": ("POST", "/v1/memories/", lambda v: {"user_id": "alice", "infer": False, "messages": [
        {"role": "user", "content": "I like tea.", "timestamp": v}]}),
    "mem0 expiration": ("POST", "/v1/memories/", lambda v: {
        "user_id": "alice", "infer": False, "expiration_date": v,
        "messages": [{"role": "user", "content": "I like green tea."}]}),
    "graph add timestamp": ("POST", "/graphs/add/invoke", lambda v: {"input": {"user_id": "alice", "messages": [
        {"role": "user", "content": "I like tea.", "timestamp": v}]}}),
    "graph add stream": ("POST", "/graphs/add/stream", lambda v: {"input": {"user_id": "alice", "messages": [
        {"role": "user", "content": "I like tea.", "timestamp": v}]}}),
    "audit since": ("POST", "/v1/judgments/audit", lambda v: {"user_id": "alice", "since": v}),
    "findings since": ("GET", "/v1/judgments/findings", lambda v: {"user_id": "alice", "since": v}),
    "consolidate now": ("POST", "/v1/consolidate", lambda v: {"user_id": "alice", "dry_run": True, "now": v}),
}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("dates"), graph_backend="none", api_keys=KEYS,
                embeddings=shared_embeddings()) as m:
        m.add("I like tea.", user_id="alice", infer=False)
        with TestClient(create_app(memory=m)) as c:
            yield m, c


def call(c: TestClient, route: str, value):
    method, path, body = ROUTES[route]
    if method == "GET":
        return c.get(path, params=body(value), headers=H)
    return c.request(method, path, json=body(value), headers=H)


def refused_or_fine(r, route: str) -> None:
    assert r.status_code < 500, f"{route}: {r.status_code} {r.text[:300]}"
    if "/stream" in ROUTES[route][1] and r.status_code == 200:
        assert '"status_code": 5' not in r.text and '"status_code":5' not in r.text, f"{route}: {r.text[:300]}"


EDGES = [  # what the red team sent
    ("search now", 1e18), ("search now", -1e18), ("search as_of", 1e18), ("search as_of", -1e18),
    ("search now", "0001-01-01T00:00:00+14:00"), ("search end", 1e300),
    ("add timestamp", "9999-12-31T23:59:59-14:00"), ("mem0 add timestamp", "9999-12-31T23:59:59-14:00"),
    ("graph add timestamp", "9999-12-31T23:59:59-14:00"), ("graph add stream", "9999-12-31T23:59:59-14:00"),
    ("audit since", "0001-01-01T00:00:00+14:00"), ("findings since", "0001-01-01T00:00:00+14:00"),
    ("audit since", "99999999999d"), ("findings since", "1e300d"),
    ("graph search stream", 1e18), ("graph search now", -1e18),
    ("consolidate now", 1e20), ("consolidate now", -1e20),
]


@pytest.mark.parametrize("route,value", EDGES)
def test_an_edge_date_is_a_422_naming_the_field(client, route, value):
    _, c = client
    r = call(c, route, value)
    assert r.status_code == 422, f"{route}: {r.status_code} {r.text[:300]}"
    field = route.split()[-1]
    field = {"stream": "", "timestamp": "timestamp", "filter": "created_at"}.get(field, field)
    assert field in r.text, r.text


def test_the_last_day_is_a_fine_expiration_date(client):
    m, c = client
    r = call(c, "mem0 expiration", "9999-12-31")
    assert r.status_code == 200, r.text


def test_consolidate_far_in_the_future_archives_nothing(client):
    m, c = client
    before = m.get_all(user_id="alice")["results"]
    assert call(c, "consolidate now", 1e20).status_code == 422
    assert m.get_all(user_id="alice")["results"] == before


def test_instant_reads_the_range_and_refuses_the_rest():
    assert instant("0001-01-01T00:00:00Z", "t").year == 1
    assert instant(MAX_EPOCH, "t").year == 9999 and instant(MIN_EPOCH, "t").year == 1
    assert instant("2024-05-01T02:00:00+02:00", "t").hour == 0
    for bad in ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", MAX_EPOCH + 1, MIN_EPOCH - 1,
                float("nan"), float("inf"), True, "yesterday-ish", "2024-13-01", 10**30, "9" * 100):
        with pytest.raises(InvalidInputError, match="when"):
            instant(bad, "when")


ISO_EDGES = st.one_of(
    st.datetimes(timezones=st.none()).map(lambda d: d.isoformat()),
    st.builds(lambda d, h, m, sign: f"{d.isoformat()}{sign}{h:02d}:{m:02d}",
              st.datetimes(timezones=st.none()), st.integers(0, 23), st.integers(0, 59), st.sampled_from("+-")),
    st.sampled_from(["0001-01-01", "9999-12-31", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00",
                     "9999-12-31T23:59:59.999999Z", "0000-01-01", "10000-01-01", "", " ", "Z", "2024-02-30"]),
)
NUMBERS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-2**63 + 1, 2**63 - 1),
    st.sampled_from([MIN_EPOCH, MAX_EPOCH, MIN_EPOCH - 1, MAX_EPOCH + 1, 0, -0.0, 1e300, -1e300, 1e18, -1e18]),
)
FAST = ["search now", "search as_of", "search start", "search end", "search filter", "mem0 search filter",
        "graph search now", "graph search stream", "audit since", "findings since", "consolidate now"]
WRITES = ["add timestamp", "mem0 add timestamp", "mem0 expiration", "graph add timestamp", "graph add stream"]


@pytest.mark.parametrize("route", FAST + WRITES)
def test_no_date_or_number_gets_a_5xx(client, route):
    _, c = client
    values = st.one_of(ISO_EDGES, NUMBERS)
    if route in ("audit since", "findings since", "mem0 expiration"):  # strings only (a query parameter / a date)
        values = st.one_of(ISO_EDGES, NUMBERS.map(lambda n: f"{n}d"), NUMBERS.map(str))

    @settings(max_examples=25 if route in WRITES else 40, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(values)
    def probe(value):
        refused_or_fine(call(c, route, value), route)

    probe()


def test_the_server_builds_the_date_readers_tables_at_startup(tmp_path):
    """The first request naming a date ("3 days ago", 三天前, 3日前) should not pay for the date library's tables:
    starting the app reads one date of each language on a thread of its own."""
    from memoryx.core import timeparse

    timeparse.WARMED.clear()
    with Memory(data_dir=tmp_path, graph_backend="none", api_keys=KEYS, embeddings=shared_embeddings()) as m:
        app = create_app(memory=m)
        assert not timeparse.WARMED.is_set()  # building the app reads nothing: the startup does
        with TestClient(app) as c:
            assert timeparse.WARMED.wait(timeout=60)
            assert c.get("/healthz").status_code == 200
