"""`memoryx serve`, and the hint the other commands give while a server holds the data directory.

The embedded vector store admits one process per data directory: the server writes its pid and URL to
DATA_DIR/server.json so that a command that finds the store taken can point to the running server.

`--workers N` runs N uvicorn worker processes on one port, each opening the stores itself (uvicorn restarts a
worker that dies). They share one memory only through shared stores, so N > 1 is refused while any store
is embedded (`Settings.embedded_stores` names each one and the setting that moves it to a server).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import sys
from pathlib import Path

from memoryx.cli.inputs import EXIT_OK, UsageError

SERVER_INFO = "server.json"


def server_hint(settings) -> str:
    info_path = Path(settings.data_dir) / SERVER_INFO
    hint = ""
    try:
        info = json.loads(info_path.read_text())
        pid = int(info.get("pid", 0))
        os.kill(pid, 0)
        hint = (f"\n`memoryx serve` (pid {pid}) is serving this data directory at {info.get('url')}: use its HTTP API "
                f"(e.g. curl '{info.get('url')}/v1/memories?user_id=...') or stop it first.")
    except (OSError, ValueError, TypeError):
        pass
    return hint


def check_workers(settings, workers: int) -> None:
    """Refuse several workers while a store lives inside one process, naming each such store's setting."""
    embedded = settings.embedded_stores() if workers > 1 else []
    if embedded:
        raise UsageError(f"memoryx serve --workers {workers} needs stores every worker shares; these are embedded "
                         "(one process each):\n  - " + "\n  - ".join(embedded)
                         + "\nSee docs/deployment.md, or run one worker (--workers 1).")


def check_connections(settings, workers: int) -> None:
    """Refuse a start whose workers could open more PostgreSQL connections than the server admits: each
    worker's pools are hard caps (Settings.pg_connections_per_process), so the sum is known before any
    worker starts. A server that cannot be reached is left to the workers' own error."""
    from memoryx.stores.sql.capacity import connection_budget

    per_worker = settings.pg_connections_per_process()
    if not per_worker:
        return
    budget = connection_budget(settings.resolved_sql_url())
    if budget is None or workers * per_worker <= budget[0]:
        return
    free, max_connections, reserved, others = budget
    raise UsageError(
        f"memoryx serve --workers {workers} could open {workers} x {per_worker} = {workers * per_worker} PostgreSQL "
        f"connections, but the server admits {free} more (max_connections={max_connections}, less {reserved} "
        f"reserved for superusers, less {others} open now). Each worker: {settings.pg_pool_size} per pool "
        f"(MEMORYX_PG_POOL_SIZE) x {(per_worker - settings.pg_lock_connections - 2) // settings.pg_pool_size} "
        f"pools + {settings.pg_lock_connections} owner-lock connections (MEMORYX_PG_LOCK_CONNECTIONS) + 1 for run "
        "locks + 1 while it starts. Lower those settings or --workers, or raise max_connections (or put a session-mode PgBouncer "
        "in front); see docs/deployment.md.")


def cmd_serve(args, m) -> int:
    import uvicorn

    from memoryx.server.app import create_app
    from memoryx.settings import get_settings

    logging.basicConfig(level=getattr(logging, args.log_level.upper(), logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = m.settings if m is not None else get_settings()
    check_workers(settings, args.workers)
    check_connections(settings, args.workers)
    if getattr(args, "allowed_hosts", None):
        settings.allowed_hosts = [h.strip() for h in args.allowed_hosts.split(",") if h.strip()]
    info_path = Path(settings.data_dir) / SERVER_INFO
    url = f"http://{args.host}:{args.port}"
    try:
        info_path.parent.mkdir(parents=True, exist_ok=True)
        info_path.write_text(json.dumps({"pid": os.getpid(), "url": url}))
        atexit.register(lambda: info_path.unlink(missing_ok=True))
    except OSError:
        pass
    where = (f"{args.workers} workers on shared stores" if args.workers > 1
             else f"data in {Path(settings.data_dir).resolve()}")
    print(f"MemoryX server on {url} (docs at {url}/docs, {where})", file=sys.stderr, flush=True)
    try:
        if args.workers > 1:  # each worker builds the app (and opens the stores) from the same MEMORYX_* settings
            if settings.allowed_hosts:  # so the hosts given on the command line reach every worker
                os.environ["MEMORYX_ALLOWED_HOSTS"] = json.dumps(settings.allowed_hosts)
            uvicorn.run("memoryx.server.app:create_app", factory=True, host=args.host, port=args.port,
                        workers=args.workers, log_level=args.log_level,
                        # uvicorn kills a worker that leaves its supervisor's ping unanswered for 5 s; a worker
                        # loading the encoder on a busy machine can take longer, and was killed again and again
                        timeout_worker_healthcheck=60)
        else:
            uvicorn.run(create_app(memory=m, bound_host=args.host), host=args.host, port=args.port, log_level=args.log_level)
    finally:
        info_path.unlink(missing_ok=True)
    return EXIT_OK
