"""The CLI through a running server: with MEMORYX_URL (and MEMORYX_API_KEY) set, commands run as subprocesses
talk to uvicorn over HTTP (the server holds the data directory; no lock conflict); the key's tenancy holds;
an unreachable server is exit code 3. And `memoryx --help` imports nothing heavy (torch, langgraph, ...)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from memoryx import Memory
from memoryx.server.app import create_app
from tests.support import ServerThread, free_port

KEYS = {"key-alice": ["alice"], "key-bob": ["bob"]}
HEAVY = ("torch", "langgraph", "sentence_transformers", "qdrant_edge", "qdrant_client", "falkordb", "langchain_core",
         "transformers", "mcp", "fastapi")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    data = tmp_path_factory.mktemp("cli-remote")
    with Memory(data_dir=data, graph_backend="none", api_keys=KEYS) as m:
        with ServerThread(create_app(memory=m)) as srv:
            yield {"url": srv.url, "data": data}


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYX_")}
    env.update(extra)
    return env


def memoryx(served, *args: str, key: str = "key-alice") -> subprocess.CompletedProcess:
    # the server's own data directory: a local open would hit its locks, so success means HTTP was used
    env = _env(MEMORYX_URL=served["url"], MEMORYX_API_KEY=key, MEMORYX_DATA_DIR=str(served["data"]))
    return subprocess.run([sys.executable, "-m", "memoryx.cli", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_commands_through_the_server(served):
    out = memoryx(served, "add", "I live in Berlin and I love jazz.", "--user-id", "alice", "--json")
    assert out.returncode == 0, out.stderr
    added = json.loads(out.stdout)
    ids = [r["id"] for r in added["results"] if r["event"] == "ADD"]
    assert ids and added["trace_id"]

    out = memoryx(served, "search", "where do I live?", "--user-id", "alice")
    assert out.returncode == 0 and "Berlin" in out.stdout, out.stderr

    out = memoryx(served, "list", "--json")  # the CLI asks for a scope before any request
    assert out.returncode == 1 and "needs a scope" in out.stderr
    out = memoryx(served, "list", "--user-id", "alice", "--json")
    assert out.returncode == 0 and {m["id"] for m in json.loads(out.stdout)["results"]} >= set(ids)

    memory_id = ids[0]
    out = memoryx(served, "update", memory_id, "I live in Munich.", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["memory"] == "I live in Munich.", out.stderr
    out = memoryx(served, "get", memory_id)
    assert out.returncode == 0 and "Munich" in out.stdout
    out = memoryx(served, "history", memory_id, "--json")
    assert [e["event"] for e in json.loads(out.stdout)][:2] == ["ADD", "UPDATE"]

    out = memoryx(served, "judgments", "list", "--user-id", "alice", "--json")
    assert out.returncode == 0 and any(j["trace_id"] == added["trace_id"] for j in json.loads(out.stdout))
    out = memoryx(served, "judgments", "verify", added["trace_id"], "correct", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["verification_result"] == "CORRECT", out.stderr

    out = memoryx(served, "delete", memory_id)
    assert out.returncode == 0, out.stderr
    out = memoryx(served, "get", memory_id)
    assert out.returncode == 2 and "Not found" in out.stderr


def test_the_key_decides(served):
    out = memoryx(served, "add", "I am Bob.", "--user-id", "bob", "--no-infer", "--json", key="key-bob")
    assert out.returncode == 0, out.stderr
    bob_id = json.loads(out.stdout)["results"][0]["id"]
    refused = memoryx(served, "search", "Bob", "--user-id", "bob")  # alice's key
    assert refused.returncode == 1 and "may not access user_id 'bob'" in refused.stderr
    hidden = memoryx(served, "get", bob_id)
    assert hidden.returncode == 2
    wrong = memoryx(served, "list", "--user-id", "alice", key="nope")
    assert wrong.returncode == 1 and "Invalid API key" in wrong.stderr and "MEMORYX_API_KEY" in wrong.stderr


def test_server_down_is_exit_3(tmp_path):
    env = _env(MEMORYX_URL=f"http://127.0.0.1:{free_port()}", MEMORYX_DATA_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-m", "memoryx.cli", "list", "--user-id", "alice"], capture_output=True,
                         text=True, env=env, timeout=60)
    assert out.returncode == 3 and "Cannot reach the MemoryX server" in out.stderr


_PROBE = """
import sys
from memoryx.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print("HEAVY=" + ",".join(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)
"""


@pytest.mark.parametrize("argv", [["--help"], ["add", "--help"], ["judgments", "list", "--help"], ["mcp", "--help"]])
def test_help_imports_nothing_heavy(argv, tmp_path):
    out = subprocess.run([sys.executable, "-c", _PROBE.format(heavy=HEAVY), *argv], capture_output=True, text=True,
                         env=_env(), cwd=tmp_path, timeout=60)
    assert "usage: memoryx" in out.stdout
    assert out.stderr.strip().endswith("HEAVY="), out.stderr


def test_remote_commands_import_nothing_heavy(served):
    env = _env(MEMORYX_URL=served["url"], MEMORYX_API_KEY="key-alice")
    out = subprocess.run([sys.executable, "-c", _PROBE.format(heavy=HEAVY), "list", "--user-id", "alice"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert out.stderr.strip().endswith("HEAVY="), out.stderr


def test_review_and_resume_over_langserve_and_rest(served):
    import httpx

    def invoke(route: str, payload: dict, key: str) -> httpx.Response:
        return httpx.post(f"{served['url']}/graphs/{route}/invoke", json={"input": payload},
                          headers={"X-API-Key": key}, timeout=120)

    paused = invoke("add_review", {"messages": [{"role": "user", "content": "I play the cello."}]}, "key-alice")
    assert paused.status_code == 200, paused.text
    out = paused.json()["output"]
    assert out["status"] == "awaiting_review" and out["pending_operations"], out
    assert invoke("add_review", {"messages": "I am Bob.", "user_id": "bob"}, "key-alice").status_code == 403
    # another key cannot see (or resume) alice's paused run
    assert invoke("resume", {"trace_id": out["trace_id"]}, "key-bob").status_code == 404
    done = invoke("resume", {"trace_id": out["trace_id"], "operations": None}, "key-alice")
    assert done.status_code == 200, done.text
    assert any("cello" in r["memory"] for r in done.json()["output"]["results"])

    # paused through LangServe, rejected through the CLI (REST POST /v1/reviews/{trace_id})
    second = invoke("add_review", {"messages": [{"role": "user", "content": "I love stamps."}]}, "key-alice").json()
    assert second["output"]["status"] == "awaiting_review", second
    trace_id = second["output"]["trace_id"]
    out = memoryx(served, "resume", trace_id, "--reject", "--json")
    assert out.returncode == 0, out.stderr
    listed = memoryx(served, "list", "--user-id", "alice", "--json")
    assert not any("stamps" in m["memory"] for m in json.loads(listed.stdout)["results"])


def test_mcp_stdio_through_the_server(served):
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    env = {"MEMORYX_URL": served["url"], "MEMORYX_API_KEY": "key-alice"}

    async def run(user: str):
        params = StdioServerParameters(command=sys.executable, args=["-m", "memoryx.cli", "mcp", "--user-id", user],
                                       env=env)
        async with Client(params, read_timeout_seconds=120) as client:
            added = await client.call_tool("memory_add", {"messages": [{"role": "user", "content": "I live in Oslo."}]})
            found = await client.call_tool("memory_search", {"query": "Where do I live?"})
            return added, found

    added, found = anyio.run(run, "alice")
    assert not added.is_error and any("Oslo" in r["memory"] for r in found.structured_content["results"])
    added, _ = anyio.run(run, "bob")  # configured for bob, but the key is alice's: the server refuses
    assert added.is_error and "may not access user_id 'bob'" in " ".join(c.text for c in added.content)
