"""agent memories belong to the user's tenancy, keys bind agents.

Two users (alice, bob) x two agents (bot, bot2) x keys bound to a user, a user and an agent, an agent only,
and an admin, over the Python API, REST (create_app + TestClient) and the LangServe routes. The judge is a
scripted model that would DELETE every memory it is shown and records every prompt: bob's agent memory
("Agent promised bob a refund of 500 EUR") must survive alice's add and never reach her prompt, result or
judgment record.
"""

from __future__ import annotations

import json
import re

import pytest
from fastapi.testclient import TestClient
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from memoryx import Memory
from memoryx.core.scope import Scope
from memoryx.errors import ScopeError
from memoryx.server.app import create_app
from tests.support import shared_embeddings

BOB_PROMISE = "Agent promised bob a refund of 500 EUR"
ALICE_PROMISE = "Agent promised alice a refund of 400 EUR"
GLOBAL_RULE = "Agent promised everyone a refund policy of 30 days"
KEYS = {
    "k-alice": ["alice"],
    "k-bob": ["bob"],
    "k-alice-bot": {"users": ["alice"], "agents": ["bot"]},
    "k-bot": {"agents": ["bot"]},
    "k-admin": {"admin": True},
}
H = {name: {"X-API-Key": name} for name in KEYS}


class Scripted(BaseChatModel):
    """A chat model answering `answer(prompt)` and recording every prompt it was shown."""

    answer: object
    prompts: list = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        prompt = "\n".join(str(m.content) for m in messages)
        self.prompts.append(prompt)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self.answer(prompt)))])


def _extract(prompt: str) -> str:
    """One agent fact named in the conversation (the marker after 'FACT:'), plus a user fact."""
    conversation = prompt.split("FACT:", 1)[1] if "FACT:" in prompt else ""
    fact = conversation.strip().splitlines()[0].strip() if conversation.strip() else ""
    if not fact:
        return json.dumps({"facts": []})
    return json.dumps({"facts": [{"text": fact, "category": "fact", "importance": 0.7, "memory_type": "semantic",
                                  "owner": "agent"}]})


def _delete_everything(prompt: str) -> str:
    """The hostile judge: DELETE every existing memory it is shown."""
    shown = prompt.split("Existing memories:", 1)[1].split("New facts:", 1)[0] if "Existing memories:" in prompt else ""
    refs = sorted(set(re.findall(r'"id":\s*"([^"]+)"', shown)))
    return json.dumps({"operations": [{"event": "DELETE", "id": ref, "reason": "delete all"} for ref in refs]})


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    judge = Scripted(answer=_delete_everything, prompts=[])
    extraction = Scripted(answer=_extract, prompts=[])
    m = Memory(data_dir=tmp_path_factory.mktemp("tenancy"), graph_backend="none", checkpointer="sqlite",
               api_keys=KEYS, extraction_llm=extraction, judgment_llm=judge, embeddings=shared_embeddings())
    # bob's agent memory (tenant mode, the default) and one agent-global memory of bot
    bob = m.add([{"role": "user", "content": "I want my money back"},
                 {"role": "assistant", "content": f"FACT: {BOB_PROMISE}"}], user_id="bob", agent_id="bot")
    glob = m.add([{"role": "user", "content": "policy?"}, {"role": "assistant", "content": f"FACT: {GLOBAL_RULE}"}],
                 user_id="bob", agent_id="bot", agent_memory="global")
    try:
        yield {"m": m, "judge": judge, "bob_id": bob["results"][0]["id"], "bob_trace": bob["trace_id"],
               "global_id": glob["results"][0]["id"]}
    finally:
        m.close()


def _alice_add(m, **kw):
    return m.add([{"role": "user", "content": "Where is my refund?"},
                  {"role": "assistant", "content": f"FACT: {ALICE_PROMISE}"}], user_id="alice", agent_id="bot", **kw)


def test_agent_memory_lives_in_the_users_tenancy(world):
    m = world["m"]
    bob_row = m.get(world["bob_id"])
    assert (bob_row["user_id"], bob_row["agent_id"], bob_row["metadata"]["owner"]) == ("bob", "bot", "agent")
    glob = m.get(world["global_id"])
    assert (glob["user_id"], glob["agent_id"]) == (None, "bot")  # only on explicit agent_memory="global"


