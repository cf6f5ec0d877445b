"""Throughput of `memoryx serve --workers N` on shared stores (PostgreSQL + pgvector), N = 1, 2, 4, with a fake
model that takes as long as a hosted one (bench/fake_llm.py: the offline model's answers after --delay s).

    HF_HUB_OFFLINE=1 python3 bench/bench_workers.py --workers 1 2 4 --adds 96 --searches 400 --clients 16

Everything runs on this machine over loopback: a private PostgreSQL 16 with pgvector (pgserver, unix socket),
the fake model, the server. For each N: a fresh database, the server started and warmed, then `--adds` adds
(distinct facts, `--users` users, `--clients` client threads) and `--searches` searches through the REST
API. Prints one JSON line per N: adds/s, searches/s, p50/p99 latencies in ms, and the machine's load average
(the workers, the database, the fake model and the clients share its cores).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
WORDS = ("tea", "chess", "sailing", "jazz", "pottery", "climbing", "opera", "cycling", "baking", "tango",
         "origami", "rowing", "poetry", "fencing", "archery", "skiing", "karate", "knitting", "surfing", "violin")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, proc: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"{url}: the process exited ({proc.returncode})")
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"{url} did not answer within {timeout} s")
        time.sleep(0.3)


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return round(1000 * s[min(len(s) - 1, int(p * len(s)))], 1) if s else 0.0


def drive(n_requests: int, clients: int, request) -> tuple[float, list[float], int]:
    """Run `request(i, http)` for i in range(n_requests) on `clients` threads: (seconds, latencies, failures)."""
    todo = iter(range(n_requests))
    lock = threading.Lock()
    latencies: list[float] = []
    failed = [0]

    def client() -> None:
        with httpx.Client(timeout=300) as http:
            while True:
                with lock:
                    i = next(todo, None)
                if i is None:
                    return
                t = time.perf_counter()
                ok = request(i, http)
                with lock:
                    if ok:
                        latencies.append(time.perf_counter() - t)
                    else:
                        failed[0] += 1

    threads = [threading.Thread(target=client) for _ in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start, latencies, failed[0]


def run(n_workers: int, args, pg_root: Path, model_url: str, tmp: Path) -> dict:
    import psycopg

    db = f"bench_w{n_workers}_{int(time.time())}"
    admin = f"postgresql://postgres@/postgres?host={pg_root}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{db}"')
    with psycopg.connect(f"postgresql://postgres@/{db}?host={pg_root}", autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
    port = free_port()
    env = {**os.environ, "MEMORYX_SQL_URL": f"postgresql+psycopg://postgres@/{db}?host={pg_root}",
           "MEMORYX_VECTOR_BACKEND": "pgvector", "MEMORYX_GRAPH_BACKEND": "none",
           "MEMORYX_LLM": "openai-compatible:fake", "MEMORYX_LLM_BASE_URL": model_url, "MEMORYX_LLM_API_KEY": "unused",
           "MEMORYX_DATA_DIR": str(tmp / f"data{n_workers}"), "MEMORYX_ENV_FILE": str(tmp / "none.env"),
           "MEMORYX_SEARCH_RECORD_ACCESS": "false"}
    log = open(tmp / f"serve{n_workers}.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "memoryx.cli", "serve", "--workers", str(n_workers),
                             "--port", str(port), "--log-level", "warning"], env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{url}/healthz", proc)
        with httpx.Client(timeout=300) as http:  # every worker loads its encoder on first use: warm them all
            for i in range(4 * n_workers):
                http.post(f"{url}/v1/memories/search", json={"query": "warm up", "user_id": f"u{i}"})

        def add(i: int, http: httpx.Client) -> bool:
            text = f"I love {WORDS[i % len(WORDS)]} and my lucky number is {i}."
            r = http.post(f"{url}/v1/memories", json={"messages": text, "user_id": f"u{i % args.users}"})
            return r.status_code == 200

        def search(i: int, http: httpx.Client) -> bool:
            r = http.post(f"{url}/v1/memories/search", json={"query": f"what does she love, {WORDS[i % len(WORDS)]}?",
                                                            "user_id": f"u{i % args.users}", "limit": 5})
            return r.status_code == 200

        add_s, add_lat, add_failed = drive(args.adds, args.clients, add)
        search_s, search_lat, search_failed = drive(args.searches, args.clients, search)
        return {"workers": n_workers, "clients": args.clients, "model_delay_s": args.delay,
                "adds": len(add_lat), "adds_per_s": round(len(add_lat) / add_s, 2),
                "add_p50_ms": pct(add_lat, 0.5), "add_p99_ms": pct(add_lat, 0.99), "add_failed": add_failed,
                "searches": len(search_lat), "searches_per_s": round(len(search_lat) / search_s, 1),
                "search_p50_ms": pct(search_lat, 0.5), "search_p99_ms": pct(search_lat, 0.99),
                "search_failed": search_failed, "load_avg_1m": round(os.getloadavg()[0], 1)}
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--adds", type=int, default=96)
    ap.add_argument("--searches", type=int, default=400)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--users", type=int, default=32)
    ap.add_argument("--delay", type=float, default=0.3, help="seconds per fake model call")
    ap.add_argument("--keep-logs", action="store_true", help="keep the servers' logs (their path is printed)")
    args = ap.parse_args()

    import pgserver

    tmp = Path(tempfile.mkdtemp(prefix="memoryx-bench-workers-"))
    pg_root = tmp / "pg"
    pg_root.mkdir()
    server = pgserver.get_server(pg_root, cleanup_mode="stop")
    model_port = free_port()
    model = subprocess.Popen([sys.executable, str(HERE / "fake_llm.py"), "--port", str(model_port),
                              "--delay", str(args.delay)])
    try:
        wait_http(f"http://127.0.0.1:{model_port}/calls", model)
        for n in args.workers:
            print(json.dumps(run(n, args, pg_root, f"http://127.0.0.1:{model_port}/v1", tmp)), flush=True)
    finally:
        model.terminate()
        model.wait()
        server.cleanup()
        if args.keep_logs:
            for log in tmp.glob("serve*.log"):
                shutil.copy(log, Path(tempfile.gettempdir()) / f"memoryx-bench-{log.name}")
            print(f"logs: {tempfile.gettempdir()}/memoryx-bench-serve*.log", flush=True)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
