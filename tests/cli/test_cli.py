"""The installed `memoryx` command, run as a subprocess on its own data directory (the embedded vector
store admits one process per data directory)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from memoryx.api.memory import Memory
from tests.support import shared_embeddings

EXE = shutil.which("memoryx")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cli-data")


def run(data_dir: Path, *args: str, check: int | None = 0, stdin: str | None = None, env: dict | None = None,
        timeout: float = 300) -> subprocess.CompletedProcess:
    cmd = [EXE, *args] if EXE else [sys.executable, "-m", "memoryx.cli", *args]
    full_env = {**os.environ, "MEMORYX_DATA_DIR": str(data_dir), "MEMORYX_ENV_FILE": str(data_dir / "none.env"),
                "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "COLUMNS": "160",  # tables fit the terminal: give every run the same width
                **(env or {})}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, input=stdin, timeout=timeout)
    if check is not None:
        assert proc.returncode == check, f"{args}: rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def test_installed_entry_point():
    assert EXE, "the `memoryx` console script is not installed (pip install -e .)"
    out = subprocess.run([EXE, "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    for command in ("add", "search", "list", "get", "update", "delete", "history", "judgments", "reindex",
                    "import", "serve", "demo"):
        assert command in out.stdout


def test_demo(data_dir):
    out = run(data_dir, "demo")
    assert "offline" in out.stdout.lower() and "MEMORYX_LLM" in out.stdout
    assert "Berlin" in out.stdout or "Munich" in out.stdout
    assert "杭州" in out.stdout or "乌龙茶" in out.stdout
    again = run(data_dir, "demo", "--json")  # repeatable, machine-readable
    doc = json.loads(again.stdout)
    assert doc["model"] == "offline" and doc["memories"] >= 3
    assert all(s["result"]["results"] for s in doc["searches"])


def test_crud_json_roundtrip(data_dir):
    user = f"cli-{uuid.uuid4().hex[:6]}"
    added = json.loads(run(data_dir, "add", "I live in Zurich and I love chess.", "--user-id", user, "--json").stdout)
    assert added["results"] and added["trace_id"]
    mid = next(r["id"] for r in added["results"] if "chess" in r["memory"].lower())

    found = json.loads(run(data_dir, "search", "what game do I like", "--user-id", user, "--json").stdout)
    assert found["results"][0]["id"] == mid

    listed = json.loads(run(data_dir, "list", "--user-id", user, "--json").stdout)
    assert mid in [r["id"] for r in listed["results"]]

    got = json.loads(run(data_dir, "get", mid, "--json").stdout)
    assert got["id"] == mid and got["user_id"] == user

    run(data_dir, "update", mid, "Loves go more than chess", "--json")
    hist = json.loads(run(data_dir, "history", mid, "--json").stdout)
    assert [h["event"] for h in hist] == ["ADD", "UPDATE"]

    table = run(data_dir, "list", "--user-id", user).stdout  # human-readable table
    assert "MEMORY" in table and "Loves go more than chess" in table

    deleted = json.loads(run(data_dir, "delete", mid, "--json").stdout)
    assert deleted["id"] == mid
    assert json.loads(run(data_dir, "history", mid, "--json").stdout)[-1]["event"] == "DELETE"

    judg = json.loads(run(data_dir, "judgments", "list", "--user-id", user, "--json").stdout)
    assert added["trace_id"] in [j["trace_id"] for j in judg]
    verified = json.loads(run(data_dir, "judgments", "verify", added["trace_id"], "correct", "--notes", "fine", "--json").stdout)
    assert verified["verification_result"] == "CORRECT"
    stats = json.loads(run(data_dir, "judgments", "stats", "--json").stdout)
    assert stats["verified"] >= 1


def test_import_messages_and_locomo(data_dir, tmp_path):
    conv = tmp_path / "conv.json"
    conv.write_text(json.dumps([{"role": "user", "content": "I live in Tallinn."},
                                {"role": "assistant", "content": "Nice!"},
                                {"role": "user", "content": "I love skiing."}]))
    out = run(data_dir, "import", str(conv), "--user-id", "importer", "--json")
    assert json.loads(out.stdout)["format"] == "messages"
    assert "Tallinn" in run(data_dir, "list", "--user-id", "importer").stdout

    locomo = tmp_path / "locomo.json"
    locomo.write_text(json.dumps([{"sample_id": "conv-x", "qa": [], "conversation": {
        "speaker_a": "Ann", "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy last week!"},
                      {"speaker": "Ben", "dia_id": "D1:2", "text": "Congrats Ann!"}],
        "session_2_date_time": "2:00 pm on 9 May, 2023",
        "session_2": [{"speaker": "Ben", "dia_id": "D2:1", "text": "I started a pottery class."}]}}]))
    out = run(data_dir, "import", str(locomo), "--no-infer")
    assert "Importing" in out.stderr  # progress bar
    listed = json.loads(run(data_dir, "list", "--user-id", "conv-x", "--json").stdout)["results"]
    assert any("puppy" in r["memory"] for r in listed)


def test_exit_codes(data_dir, tmp_path):
    missing = run(data_dir, "get", str(uuid.uuid4()), check=2)
    assert "not found" in missing.stderr.lower() and "memoryx list" in missing.stderr
    usage = run(data_dir, "search", "hello", check=1)  # no scope
    assert "--user-id" in usage.stderr
    run(data_dir, "frobnicate", check=1)
    run(data_dir, "add", "x", "--user-id", "u", "--metadata", "{bad", check=1)
    run(data_dir, "import", str(tmp_path / "nope.json"), "--user-id", "u", check=1)
    run(data_dir, "judgments", "verify", str(uuid.uuid4()), "MAYBE", check=1)
    # a store that cannot be reached: exit 3 and the setting to change
    bad = run(tmp_path / "other", "list", "--user-id", "u", check=3,
              env={"MEMORYX_SQL_URL": "postgresql+psycopg://nobody@127.0.0.1:1/none"})
    assert "MEMORYX_SQL_URL" in bad.stderr


def test_serve_holds_the_data_dir(tmp_path):
    """`memoryx serve` runs the HTTP server; while it holds the data directory a CLI command that needs the
    vector store exits 3 and says which process holds it and what to do (the embedded vector store admits one
    process per data dir); list, get, history and judgments read SQL alone and still answer."""
    import signal
    import socket
    import time

    import httpx

    data = tmp_path / "served"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "MEMORYX_DATA_DIR": str(data), "MEMORYX_ENV_FILE": str(tmp_path / "none.env"),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    cmd = [EXE, "serve", "--port", str(port)] if EXE else [sys.executable, "-m", "memoryx.cli", "serve", "--port", str(port)]
    server = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, server.stdout.read()
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "memoryx serve did not become healthy"
            time.sleep(0.5)
        added = httpx.post(f"{url}/v1/memories", json={"messages": "I live in Bern.", "user_id": "srv"}, timeout=120)
        assert added.status_code == 200 and added.json()["results"]
        held = run(data, "search", "where do I live?", "--user-id", "srv", check=3)
        assert "one process per data dir" in held.stderr and "memoryx serve" in held.stderr
        assert url in held.stderr
        # reads of the system of record open SQL alone, so they work beside the server
        while_served = json.loads(run(data, "list", "--user-id", "srv", "--json").stdout)
        assert [r["memory"] for r in while_served["results"]] == [added.json()["results"][0]["memory"]]
    finally:
        server.send_signal(signal.SIGINT)
        out, _ = server.communicate(timeout=60)
    assert "LOCAL DEVELOPMENT MODE" in out
    listed = json.loads(run(data, "list", "--user-id", "srv", "--json").stdout)  # free again, data persisted
    assert [r["memory"] for r in listed["results"]] == [added.json()["results"][0]["memory"]]


def test_a_bad_setting_names_the_variable(tmp_path):
    out = run(tmp_path, "list", "--user-id", "x", check=1, env={"MEMORYX_GRAPH_BACKEND": "bogus"})
    assert "MEMORYX_GRAPH_BACKEND='bogus'" in out.stderr and "falkordb" in out.stderr, out.stderr
    assert "Unexpected error" not in out.stderr and "ValidationError" not in out.stderr
    out = run(tmp_path, "add", "I like tea", "--user-id", "x", check=1, env={"MEMORYX_SIMILAR_TOP_K": "many"})
    assert "MEMORYX_SIMILAR_TOP_K='many'" in out.stderr, out.stderr


def test_reads_open_sql_alone(data_dir):
    """list, get, history and judgments start no vector shard, graph server, encoder or LangGraph: what keeps
    an embedded read near a second. Checked from the modules the command's process loaded."""
    user = f"cli-{uuid.uuid4().hex[:6]}"
    # added in this process (closed before the commands run): the reads are on trial
    with Memory(data_dir=data_dir, graph_backend="none", embeddings=shared_embeddings()) as m:
        memory_id = m.add("I live in Graz.", user_id=user)["results"][0]["id"]
    probe = ("import json, sys\nfrom memoryx.cli import main\ncode = main(sys.argv[1:])\n"
             "heavy = [m for m in ('langgraph', 'langchain_core', 'onnxruntime', 'torch', 'qdrant_edge', 'falkordb',"
             " 'memoryx.graphs', 'memoryx.stores.graph', 'memoryx.stores.vectors') if m in sys.modules]\n"
             "print(json.dumps({'code': code, 'heavy': heavy}), file=sys.stderr)\n")
    for args in (["list", "--user-id", user], ["get", memory_id], ["history", memory_id], ["judgments", "list"],
                 ["judgments", "stats"]):
        proc = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=300,
                              env={**os.environ, "MEMORYX_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1",
                                   "MEMORYX_ENV_FILE": str(data_dir / "none.env")})
        report = json.loads(proc.stderr.strip().splitlines()[-1])
        assert report == {"code": 0, "heavy": []}, (args, report, proc.stderr[-2000:])
    assert "Graz" in run(data_dir, "list", "--user-id", user).stdout


