"""`memoryx serve`, and the hint the other commands give while a server holds the data directory.

The embedded vector store admits one process per data directory: the server writes its pid and URL to
DATA_DIR/server.json so that a command that finds the store taken can point to the running server.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import sys
from pathlib import Path

from memoryx.cli.inputs import EXIT_OK

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


def cmd_serve(args, m) -> int:
    import uvicorn

    from memoryx.server.app import create_app

    logging.basicConfig(level=getattr(logging, args.log_level.upper(), logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if getattr(args, "allowed_hosts", None):
        m.settings.allowed_hosts = [h.strip() for h in args.allowed_hosts.split(",") if h.strip()]
    app = create_app(memory=m, bound_host=args.host)
    info_path = Path(m.settings.data_dir) / SERVER_INFO
    url = f"http://{args.host}:{args.port}"
    try:
        info_path.parent.mkdir(parents=True, exist_ok=True)
        info_path.write_text(json.dumps({"pid": os.getpid(), "url": url}))
        atexit.register(lambda: info_path.unlink(missing_ok=True))
    except OSError:
        pass
    print(f"MemoryX server on {url} (docs at {url}/docs, data in {Path(m.settings.data_dir).resolve()})", file=sys.stderr, flush=True)
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    finally:
        info_path.unlink(missing_ok=True)
    return EXIT_OK
