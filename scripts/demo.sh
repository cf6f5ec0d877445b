#!/usr/bin/env bash
# Sets MemoryX up (scripts/setup.sh: .venv, dependencies, the encoder) and runs the scripted demo on the
# embedded defaults (SQLite, embedded Qdrant, embedded FalkorDB, offline model) in the default data
# directory, ./.memoryx, so that the commands the demo suggests read what it wrote.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
exec .venv/bin/memoryx demo "$@"