def test_add_and_search_on_sqlite_load_no_postgres_driver(data_dir):
    """On the embedded defaults (SQLite checkpoints) an add or a search never imports psycopg: recovery's thread
    listing and the checkpointer's close used to import PostgresSaver to test the saver's class (~0.1 s each).
    Nor SQLAlchemy's PostgreSQL dialect (the schema's JSONB columns and partial index named it: ~0.05-0.1 s), nor
    the consolidate graph, which an add does not run."""
    user = f"cli-{uuid.uuid4().hex[:6]}"
    probe = ("import json, sys\nfrom memoryx.cli import main\ncode = main(sys.argv[1:])\n"
             "heavy = [m for m in ('psycopg', 'psycopg_pool', 'langgraph.checkpoint.postgres', "
             "'sqlalchemy.dialects.postgresql', 'memoryx.graphs.consolidate') if m in sys.modules]\n"
             "print(json.dumps({'code': code, 'heavy': heavy}), file=sys.stderr)\n")
    for args in (["add", "I live in Graz.", "--user-id", user], ["search", "where do I live?", "--user-id", user]):
        proc = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=300,
                              env={**os.environ, "MEMORYX_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1",
                                   "MEMORYX_ENV_FILE": str(data_dir / "none.env")})
        report = json.loads(proc.stderr.strip().splitlines()[-1])
        assert report == {"code": 0, "heavy": []}, (args, report, proc.stderr[-2000:])
        if args[0] == "search":
            assert "Graz" in proc.stdout