def test_alice_add_never_sees_or_deletes_bobs_agent_memory(world):
    m, judge = world["m"], world["judge"]
    _alice_add(m)  # alice's first promise: no candidate of hers yet
    judge.prompts.clear()
    r = _alice_add(m)  # again: the hostile judge now sees alice's own memory and deletes what it is shown
    assert judge.prompts, "the judge should have been called with alice's own memory"
    assert any(e["event"] == "DELETE" for e in r["results"])  # it did delete alice's own one
    for prompt in judge.prompts:
        assert "bob" not in prompt and "everyone" not in prompt
    record = m.judgments(r["trace_id"])
    assert (record["user_id"], record["agent_id"]) == ("alice", "bot")
    dumped = json.dumps(record)
    assert BOB_PROMISE not in dumped and GLOBAL_RULE not in dumped
    assert m.get(world["bob_id"])["memory"] == BOB_PROMISE  # survived
    assert m.get(world["global_id"])["memory"] == GLOBAL_RULE
    assert BOB_PROMISE not in json.dumps(r)


def test_agent_memory_option_is_checked(world):
    from memoryx.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="agent_memory"):
        _alice_add(world["m"], agent_memory="everyone")


def test_client_trace_id_cannot_take_over_another_scopes_run(world):
    m = world["m"]
    with pytest.raises(ScopeError, match="another scope"):
        m.add("I like tea", user_id="alice", trace_id=world["bob_trace"])
    with pytest.raises(ScopeError, match="never changes scope"):
        m.services.sql.save_judgment(world["bob_trace"], scope=Scope(user_id="alice"), status="done")
    assert m.judgments(world["bob_trace"])["user_id"] == "bob"


def test_review_ignores_a_client_chosen_owner(tmp_path):
    extraction = Scripted(answer=_extract, prompts=[])
    with Memory(data_dir=tmp_path, graph_backend="none", checkpointer="sqlite", extraction_llm=extraction,
                judgment_llm=Scripted(answer=_delete_everything, prompts=[]), embeddings=shared_embeddings()) as m:
        bob = m.add([{"role": "assistant", "content": f"FACT: {BOB_PROMISE}"}], user_id="bob", agent_id="bot")
        paused = _alice_add(m, review=True)
        assert paused["status"] == "awaiting_review"
        # an edit naming bob's memory is refused (the run asks again); an ADD claiming owner "agent" stays the user's
        again = m.resume_add(paused["trace_id"], [{"event": "DELETE", "id": bob["results"][0]["id"]}])
        assert again["status"] == "awaiting_review"
        done = m.resume_add(paused["trace_id"], [{"event": "ADD", "text": "User wants a refund", "owner": "agent"}])
        added = m.get(done["results"][0]["id"])
        assert (added["user_id"], added["agent_id"]) == ("alice", "bot")
        assert (added["metadata"] or {}).get("owner") != "agent"
        assert m.get(bob["results"][0]["id"])["memory"] == BOB_PROMISE


# ------------------------------------------------------------------------------------------------ REST


@pytest.fixture(scope="module")
def client(world):
    with TestClient(create_app(memory=world["m"], settings=world["m"].settings)) as c:
        yield c


def _texts(resp) -> list[str]:
    assert resp.status_code == 200, resp.text
    return [r["memory"] for r in resp.json()["results"]]


@pytest.mark.parametrize("key", ["k-alice", "k-alice-bot"])
def test_rest_alice_keys_stay_in_alices_tenancy(client, world, key):
    h = H[key]
    for path in ("/v1/memories?user_id=bob", "/v1/judgments?user_id=bob"):
        assert client.get(path, headers=h).status_code == 403
    assert client.post("/v1/memories/search", json={"query": "refund", "user_id": "bob"}, headers=h).status_code == 403
    for method in ("GET", "DELETE"):  # by id: 404, never revealing that bob's id exists
        assert client.request(method, f"/v1/memories/{world['bob_id']}", headers=h).status_code == 404
        assert client.request(method, f"/v1/memories/{world['global_id']}", headers=h).status_code == 404
    assert client.get(f"/v1/judgments/{world['bob_trace']}", headers=h).status_code == 404
    found = _texts(client.post("/v1/memories/search", json={"query": "refund promised", "agent_id": "bot"}, headers=h))
    assert BOB_PROMISE not in found and GLOBAL_RULE not in found
    assert all(j["user_id"] == "alice" for j in client.get("/v1/judgments", headers=h).json()["results"])
    assert world["m"].get(world["bob_id"])["memory"] == BOB_PROMISE


