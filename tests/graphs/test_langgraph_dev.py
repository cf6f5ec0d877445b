"""`langgraph dev` from the repo root serves the graphs of langgraph.json offline; the langgraph_sdk client
lists the assistants, creates a thread and runs add, then search, then chat."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.support import free_port

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def test_langgraph_json_lists_the_graphs():
    config = json.loads((REPO / "langgraph.json").read_text())
    assert config["dependencies"] == ["."]
    assert set(config["graphs"]) >= {"add", "search", "chat"}
    for spec in config["graphs"].values():
        path, _, attr = spec.partition(":")
        assert (REPO / path).exists() and attr == "graph"


@pytest.fixture
def langgraph_dev(tmp_path):
    exe = shutil.which("langgraph")
    if exe is None:
        pytest.fail("langgraph-cli is not installed: pip install -e '.[dev]' (langgraph-cli[inmem])")
    port = free_port()
    env = {**os.environ, "MEMORYX_DATA_DIR": str(tmp_path / "data"), "MEMORYX_ENV_FILE": str(tmp_path / "none.env"),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "LANGSMITH_TRACING": "false",
           "LANGGRAPH_NO_ANALYTICS": "1", "PYTHONUNBUFFERED": "1"}
    state_dir = REPO / ".langgraph_api"  # langgraph dev keeps its in-memory runtime's state here
    had_state_dir = state_dir.exists()
    log = open(tmp_path / "langgraph-dev.log", "w")
    proc = subprocess.Popen([exe, "dev", "--no-browser", "--no-reload", "--port", str(port), "--host", "127.0.0.1"],
                            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while True:
            if proc.poll() is not None:
                pytest.fail(f"langgraph dev exited with {proc.returncode}:\n{(tmp_path / 'langgraph-dev.log').read_text()[-4000:]}")
            try:
                if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"langgraph dev not ready:\n{(tmp_path / 'langgraph-dev.log').read_text()[-4000:]}")
            time.sleep(1)
        yield url
    finally:
        try:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=10)
        log.close()
        if not had_state_dir:
            shutil.rmtree(state_dir, ignore_errors=True)


def test_langgraph_dev_runs_add_search_chat(langgraph_dev, tmp_path):
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=langgraph_dev)
    assistants = client.assistants.search(limit=20)
    graph_ids = {a["graph_id"] for a in assistants}
    assert {"add", "search", "chat"} <= graph_ids, graph_ids

    thread = client.threads.create()
    added = client.runs.wait(thread["thread_id"], "add",
                             input={"messages": [{"role": "user", "content": "I live in Reykjavik and I love puffins."}],
                                    "user_id": "studio-user"})
    assert added["result"]["results"], added
    assert all(r["event"] == "ADD" for r in added["result"]["results"])

    found = client.runs.wait(None, "search", input={"query": "where do I live?", "user_id": "studio-user", "limit": 3})
    assert any("reykjavik" in r["memory"].lower() for r in found["result"]["results"]), found

    chat_thread = client.threads.create()
    reply = client.runs.wait(chat_thread["thread_id"], "chat",
                             input={"messages": [{"role": "user", "content": "Where do I live?"}], "user_id": "studio-user"})
    answer = reply["messages"][-1]["content"]
    assert "reykjavik" in answer.lower(), reply
    state = client.threads.get_state(chat_thread["thread_id"])
    assert len(state["values"]["messages"]) == 2
