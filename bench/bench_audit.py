"""What the daily job's audit costs: a day of N judgment records, one scan of every scope, stored findings.

    python3 bench/bench_audit.py --n 100000 [--url postgresql+psycopg://postgres@127.0.0.1:5432/postgres]

N records spread over the last 24 h across `--users` users, shaped as add runs write them (parsed and executed
operations, latency, status): ~80 % one ADD, ~10 % an UPDATE of an earlier memory of the user, ~5 % a DELETE of
an earlier memory (most within hours: add_then_delete findings), ~1 % failed, ~1 % slower than the threshold,
~1 % with an operation decided but not executed. Written with Core bulk inserts (the time to write them is not
the audit's). Then timed: the first scan over the day (read, detect, store the findings), the second scan (the
same findings: nothing new stored), and the daily report of the last 2 days. Printed as JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

from memoryx.lifecycle.audit import scan
from memoryx.lifecycle.daily import daily_report
from memoryx.settings import Settings
from memoryx.stores.sql import SQLStore
from memoryx.stores.sql.schema import JudgmentRow
from memoryx.stores.sql.values import utc_now


def seed(store: SQLStore, n: int, users: int, rng: random.Random) -> None:
    now = utc_now()
    memories: dict[str, list[str]] = {}
    rows = []
    table = JudgmentRow.__table__
    for i in range(n):
        user = f"user-{rng.randrange(users)}"
        at = now - timedelta(seconds=86_400 * (1 - i / n))  # oldest first
        mine = memories.setdefault(user, [])
        roll = rng.random()
        status, success, latency = "done", True, int(rng.lognormvariate(7.3, 0.4))  # ~1.5 s median
        if roll < 0.10 and mine:
            mid = rng.choice(mine)
            parsed = [{"event": "UPDATE", "id": mid, "text": "updated", "old_memory": "old"}]
            executed = [{"event": "UPDATE", "id": mid, "memory": "updated", "previous_memory": "old", "op": 0}]
        elif roll < 0.15 and mine:
            mid = mine.pop(rng.randrange(len(mine)))
            parsed = [{"event": "DELETE", "id": mid, "text": "gone"}]
            executed = [{"event": "DELETE", "id": mid, "memory": "gone", "op": 0}]
        else:
            mid = str(uuid.uuid4())
            mine.append(mid)
            parsed = [{"event": "ADD", "id": None, "text": f"fact {i}"}]
            executed = [{"event": "ADD", "id": mid, "memory": f"fact {i}", "op": 0}]
            if rng.random() < 0.01:
                parsed.append({"event": "DELETE", "id": str(uuid.uuid4()), "text": "never executed"})
        if rng.random() < 0.01:
            status, success, executed = "failed", False, None
        if rng.random() < 0.01:
            latency = 15_000
        rows.append({"id": str(uuid.uuid4()), "trace_id": str(uuid.uuid4()), "user_id": user, "operation_type": "MEMORY_UPDATE",
                     "parsed_operations": parsed, "executed_operations": executed, "execution_success": success,
                     "latency_ms": latency, "status": status, "created_at": at, "updated_at": at, "is_verified": False,
                     "error_message": "model timed out" if not success else None})
        if len(rows) == 5000:
            with store._tx(write=True) as s:
                s.execute(table.insert(), rows)
            rows = []
    if rows:
        with store._tx(write=True) as s:
            s.execute(table.insert(), rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--users", type=int, default=1000)
    ap.add_argument("--url", help="SQLAlchemy URL (default: a fresh SQLite file); the database is reset")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="memoryx-bench-audit-")
    url = args.url or f"sqlite:///{Path(tmp) / 'bench.db'}"
    store = SQLStore(url)
    store.reset()
    started = time.perf_counter()
    seed(store, args.n, args.users, random.Random(7))
    seeded = time.perf_counter() - started
    services = SimpleNamespace(sql=store, settings=Settings())
    t = time.perf_counter()
    first = scan(services, None, since="25h")
    first_s = time.perf_counter() - t
    t = time.perf_counter()
    second = scan(services, None, since="25h")
    second_s = time.perf_counter() - t
    t = time.perf_counter()
    daily_report(services, None, days=2)
    report_s = time.perf_counter() - t
    kinds: dict[str, int] = {}
    for f in first["findings"]:
        kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
    print(json.dumps({"engine": url.split(":")[0], "records": args.n, "users": args.users, "seed_s": round(seeded, 1),
                      "first_scan_s": round(first_s, 2), "second_scan_s": round(second_s, 2),
                      "report_2_days_s": round(report_s, 2), "scanned": first["scanned"],
                      "findings": len(first["findings"]), "stored_first": first["stored"],
                      "stored_second": second["stored"], "by_kind": kinds}, indent=1))
    store.reset()
    store.close()


if __name__ == "__main__":
    main()
