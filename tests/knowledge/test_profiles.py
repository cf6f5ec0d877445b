"""User profiles: rules over fact texts, the add graph's update_profile node, Memory.get_profile,
REST and CLI, and the user's own name resolved to their memories in search. Offline model, real stores."""

from __future__ import annotations

import asyncio
import json

import pytest
from fastapi.testclient import TestClient

from memoryx.api.async_memory import AsyncMemory
from memoryx.api.memory import Memory
from memoryx.knowledge.profiles import ProfileChange, profile_changes, user_subject
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


@pytest.mark.parametrize("engine", ["sqlite", "pg"])
def test_profile_changes_read_only_the_values_they_touch(request, tmp_path, engine):
    """A change reads the values it names and the current values of a field it sets, not the whole
    profile; forgetting a memory matches its id exactly ("m1" is not "m10")."""
    import uuid

    from memoryx.stores.sql import SQLStore

    url = f"sqlite:///{tmp_path / 'p.db'}" if engine == "sqlite" else request.getfixturevalue("pg_url")
    sql = SQLStore(url)
    subject = user_subject(f"y-{uuid.uuid4().hex[:8]}")
    sql.apply_profile_changes(subject, [ProfileChange("add", "preference", f"food{i}").as_row(f"m{i}")
                                        for i in range(1, 41)])
    sql.apply_profile_changes(subject, [ProfileChange("set", "home", "Berlin").as_row("h1")])
    sql.apply_profile_changes(subject, [ProfileChange("set", "home", "Paris").as_row("h2")])
    assert sql.apply_profile_changes(subject, [ProfileChange("set", "home", "Rome").as_row("h3"),
                                               ProfileChange("add", "preference", "food7").as_row("m77")]) == 3
    current = {(v["field"], v["value"]) for v in sql.profile_values(subject)}
    assert ("home", "Rome") in current and ("home", "Paris") not in current and len(current) == 41
    food7 = next(v for v in sql.profile_values(subject) if v["value"] == "food7")
    assert food7["memory_ids"] == ["m7", "m77"]
    assert len(sql.profile_values(subject, include_ended=True)) == 43  # Berlin and Paris kept as history
    assert sql.forget_profile_memories(subject, ["m1"]) == 1  # food1 only: not food10..food19
    values = {v["value"] for v in sql.profile_values(subject)}
    assert "food1" not in values and {"food10", "food19"} <= values
    sql.close()


def test_an_add_without_profile_attributes_touches_no_profile_row(tmp_path):
    from sqlalchemy import event

    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings()) as m:
        m.add("I live in Lyon", user_id="v")
        statements = []
        event.listen(m.services.sql.engine, "before_cursor_execute",
                     lambda conn, cur, stmt, *a: statements.append(stmt))
        out = m.add("I have been to Paris twice", user_id="v")
        assert out["results"]
        assert not [s for s in statements if "profile_values" in s]
        assert m.get_profile(user_id="v")["home"]["value"] == "Lyon"


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


@pytest.mark.unit
def test_group_roles_and_recurring_topics_rules():
    from memoryx.knowledge.profiles import group_insights, stated_role

    assert stated_role("I'm the team lead") == (None, "team lead", False)
    assert stated_role("Caroline is no longer the organiser") == ("Caroline", "organiser", True)
    assert stated_role("我是组长") == (None, "组长", False) and stated_role("小李是队长") == ("小李", "队长", False)
    assert stated_role("私はリーダーです") == (None, "リーダー", False) and stated_role("I like tea") is None

    def mk(i, text, who, day):
        return {"id": str(i), "memory": text, "user_id": who, "metadata": {"speaker": who},
                "valid_at": f"2023-05-{day:02d}T10:00:00+00:00", "category": None}

    out = group_insights([mk(1, "Let's go hiking on Saturday!", "Ann", 1), mk(2, "Where do we meet?", "Bob", 1),
                          mk(3, "At the station at 8.", "Ann", 1), mk(4, "I'm the team lead, by the way.", "Ann", 2),
                          mk(5, "Shall we plan another hiking trip?", "Ann", 9), mk(6, "Which trail?", "Bob", 9),
                          mk(7, "我们周六去爬山吧", "小李", 3), mk(8, "下次爬山带水", "小王", 10)])
    roles = {r["value"]: r for r in out["roles"]}
    assert set(roles) == {"Ann: team lead", "Ann: organiser", "Bob: asks questions"}
    assert roles["Ann: organiser"]["memory_ids"] == ["1", "5"] and roles["Ann: organiser"]["since"].startswith("2023-05-09")
    assert roles["Ann: team lead"]["source"] == "stated" and roles["Ann: team lead"]["memory_ids"] == ["4"]
    topics = {t["value"]: t for t in out["topics"]}
    assert set(topics) == {"hiking", "爬山"}  # trail / station came up on one day only
    assert topics["爬山"]["since"].startswith("2023-05-03") and topics["爬山"]["changed_at"].startswith("2023-05-10")
    assert topics["爬山"]["participants"] == ["小李", "小王"]


def test_group_profile_payload_through_the_api(tmp_path):
    chat = [("Ann", "I'm the organiser of this club.", "2023-05-01T10:00:00Z"),
            ("Bob", "When is the next board game night?", "2023-05-01T10:01:00Z"),
            ("Ann", "Board game night is on Friday.", "2023-05-01T10:02:00Z"),
            ("Bob", "Can I bring a new board game?", "2023-05-12T18:00:00Z"),
            ("Ann", "Sure, bring your board game.", "2023-05-12T18:01:00Z")]
    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings()) as m:
        for who, text, ts in chat:
            m.add([{"role": "user", "content": text, "name": who, "timestamp": ts}], group_id="club", infer=False)
        profile = m.get_profile(group_id="club")
        from memoryx.server.app import create_app

        with TestClient(create_app(memory=m)) as client:  # no keys configured: local development
            rest = client.get("/v1/groups/club/profile").json()
    roles = {r["value"] for r in profile["roles"]}
    assert {"Ann: organiser", "Bob: asks questions", "Ann: answers questions"} <= roles
    topics = {t["value"]: t for t in profile["topics"]}
    assert "board" in topics and topics["board"]["days"] == 2 and len(topics["board"]["memory_ids"]) == 4
    assert rest["roles"] == profile["roles"] and rest["topics"] == profile["topics"]
