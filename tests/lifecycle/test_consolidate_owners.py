"""Whose memories a consolidation pass takes (memoryx.core.owners), the schedule walking every owner
(users in and outside group chats, agents, runs, groups), and the group_id / end-run surfaces of the CLI and
REST. SQLite + embedded Qdrant edge + MiniLM; the offline model."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta, timezone

import pytest
from fastapi.testclient import TestClient

from memoryx.api.memory import Memory
from memoryx.core.owners import owned_by, owner_scope
from memoryx.core.scope import Scope
from memoryx.lifecycle.schedule import consolidate_loop
from tests.support import shared_embeddings

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
TEA, TEA2 = "I like green tea in the morning", "I like green tea in the morning."


def make_memory(tmp_path, **overrides) -> Memory:
    values = {"data_dir": tmp_path / "data", "graph_backend": "none", "checkpointer": "sqlite", **overrides}
    return Memory(llm="offline", embeddings=shared_embeddings(), **values)


def put(m: Memory, text: str, scope: Scope, *, days: float = 0, **kw) -> str:
    row = m.services.sql.insert_memory(scope=scope, text=text, created_at=T0 + timedelta(days=days), **kw)
    m.services.projector.sync_memories([row["id"]])
    return row["id"]


@pytest.mark.unit
def test_owner_rules():
    assert owner_scope({"user_id": "a", "agent_id": "bot", "run_id": "r"}) == Scope(user_id="a")
    assert owner_scope({"agent_id": "bot", "group_id": "g"}) == Scope(agent_id="bot", group_id="g")
    assert owner_scope({"run_id": "r"}) == Scope(run_id="r")
    assert owner_scope({"group_id": "g"}) == Scope(group_id="g")
    bot = Scope(agent_id="bot")
    assert owned_by(bot, {"agent_id": "bot"}) and not owned_by(bot, {"agent_id": "bot", "user_id": "alice"})
    assert owned_by(Scope(user_id="a"), {"user_id": "a", "agent_id": "bot", "run_id": "r"})
    assert not owned_by(Scope(user_id="a"), {"user_id": "a", "group_id": "g"})  # a group chat is its own owner
    assert not owned_by(Scope(group_id="g"), {"user_id": "a", "group_id": "g"})  # a participant's, not the group's
    assert owned_by(Scope(user_id="a", group_id="g"), {"user_id": "a", "group_id": "g"})


def test_an_agent_pass_never_merges_two_users_memories(tmp_path):
    with make_memory(tmp_path) as m:
        alice = put(m, TEA, Scope(user_id="alice", agent_id="bot"))
        bob = put(m, TEA2, Scope(user_id="bob", agent_id="bot"), days=1)
        own = [put(m, "Always answer in English", Scope(agent_id="bot"), days=i) for i in (0, 1)]
        report = m.consolidate(agent_id="bot", now=T0 + timedelta(days=2))
        assert report["memories"] == 2 and report["merged"] == 1  # the bot's own duplicate only
        assert m.services.sql.get_memory(own[1])["merged_into"] == own[0]
        assert {m.services.sql.get_memory(i)["status"] for i in (alice, bob)} == {"staged"}


def test_the_schedule_consolidates_every_owner(tmp_path):
    scopes = [Scope(user_id="alice"), Scope(user_id="caroline", group_id="club"), Scope(agent_id="bot"),
              Scope(group_id="club"), Scope(run_id="r9")]
    with make_memory(tmp_path) as m:
        ids = {s.key(): (put(m, TEA, s), put(m, TEA2, s, days=1)) for s in scopes}
        assert {s.key() for s in m.services.sql.memory_owner_scopes()} == {s.key() for s in scopes}

        async def until_done():
            task = asyncio.create_task(consolidate_loop(m, 0.05))
            try:
                for _ in range(600):
                    await asyncio.sleep(0.1)
                    if all(m.services.sql.get_memory(b)["status"] == "merged" for _, b in ids.values()):
                        return True
                return False
            finally:
                task.cancel()

        assert asyncio.run(until_done())
        for a, b in ids.values():  # each owner's pair merged within the owner
            assert m.services.sql.get_memory(b)["merged_into"] == a


def test_rest_consolidates_a_group_participant_and_ends_a_run(tmp_path):
    with make_memory(tmp_path, api_keys={"k-club": {"groups": ["club"]}, "k-alice": ["alice"]}) as m:
        g = Scope(user_id="caroline", group_id="club")
        a, b = put(m, TEA, g), put(m, TEA2, g, days=1)
        run = Scope(user_id="alice", run_id="chat-1")
        kept = put(m, "Alice's flight leaves at 9", run, importance=0.9)
        gone = put(m, "Alice said hi", run, importance=0.1)
        from memoryx.server.app import create_app

        with TestClient(create_app(memory=m, settings=m.services.settings)) as client:
            body = {"user_id": "caroline", "group_id": "club", "now": (T0 + timedelta(days=2)).isoformat()}
            assert client.post("/v1/consolidate", json=body, headers={"X-API-Key": "k-alice"}).status_code == 403
            r = client.post("/v1/consolidate", json=body, headers={"X-API-Key": "k-club"})
            assert r.status_code == 200, r.text
            assert r.json()["merged"] == 1 and m.services.sql.get_memory(b)["merged_into"] == a
            assert client.post("/v1/runs/chat-1/end", json={"user_id": "bob"},
                               headers={"X-API-Key": "k-alice"}).status_code == 403
            r = client.post("/v1/runs/chat-1/end", json={"user_id": "alice"}, headers={"X-API-Key": "k-alice"})
            assert r.status_code == 200, r.text
            assert r.json()["kept"] == [kept] and r.json()["archived"] == [gone]
        assert m.services.sql.get_memory(kept)["metadata"]["layer"] == "short_term"
        undone = m.rollback(r.json()["trace_id"])  # END_RUN is undone whole, the layer too
        assert "layer" not in m.services.sql.get_memory(kept)["metadata"]
        assert m.services.sql.get_memory(gone)["status"] == "staged" and not undone["not_undone"]


def test_cli_end_run_and_group_consolidation(tmp_path, capsys, monkeypatch):
    from memoryx.cli import main

    data = tmp_path / "cli"
    monkeypatch.setenv("MEMORYX_GRAPH_BACKEND", "none")
    monkeypatch.setenv("MEMORYX_LLM", "offline")
    with make_memory(tmp_path, data_dir=data) as m:
        put(m, "Caroline's flight leaves at 9", Scope(user_id="caroline", run_id="r1", group_id="club"), importance=0.9)
        put(m, TEA, Scope(user_id="caroline", group_id="club"))
    assert main(["end-run", "r1", "--user-id", "caroline", "--group-id", "club", "--data-dir", str(data), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["run_id"] == "r1" and len(out["kept"]) == 1
    assert main(["consolidate", "--user-id", "caroline", "--group-id", "club", "--data-dir", str(data), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["memories"] == 2
