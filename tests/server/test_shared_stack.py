"""docs/deployment.md's shared stack without Docker, run as written: `scripts/shared-stack.sh start` brings up
PostgreSQL 16 + pgvector (pgserver) and a FalkorDB server with a password on private sockets, `. <dir>/env`
loads the settings it printed, `memoryx serve --workers 2` runs on them; a second `memoryx serve` started
from the same env (as on another machine) sees what the first one stored, memories and graph both, and the
other way round; `stop` stops both servers.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.workers]

REPO = Path(__file__).resolve().parents[2]
MARK = "<!-- shared-stack:"


def _doc_lines() -> list[str]:
    """The command lines of the fenced block after the marker in docs/deployment.md, comments dropped."""
    text = (REPO / "docs" / "deployment.md").read_text()
    block = text.split(MARK, 1)[1].split("```", 2)[1]
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, log: Path, timeout: float = 1200) -> None:
    deadline = time.monotonic() + timeout
    while True:
        assert proc.poll() is None, log.read_text()[-3000:]
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, f"{url} did not become healthy:\n{log.read_text()[-3000:]}"
        time.sleep(0.5)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def test_docs_shared_stack_two_servers_share_a_memory(tmp_path):
    start, source, serve, stop = _doc_lines()
    assert start.startswith("scripts/shared-stack.sh start ") and stop.startswith("scripts/shared-stack.sh stop ")
    assert source.startswith(". ") and serve.startswith("memoryx serve --workers 2")
    doc_dir = start.split()[-1]
    # outside pytest's base temp (pytest prunes old ones) and short: unix socket paths are limited to 107 bytes
    stack = Path(tempfile.mkdtemp(prefix="mx-stack-"))
    port, other = _free_port(), _free_port()
    env = {**os.environ, "PYTHON": sys.executable, "MEMORYX_ENV_FILE": str(tmp_path / "none.env"),
           "MEMORYX_LLM": "offline", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           # `memoryx` and `python3` of the interpreter running the tests, as after activating its venv
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for key in [k for k in env if k.startswith("MEMORYX_") and k not in ("MEMORYX_ENV_FILE", "MEMORYX_LLM")]:
        del env[key]

    def as_written(line: str) -> str:
        return line.replace(doc_dir, str(stack)).replace("--port 8000", f"--port {port}")

    procs: list[subprocess.Popen] = []
    try:
        out = subprocess.run(["bash", "-c", as_written(start)], cwd=REPO, env=env, capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        exports = dict(re.findall(r"^export (MEMORYX_\w+)='?([^'\n]*)'?$", out.stdout, re.M))
        assert exports["MEMORYX_VECTOR_BACKEND"] == "pgvector"
        assert exports["MEMORYX_SQL_URL"].startswith("postgresql+psycopg://") and "host=" in exports["MEMORYX_SQL_URL"]
        assert exports["MEMORYX_FALKORDB_URL"].startswith("unix://:")  # a password, a socket, no TCP port
        assert (stack / "env").stat().st_mode & 0o077 == 0  # the password is in it: only the owner reads it

        logs = [tmp_path / "workers.log", tmp_path / "other.log"]
        for cmd, log in ((f"{as_written(source)} && exec {as_written(serve)}", logs[0]),
                         (f"{as_written(source)} && exec memoryx serve --port {other}", logs[1])):
            with open(log, "w") as fh:
                procs.append(subprocess.Popen(["bash", "-c", cmd], cwd=REPO, env=env, stdout=fh,
                                              stderr=subprocess.STDOUT))
        urls = [f"http://127.0.0.1:{port}", f"http://127.0.0.1:{other}"]
        for url, proc, log in zip(urls, procs, logs):
            _wait_healthy(url, proc, log)

        with httpx.Client(timeout=120) as http:
            r = http.post(f"{urls[0]}/v1/memories", json={"messages": "I live in Oslo.", "user_id": "ana"})
            assert r.status_code == 200, r.text
            r = http.post(f"{urls[1]}/v1/memories", json={"messages": "I work at Acme.", "user_id": "ana"})
            assert r.status_code == 200, r.text
            for url in urls:  # each server lists what either one stored, and finds it by search and in the graph
                for _ in range(4):  # several requests: the two uvicorn workers behind one port both answer
                    rows = http.get(f"{url}/v1/memories", params={"user_id": "ana"}).json()["results"]
                    texts = " ".join(row["memory"] for row in rows)
                    assert "Oslo" in texts and "Acme" in texts, rows
                found = http.post(f"{url}/v1/memories/search", json={"query": "where does she live?",
                                                                     "user_id": "ana"}).json()
                assert "Oslo" in found["results"][0]["memory"], found
        # the entities both servers extracted are in the one FalkorDB server the env points at
        from urllib.parse import urlparse

        import falkordb

        from memoryx.stores.graph.native import GRAPH_NAME

        graph_url = urlparse(exports["MEMORYX_FALKORDB_URL"])
        db = falkordb.FalkorDB(unix_socket_path=graph_url.path, password=graph_url.password)
        rows = db.select_graph(GRAPH_NAME).query("MATCH (n:Entity) RETURN n.name").result_set
        names = " ".join(str(r[0]) for r in rows).lower()
        assert "oslo" in names and "acme" in names, names
        assert logs[0].read_text().count("Started server process") == 2, logs[0].read_text()[-2000:]
    finally:
        for proc in procs:
            _stop(proc)
        pid_file = stack / "falkordb" / "falkordb.pid"
        pid = int(pid_file.read_text()) if pid_file.exists() else None
        done = subprocess.run(["bash", "-c", as_written(stop)], cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=120)
        try:
            assert done.returncode == 0, done.stderr
            assert pid is None or not Path(f"/proc/{pid}").exists(), "FalkorDB still runs after stop"
            assert not (stack / "pg" / "postmaster.pid").exists(), "PostgreSQL still runs after stop"
        finally:
            shutil.rmtree(stack, ignore_errors=True)
