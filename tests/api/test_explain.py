"""`Memory.explain`: why a memory is remembered, through the Python API, REST (real HTTP) and the CLI.
The four importance factors, the trace and the judge's reason, the source message, links, history, and the
tenancy of the by-id route."""

from __future__ import annotations

import json

import httpx
import pytest

from memoryx import Memory, NotFoundError
from memoryx.core.scope import Scope
from memoryx.server.app import create_app
from tests.cli.test_cli import run
from tests.support import ServerThread, shared_embeddings

KEYS = {"key-ann": ["ann"], "key-bob": ["bob"]}


@pytest.fixture(scope="module")
def mem(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("explain"), graph_backend="none", api_keys=KEYS) as m:
        yield m


def test_explain_shows_sources_judgment_factors_links_and_history(mem):
    added = mem.add([{"role": "user", "content": "Hi!"}, {"role": "user", "content": "I love hiking in the Alps."}],
                    user_id="ann")
    first = added["results"][0]
    other = mem.add("My favourite drink is green tea.", user_id="ann")["results"][0]
    mem.services.sql.link_memories(Scope(user_id="ann"), first["id"], other["id"], "same_topic")
    x = mem.explain(first["id"])
    assert x["memory"]["id"] == first["id"]
    factors = x["importance"]["factors"]
    assert set(factors) >= {"scarcity", "impact", "recency", "certainty"}
    assert x["importance"]["weights"] == {"scarcity": 0.25, "impact": 0.35, "recency": 0.2, "certainty": 0.2}
    assert x["importance"]["score"] == pytest.approx(sum(factors[k] * w for k, w in x["importance"]["weights"].items()),
                                                      abs=1e-3)
    assert x["confidence"] is not None and x["layer"] == "short_term"
    assert x["strength_days"] > 0 and 0 < x["retention"] <= 1
    [judged] = x["judgments"]
    assert judged["trace_id"] == added["trace_id"] and judged["event"] == "ADD" and judged["reason"]
    assert any("Alps" in m["content"] for m in judged["source_messages"])
    assert [(lk["relation"], lk["other_id"]) for lk in x["links"]] == [("same_topic", other["id"])]
    assert [h["event"] for h in x["history"]] == ["ADD"]
    with pytest.raises(NotFoundError):
        mem.explain(first["id"], user_id="bob")


def test_explain_over_rest_keeps_tenancy(mem):
    mid = mem.add("I am allergic to cats.", user_id="ann")["results"][0]["id"]
    with ServerThread(create_app(memory=mem)) as srv, httpx.Client(base_url=srv.url, timeout=60) as client:
        resp = client.get(f"/v1/memories/{mid}/explain", headers={"X-API-Key": "key-ann"})
        assert resp.status_code == 200, resp.text
        body = resp.json()
        assert body["memory"]["memory"] and body["importance"]["factors"]["impact"] == 0.85  # an allergy: a life fact
        assert body["judgments"][0]["event"] == "ADD"
        assert client.get(f"/v1/memories/{mid}/explain", headers={"X-API-Key": "key-bob"}).status_code == 404


def test_cli_explain_prints_the_factors_and_the_trace(tmp_path):
    # added in this process (closed before the commands run): the command on trial is explain
    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings()) as m:
        added = m.add("I prefer window seats on flights.", user_id="cy")
    mid = added["results"][0]["id"]
    text = run(tmp_path, "explain", mid).stdout
    for word in ("scarcity", "impact", "recency", "certainty", "confidence", added["trace_id"], "ADD"):
        assert word in text, text
    as_json = json.loads(run(tmp_path, "explain", mid, "--json").stdout)
    kind = as_json["memory"]["memory_type"]
    assert as_json["importance"]["factors"]["impact"] == {"preference": 0.9, "fact": 0.8, "semantic": 0.7,
                                                          "episodic": 0.5}[kind]
