#!/usr/bin/env bash
# Sets up MemoryX and runs the scripted demo on the embedded defaults (SQLite, embedded Qdrant,
# embedded FalkorDB, offline model) under ./.memoryx-demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export MEMORYX_DATA_DIR=${MEMORYX_DATA_DIR:-./.memoryx-demo}
exec memoryx demo "$@"
