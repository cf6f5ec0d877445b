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
exec .venv/bin/python -m pytest -q "$@"
