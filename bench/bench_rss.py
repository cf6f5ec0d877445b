"""Resident memory of `memoryx serve`: idle, under load, and whether it grows over 10,000 adds.

    HF_HUB_OFFLINE=1 python3 bench/bench_rss.py                        # 10,000 adds in batches of 500
    HF_HUB_OFFLINE=1 python3 bench/bench_rss.py --adds 2000 --checkpoints 500,1000,2000 --infer-adds 50
    HF_HUB_OFFLINE=1 python3 bench/bench_rss.py --adds 10000 --checkpoints 1000,2000,5000,7500,10000

Starts `memoryx serve` in a subprocess on a temporary data directory (embedded defaults: SQLite, Qdrant edge
shard, embedded FalkorDB, MiniLM; the offline model), reads VmRSS / VmHWM of the server process from
/proc/PID/status (and the summed VmRSS of its child processes, i.e. the embedded FalkorDB) when idle after
start, after one warm-up request, then after each checkpoint of adds through POST /v1/memories/batch with
infer=False, sampling the peak while the batches run ("under load"). Then, optionally, single adds with
inference (POST /v1/memories, the offline model) and searches. Prints the series and the growth per 1,000
adds between the first and the last checkpoint.

What grows is split the way the kernel counts it: RssAnon (heap: Python objects, native allocators, the
Qdrant engine's in-memory indexes) and RssFile (pages of mapped files; "qdrant_mmap_mb" is the part that maps
the Qdrant shard: vectors, payloads and WAL segments, i.e. the data itself, which the kernel may drop and
re-read). Then (`--restart`, on by default) the server is restarted on the same data directory and given the
same warm-up and searches: a fresh process holding the same data shows how much of the long-running
process's resident set is the data and how much it accumulated (a leak would be the difference).
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
import urllib.request


def status_kb(pid: int, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def children(pid: int) -> list[int]:
    out = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                kids = [int(x) for x in f.read().split()]
        except OSError:
            continue
        for kid in kids:
            out += [kid, *children(kid)]
    return out


def mapped_rss_kb(pid: int, marker: str) -> int:
    """Resident kB of the mappings whose path contains `marker` (/proc/PID/smaps)."""
    total, inside = 0, False
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                head = line.split(None, 6)
                if head and "-" in head[0] and not head[0].endswith(":"):
                    inside = len(head) > 5 and marker in head[5]
                elif inside and head[0] == "Rss:":
                    total += int(head[1])
    except OSError:
        pass
    return total


def snapshot(pid: int, label: str, adds: int) -> dict:
    kids = children(pid)
    row = {"point": label, "adds": adds, "rss_mb": round(status_kb(pid, "VmRSS") / 1024, 1),
           "anon_mb": round(status_kb(pid, "RssAnon") / 1024, 1), "file_mb": round(status_kb(pid, "RssFile") / 1024, 1),
           "qdrant_mmap_mb": round(mapped_rss_kb(pid, "/qdrant/") / 1024, 1),
           "hwm_mb": round(status_kb(pid, "VmHWM") / 1024, 1),
           "children_rss_mb": round(sum(status_kb(k, "VmRSS") for k in kids) / 1024, 1)}
    print(json.dumps(row), flush=True)
    return row


def post(url: str, body: dict, timeout: float = 600) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(data: str, graph: str, timeout: float) -> tuple[subprocess.Popen, str]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MEMORYX_LLM": "offline", "MEMORYX_GRAPH_BACKEND": graph,
           "MEMORYX_API_KEYS": "{}", "OMP_WAIT_POLICY": "PASSIVE"}
    proc = subprocess.Popen([sys.executable, "-m", "memoryx.cli", "serve", "--data-dir", data, "--host", "127.0.0.1",
                             "--port", str(port), "--log-level", "warning"], env=env)
    deadline = time.time() + timeout
    while True:
        try:
            urllib.request.urlopen(base + "/healthz", timeout=5).read()
            return proc, base
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                stop_server(proc)
                raise SystemExit(f"memoryx serve did not start (exit {proc.poll()})")
            time.sleep(0.5)


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def warm_up(base: str) -> None:
    post(base + "/v1/memories/batch", {"items": [{"messages": "warm up", "user_id": "warm"}], "infer": False})
    post(base + "/v1/memories/search", {"query": "warm up", "user_id": "warm"})


def run_searches(base: str, n: int) -> float:
    t = time.perf_counter()
    for i in range(n):
        post(base + "/v1/memories/search", {"query": f"hiking with my dog {i}", "user_id": f"user{i % 100}"})
    return (time.perf_counter() - t) * 1000 / max(1, n)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--adds", type=int, default=10_000, help="memories added through the batch route")
    ap.add_argument("--batch", type=int, default=500, help="items per POST /v1/memories/batch")
    ap.add_argument("--checkpoints", default="1000,5000,10000", help="adds after which the RSS is read")
    ap.add_argument("--infer-adds", type=int, default=0, help="then this many single adds with inference")
    ap.add_argument("--searches", type=int, default=100, help="then this many searches")
    ap.add_argument("--graph", choices=["falkordb", "none"], default="falkordb")
    ap.add_argument("--restart", action=argparse.BooleanOptionalAction, default=True,
                    help="then restart the server on the same data and read a fresh process's RSS")
    ap.add_argument("--startup-timeout", type=float, default=300)
    args = ap.parse_args(argv)
    checkpoints = sorted(int(x) for x in args.checkpoints.split(",") if x)
    print("parameters: " + json.dumps(vars(args)), flush=True)

    data = tempfile.mkdtemp(prefix="memoryx-rss-")
    rows: list[dict] = []
    proc = None
    try:
        proc, base = start_server(data, args.graph, args.startup_timeout)
        time.sleep(2)
        rows.append(snapshot(proc.pid, "idle after start", 0))
        warm_up(base)
        rows.append(snapshot(proc.pid, "idle after first add+search", 0))

        peak = [0]
        stop = threading.Event()
        pid = proc.pid

        def sample():
            while not stop.wait(0.2):
                peak[0] = max(peak[0], status_kb(pid, "VmRSS"))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        done, t0 = 0, time.perf_counter()
        while done < args.adds:
            n = min(args.batch, args.adds - done)
            items = [{"messages": f"note {done + i}: I went hiking on trail {(done + i) % 97} with my dog "
                                  f"number {(done + i) % 13}", "user_id": f"user{(done + i) % 100}"} for i in range(n)]
            out = post(base + "/v1/memories/batch", {"items": items, "infer": False})
            if out["summary"].get("failed"):
                raise SystemExit(f"batch failed: {out['summary']}")
            done += n
            if any(done - n < c <= done for c in checkpoints):
                row = snapshot(proc.pid, "after batch adds", done)
                row["peak_under_load_mb"] = round(peak[0] / 1024, 1)
                row["adds_per_s"] = round(done / (time.perf_counter() - t0))
                rows.append(row)
        for i in range(args.infer_adds):
            post(base + "/v1/memories/", {"messages": f"I live in City{i % 7} and I like food{i}.", "user_id": "alice"})
        if args.infer_adds:
            rows.append(snapshot(proc.pid, "after single adds with inference", args.infer_adds))
        if args.searches:
            ms = run_searches(base, args.searches)
            row = snapshot(proc.pid, "after searches", args.searches)
            row["search_ms_mean"] = round(ms, 1)
            rows.append(row)
        stop.set()
        time.sleep(2)
        rows.append(snapshot(proc.pid, "idle at the end", done))
        if args.restart:
            stop_server(proc)
            proc, base = start_server(data, args.graph, args.startup_timeout)
            warm_up(base)
            if args.searches:
                run_searches(base, args.searches)
            time.sleep(2)
            rows.append(snapshot(proc.pid, "fresh process, same data, same warm-up and searches", done))
    finally:
        if proc is not None:
            stop_server(proc)
        shutil.rmtree(data, ignore_errors=True)

    print("\n| point | adds | server RSS MB | anon MB | file-backed MB (Qdrant mmap) | peak under load MB | VmHWM MB "
          "| children RSS MB |\n|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['point']} | {r['adds']} | {r['rss_mb']} | {r['anon_mb']} | {r['file_mb']} ({r['qdrant_mmap_mb']}) | "
              f"{r.get('peak_under_load_mb', '')} | {r['hwm_mb']} | {r['children_rss_mb']} |")
    loaded = [r for r in rows if r["point"] == "after batch adds"]
    if len(loaded) >= 2:
        a, b = loaded[-2], loaded[-1]
        k = max(1e-9, (b["adds"] - a["adds"]) / 1000)
        print(f"\nRSS growth between {a['adds']} and {b['adds']} adds: {b['rss_mb'] - a['rss_mb']:+.1f} MB "
              f"({(b['rss_mb'] - a['rss_mb']) / k:+.2f} MB per 1,000 adds): anon {b['anon_mb'] - a['anon_mb']:+.1f} MB, "
              f"file-backed {b['file_mb'] - a['file_mb']:+.1f} MB of which the Qdrant shard's mapped files "
              f"{b['qdrant_mmap_mb'] - a['qdrant_mmap_mb']:+.1f} MB; batch ingest {b['adds_per_s']} adds/s")
    if args.restart and len(rows) >= 2:
        old, fresh = rows[-2], rows[-1]
        print(f"A fresh process on the same data: {fresh['rss_mb']} MB (anon {fresh['anon_mb']}) against "
              f"{old['rss_mb']} MB (anon {old['anon_mb']}) for the process that made the {old['adds']:,} adds: "
              f"{old['rss_mb'] - fresh['rss_mb']:+.1f} MB held only by the long-running process")
    return 0


if __name__ == "__main__":
    sys.exit(main())
