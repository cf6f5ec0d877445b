"""User profiles (issue 13): rules over fact texts, the add graph's update_profile node, Memory.get_profile,
REST and CLI, and the user's own name resolved to their memories in search. Offline model, real stores."""

from __future__ import annotations

import asyncio
import json

import pytest
from fastapi.testclient import TestClient

from memoryx.async_memory import AsyncMemory
from memoryx.memory import Memory
from memoryx.profiles import ProfileChange, profile_changes, user_subject
from memoryx.search.query import resolve_self_names
from tests.support import shared_embeddings


@pytest.mark.parametrize("text, expected", [
    ("User's name is Alice", [("set", "name", "Alice")]),
    ("Name is John", [("set", "name", "John")]),
    ("User now lives in Shanghai", [("set", "home", "Shanghai")]),
    ("User works at Acme", [("set", "work", "Acme")]),
    ("User's sister is Mary", [("add", "relationship", "sister: Mary")]),
    ("User has a dog named Max", [("add", "relationship", "dog: Max")]),
    ("User wants to learn Spanish", [("add", "goal", "learn Spanish")]),
    ("User no longer likes jazz", [("end", "preference", "jazz")]),
    ("User dislikes cilantro", [("end", "preference", "cilantro"), ("add", "dislike", "cilantro")]),
    ("用户叫李雷", [("set", "name", "李雷")]),
    ("用户现在住在上海", [("set", "home", "上海")]),
    ("用户在腾讯工作", [("set", "work", "腾讯")]),
    ("用户不再喜欢音乐", [("end", "preference", "音乐")]),
    ("ユーザーの名前はケン", [("set", "name", "ケン")]),
    ("ユーザーは今大阪に住んでいる", [("set", "home", "大阪")]),
    ("User has been to Paris twice", []),
])
def test_profile_rules(text, expected):
    assert [(c.op, c.field, c.value) for c in profile_changes(text) if c.op != "end" or c.field != "dislike"] == expected


def test_self_names_are_read_as_the_user():
    assert resolve_self_names("Where does Alice live?", ["Alice", "Al"]) == ("Where does User live?", ["Alice"])
    assert resolve_self_names("李雷住在哪里？", ["李雷"]) == ("用户住在哪里？", ["李雷"])
    assert resolve_self_names("Where does Bob live?", ["Alice"]) == ("Where does Bob live?", [])


@pytest.fixture(scope="module")
def mem(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("profiles"), graph_backend="none", embeddings=shared_embeddings(),
                api_keys={"key-alice": ["alice"], "key-bob": ["bob"]}) as m:
        m.add("My name is Alice. I live in Beijing. I like jazz.", user_id="alice")
        m.add("I moved to Shanghai. I work at Acme.", user_id="alice")
        m.add("我叫李雷。我住在北京。我喜欢音乐。", user_id="li")
        m.add("我搬到了上海。", user_id="li")
        yield m


def test_profile_from_adds_with_sources_and_history(mem):
    p = mem.get_profile(user_id="alice", include_history=True)
    assert p["name"]["value"] == "Alice" and p["home"]["value"] == "Shanghai" and p["work"]["value"] == "Acme"
    assert [v["value"] for v in p["preferences"]] == ["jazz"]
    texts = {m["id"]: m["memory"] for m in mem.get_all(user_id="alice")["results"]}
    assert texts[p["home"]["memory_ids"][0]] == "User now lives in Shanghai"
    assert texts[p["name"]["memory_ids"][0]] == "User's name is Alice"
    assert [(h["field"], h["value"]) for h in p["history"]] == [("home", "Beijing")] and p["history"][0]["ended_at"]
    li = mem.get_profile(user_id="li")
    assert (li["name"]["value"], li["home"]["value"], [v["value"] for v in li["preferences"]]) == ("李雷", "上海", ["音乐"])
    assert mem.get_profile(user_id="nobody")["name"] is None


def test_user_name_reaches_their_memories(mem):
    en = mem.search("Where does Alice live?", user_id="alice")["results"]
    assert en[0]["memory"] == "User now lives in Shanghai", [(r["memory"], r["score"]) for r in en]
    zh = mem.search("李雷住在哪里？", user_id="li")["results"]
    assert zh[0]["memory"] == "用户现在住在上海", [(r["memory"], r["score"]) for r in zh]
    # the name question still finds the name fact
    assert mem.search("What is Alice's name?", user_id="alice")["results"][0]["memory"] == "User's name is Alice"


def test_retraction_and_deletion_end_values(tmp_path):
    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings()) as m:
        m.add("I like tea. I like hiking.", user_id="u")
        m.add("I don't like tea anymore.", user_id="u")
        p = m.get_profile(user_id="u", include_history=True)
        assert [v["value"] for v in p["preferences"]] == ["hiking"]
        assert ("preference", "tea") in {(h["field"], h["value"]) for h in p["history"]}
        m.delete(p["preferences"][0]["memory_ids"][0])  # a value whose memory is gone is history
        assert m.get_profile(user_id="u")["preferences"] == []

        async def run():
            am = AsyncMemory(services=m.services)
            return await am.get_profile(user_id="u", include_history=True)
        assert {h["value"] for h in asyncio.run(run())["history"]} >= {"tea", "hiking"}


@pytest.mark.parametrize("engine", ["sqlite", "pg"])
def test_profile_store_is_idempotent(request, tmp_path, engine):
    from memoryx.stores.sql import SQLStore

    url = f"sqlite:///{tmp_path / 'p.db'}" if engine == "sqlite" else request.getfixturevalue("pg_url")
    sql = SQLStore(url)
    subject = user_subject("z")
    rows = [ProfileChange("set", "home", "Berlin").as_row("m1"), ProfileChange("add", "preference", "tea").as_row("m2")]
    assert sql.apply_profile_changes(subject, rows) == 2
    assert sql.apply_profile_changes(subject, rows) == 0  # a replayed run changes nothing
    sql.apply_profile_changes(subject, [ProfileChange("set", "home", "Paris").as_row("m3")])
    current = {(v["field"], v["value"]) for v in sql.profile_values(subject)}
    assert current == {("home", "Paris"), ("preference", "tea")}
    assert len(sql.profile_values(subject, include_ended=True)) == 3
    sql.forget_profile_memories(subject, ["m2"])
    assert {v["value"] for v in sql.profile_values(subject)} == {"Paris"}
    sql.close()


def test_rest(mem):
    from memoryx.server.app import create_app

    with TestClient(create_app(memory=mem)) as client:
        r = client.get("/v1/profiles/alice", headers={"X-API-Key": "key-alice"})
        assert r.status_code == 200 and r.json()["home"]["value"] == "Shanghai"
        assert client.get("/v1/profiles/alice", headers={"X-API-Key": "key-bob"}).status_code == 404


def test_cli(tmp_path, capsys):
    from memoryx.cli import main

    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings()) as m:
        m.add("My name is Ken. I work at Initech.", user_id="ken")
    env = ["--data-dir", str(tmp_path), "--user-id", "ken"]
    assert main(["profile", *env, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["work"]["value"] == "Initech"
    assert main(["profile", *env]) == 0
    assert "Works at: Initech" in capsys.readouterr().out
