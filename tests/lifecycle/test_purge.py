"""Purge: every trace of a scope leaves every store, and no file under the data directory keeps
its text afterwards; other scopes stay whole."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memoryx.api.memory import Memory
from memoryx.core.scope import Scope
from tests.support import shared_embeddings


def _files_with(root: Path, marker: str) -> list[str]:
    """Files under `root` whose bytes hold `marker` in any letter case (entity names are also stored
    lower-cased), as UTF-8 or UTF-16."""
    needles = [marker.lower().encode(enc) for enc in ("utf-8", "utf-16-le", "utf-16-be")]
    found = []
    for f in root.rglob("*"):
        if f.is_file():
            # the vector shards' files are 32 MB each, mostly zeros, where a UTF-16 needle is slow to rule out:
            # zero runs shrink to two zeros first (no needle holds three in a row), then one lower() per file
            data = re.sub(rb"\x00{3,}", b"\x00\x00", f.read_bytes()).lower()
            if any(n in data for n in needles):
                found.append(str(f.relative_to(root)))
    return found


def _memory(data: Path, **overrides) -> Memory:
    return Memory(data_dir=data, checkpointer="sqlite", embeddings=shared_embeddings(), **overrides)


def test_purge_leaves_no_trace_on_disk(tmp_path):
    data = tmp_path / "data"
    marker = f"Qz{uuid.uuid4().hex[:8]}mark"
    settings = {"graph_backend": "falkordb", "keep_finished_checkpoints": True}  # checkpoints hold it too
    m = _memory(data, **settings)
    try:
        m.add(f"I work at {marker}corp in Berlin.", user_id="alice", metadata={"note": f"{marker} note"})
        m.add(f"My friend {marker}son likes tennis.", user_id="alice", agent_id="bot", metadata={"tag": marker})
        m.add("I live in Paris and I love cheese.", user_id="bob")
        sql = m.services.sql
        assert any(marker.lower() in e["name"].lower() for e in sql.list_entities(Scope(user_id="alice")))
        assert m.services.graph.counts(Scope(user_id="bob"))["entities"] > 0
        before = _files_with(data, marker)
        assert any(f.startswith("qdrant") for f in before) and any(f.startswith("falkordb") for f in before), before

        report = m.purge(user_id="alice")  # also covers (alice, bot)

        assert report["scope"] == {"user_id": "alice"}
        assert report["sql"]["memories"] == 2 and report["sql"]["history"] == 2
        assert report["sql"]["raw_inputs"] == 2 and report["sql"]["judgments"] == 2
        assert report["sql"]["entities"] >= 2 and report["sql"]["relations"] >= 1
        assert report["vectors"] == {"memories": 2, "entities": report["sql"]["entities"]}
        assert report["graph"]["entities"] == report["sql"]["entities"] and report["graph"]["relations"] >= 1
        assert report["checkpoints"] == {"threads": 2}
        assert report["compacted"] == {"sql": True, "checkpoints": True, "vectors": True, "graph": True}
        assert m.get_all(user_id="alice")["results"] == [] and m.list_judgments(user_id="alice") == []
        assert m.search(marker, user_id="alice")["results"] == []
        assert report["sql"]["profile_values"] >= 1  # "I work at <marker>corp" was alice's work
        assert "Paris" in m.search("where does bob live?", user_id="bob")["results"][0]["memory"]
    finally:
        m.close()

    assert _files_with(data, marker) == []

    # the rewritten vector shards and graph AOF load again, with bob's data whole
    m = _memory(data, **settings)
    try:
        assert "Paris" in m.search("where does bob live?", user_id="bob")["results"][0]["memory"]
        assert m.services.graph.counts(Scope(user_id="bob"))["entities"] > 0
        assert m.services.vectors.count_memories(Scope(user_id="alice")) == 0
        assert m.services.graph.counts(Scope(user_id="alice"))["entities"] == 0
    finally:
        m.close()


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """A Memory without graph (fast), shared by the tests below; each works in its own users."""
    m = _memory(tmp_path_factory.mktemp("purge") / "data", graph_backend="none")
    yield m
    m.close()


def _texts(m: Memory, **scope) -> list[str]:
    return sorted(r["memory"] for r in m.get_all(**scope)["results"])


def test_scope_rule_every_row_within_the_scope(plain):
    u, other = f"u-{uuid.uuid4().hex[:6]}", f"o-{uuid.uuid4().hex[:6]}"
    plain.add("plain fact one", user_id=u, infer=False)
    plain.add("bot fact two", user_id=u, agent_id="bot", infer=False)
    plain.add("bot run fact three", user_id=u, agent_id="bot", run_id="r1", infer=False)
    plain.add("other user bot fact", user_id=other, agent_id="bot", infer=False)

    report = plain.purge(user_id=u, agent_id="bot")  # (u, bot) and (u, bot, r1); not (u) nor (other, bot)

    assert report["sql"]["memories"] == 2 and report["sql"]["raw_inputs"] == 2
    assert report["vectors"]["memories"] == 2
    assert _texts(plain, user_id=u) == ["plain fact one"]
    assert _texts(plain, user_id=other) == ["other user bot fact"]
    assert plain.search("fact", user_id=u, agent_id="bot")["results"] == []
    again = plain.purge(user_id=u, agent_id="bot", compact=False)  # idempotent: nothing left
    assert again["sql"]["memories"] == 0 and again["compacted"] == {}


def test_rest_purge_admin_or_owner(plain):
    from memoryx.server.app import create_app
    from memoryx.settings import Settings

    alice, bob = f"a-{uuid.uuid4().hex[:6]}", f"b-{uuid.uuid4().hex[:6]}"
    for user in (alice, bob):
        plain.add(f"{user} likes purple", user_id=user, infer=False)
    keys = {"k-admin": {"admin": True}, "k-alice": [alice], "k-bot": {"agents": ["bot"]}}
    app = create_app(memory=plain, settings=Settings(data_dir=plain.settings.data_dir, api_keys=keys))
    with TestClient(app) as client:
        assert client.post("/v1/purge", json={"user_id": alice}).status_code == 401
        assert client.post("/v1/purge", json={"user_id": bob}, headers={"X-API-Key": "k-alice"}).status_code == 403
        # an agent-wide purge reaches every user's rows of that agent: admins only
        assert client.post("/v1/purge", json={"agent_id": "bot"}, headers={"X-API-Key": "k-bot"}).status_code == 403
        own = client.post("/v1/purge", json={"compact": False}, headers={"X-API-Key": "k-alice"})  # its one user
        assert own.status_code == 200, own.text
        assert own.json()["scope"] == {"user_id": alice} and own.json()["sql"]["memories"] == 1
        admin = client.post("/v1/purge", json={"user_id": bob}, headers={"X-API-Key": "k-admin"})
        assert admin.status_code == 200 and admin.json()["vectors"]["memories"] == 1
    assert _texts(plain, user_id=alice) == [] and _texts(plain, user_id=bob) == []


def test_cli_purge(tmp_path):
    from tests.cli.test_cli import run

    data = tmp_path / "cli"
    env = {"MEMORYX_GRAPH_BACKEND": "none"}
    run(data, "add", "I collect stamps", "--user-id", "carl", "--no-infer", env=env)
    report = json.loads(run(data, "purge", "--user-id", "carl", "--yes", "--json", env=env).stdout)
    assert report["sql"]["memories"] == 1 and report["sql"]["raw_inputs"] == 1 and report["compacted"]["sql"]


def test_purging_a_user_reaches_their_words_in_group_chats(tmp_path):
    """Purging a user removes what they said in every group chat (their memories, their turns in the
    group's episodes, raw inputs and judgments, their profile traces), one report entry per group, and no file
    keeps their words; the other participants' memories stay whole."""
    data = tmp_path / "data"
    marker = f"Zq{uuid.uuid4().hex[:8]}fish"
    m = _memory(data, graph_backend="none", llm="offline", episodes=True)
    try:
        for g in ("g1", "g2"):
            m.add([{"role": "user", "content": f"I have a pet called {marker}.", "name": "Caroline",
                    "timestamp": "2023-05-08T13:56:00Z"},
                   {"role": "user", "content": "I have two kids.", "name": "Melanie", "timestamp": "2023-05-08T13:57:00Z"}],
                  group_id=g)
        m.add("I live in Paris", user_id="Caroline")
        melanie = {g: [r["id"] for r in m.get_all(group_id=g, user_id="Melanie")["results"]] for g in ("g1", "g2")}
        assert all(melanie.values()) and _files_with(data, marker)

        report = m.purge(user_id="Caroline")

        assert set(report["groups"]) == {"g1", "g2"}
        for g in ("g1", "g2"):
            entry = report["groups"][g]
            # her fact and her own episode go; the group's episode and Melanie's own episode lose her words
            assert entry["sql"]["memories"] == 2 and entry["shared"]["episodes_redacted"] == 2
            assert entry["shared"]["raw_inputs_redacted"] == 1 and entry["shared"]["judgments_redacted"] == 1
            assert [r["id"] for r in m.get_all(group_id=g, user_id="Melanie")["results"]] == melanie[g]
            assert m.get_all(group_id=g, user_id="Caroline")["results"] == []
            episode = m.get_all(group_id=g, filters={"category": "episode"})["results"][0]
            assert episode["metadata"]["participants"] == ["Melanie"] and "Caroline" not in episode["memory"]
            members = [v["value"] for v in m.get_profile(group_id=g)["members"]]
            assert members == ["Melanie"]
        assert m.get_all(user_id="Caroline")["results"] == []
    finally:
        m.close()
    assert _files_with(data, marker) == []
