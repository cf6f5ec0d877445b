#!/usr/bin/env bash
# Sets up MemoryX (scripts/setup.sh: .venv inside the checkout) and runs the whole test suite against real engines (SQLite, PostgreSQL on
# 127.0.0.1:5432, embedded Qdrant, embedded FalkorDB). Extra arguments go to pytest, e.g. `-m unit` for the
# tests that need no engine (seconds; tests/conftest.py says how a test is classified).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# PostgreSQL is a real engine of the suite: start the machine's cluster if it is down.
if command -v pg_isready >/dev/null && ! pg_isready -q -h 127.0.0.1 -p 5432; then
  if command -v pg_ctlcluster >/dev/null; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
    for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
  fi
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# The suite starts hundreds of `memoryx` processes: without bytecode caching each one compiles the package again.
unset PYTHONDONTWRITEBYTECODE
export PATH="$PWD/.venv/bin:$PATH"  # the tests run the `memoryx` command of this checkout
# One pytest-xdist worker per core, at most 4 (each worker loads its own encoder, stores and servers; more would
# add memory and PostgreSQL connections, not speed). A file's tests stay on one worker (`--dist loadfile`): they
# share module fixtures (an embedded FalkorDB, a server, the newcomer's clone). Files are handed out in the order
# tests/conftest.py gives (the longest first), not by their number of tests. `-n 0` runs in one process.
WORKERS=$(nproc 2>/dev/null || echo 1)
if [ "$WORKERS" -gt 4 ]; then WORKERS=4; elif [ "$WORKERS" -lt 2 ]; then WORKERS=0; fi
exec .venv/bin/python -m pytest -q -n "$WORKERS" --dist loadfile --no-loadscope-reorder "$@"