def world_global_id(client) -> str:
    return client.get("/v1/memories?agent_id=bot", headers=H["k-bot"]).json()["results"][0]["id"]


def test_rest_agent_binding(client):
    assert client.get("/v1/memories?user_id=alice&agent_id=bot2", headers=H["k-alice-bot"]).status_code == 403
    assert client.get("/v1/memories?user_id=alice", headers=H["k-bot"]).status_code == 403
    # agent-global memories need a key bound to the agent
    body = {"messages": "FACT: x", "user_id": "alice", "agent_id": "bot", "agent_memory": "global"}
    assert client.post("/v1/memories", json=body, headers=H["k-alice"]).status_code == 403
    # a key listing users never reaches the agent-global scope, even for its own agent
    assert client.get(f"/v1/memories/{world_global_id(client)}", headers=H["k-alice-bot"]).status_code == 404


def test_rest_agent_key_sees_only_the_agents_global_memories(client, world):
    found = _texts(client.get("/v1/memories?agent_id=bot", headers=H["k-bot"]))
    assert found == [GLOBAL_RULE]
    found = _texts(client.post("/v1/memories/search", json={"query": "refund promised", "agent_id": "bot"},
                               headers=H["k-bot"]))
    assert BOB_PROMISE not in found and ALICE_PROMISE not in found
    assert client.get(f"/v1/memories/{world['bob_id']}", headers=H["k-bot"]).status_code == 404
    judgments = client.get("/v1/judgments?agent_id=bot", headers=H["k-bot"]).json()["results"]
    assert all(j["user_id"] is None for j in judgments)
    admin = _texts(client.get("/v1/memories?agent_id=bot&limit=100", headers=H["k-admin"]))
    assert BOB_PROMISE in admin and GLOBAL_RULE in admin


def test_rest_agent_key_delete_all_spares_the_users(client, world, tmp_path):
    m = world["m"]
    extra = m.add("FACT: Agent promised everyone free shipping", agent_id="bot", infer=False)
    r = client.delete("/v1/memories?agent_id=bot", headers=H["k-bot"])
    assert r.status_code == 200 and r.json()["deleted"] >= 1
    assert m.get(world["bob_id"])["memory"] == BOB_PROMISE
    assert [x["memory"] for x in m.get_all(user_id="alice", agent_id="bot")["results"]]
    assert extra["results"]


# ------------------------------------------------------------------------------------------------ LangServe


def test_langserve_refuses_client_trace_ids_and_foreign_scopes(client, world):
    before = world["m"].judgments(world["bob_trace"])
    takeover = {"input": {"messages": "FACT: Agent promised alice 9000 EUR", "user_id": "alice", "agent_id": "bot",
                          "trace_id": world["bob_trace"]}}
    r = client.post("/graphs/add/invoke", json=takeover, headers=H["k-alice"])
    assert r.status_code == 422 and "trace_id" in r.text
    after = world["m"].judgments(world["bob_trace"])
    assert (after["user_id"], after["updated_at"]) == ("bob", before["updated_at"])
    for key in ("k-alice", "k-alice-bot"):
        r = client.post("/graphs/search/invoke", json={"input": {"query": "refund", "user_id": "bob"}}, headers=H[key])
        assert r.status_code == 403
    r = client.post("/graphs/add/invoke", json={"input": {"messages": "hi", "user_id": "alice", "agent_id": "bot2"}},
                    headers=H["k-alice-bot"])
    assert r.status_code == 403
    # a non-admin key cannot search an agent-only scope over LangServe (streamed state is not filtered)
    r = client.post("/graphs/search/invoke", json={"input": {"query": "refund", "agent_id": "bot"}}, headers=H["k-bot"])
    assert r.status_code == 403


def test_langserve_alice_add_is_server_traced_and_tenant_bound(client, world):
    body = {"input": {"messages": [{"role": "assistant", "content": f"FACT: {ALICE_PROMISE}"}], "user_id": "alice",
                      "agent_id": "bot"}}
    r = client.post("/graphs/add/invoke", json=body, headers=H["k-alice"])
    assert r.status_code == 200, r.text
    out = r.json()["output"]["result"]
    assert out["trace_id"] and BOB_PROMISE not in json.dumps(out)
    assert world["m"].get(world["bob_id"])["memory"] == BOB_PROMISE
    r = client.post("/graphs/search/invoke", json={"input": {"query": "refund promised", "agent_id": "bot"}},
                    headers=H["k-alice"])
    assert r.status_code == 200 and BOB_PROMISE not in r.text
