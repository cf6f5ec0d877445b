#!/usr/bin/env bash
# Installs MemoryX and everything it needs on a fresh machine (Python 3.11, pip, no GPU).
# CPU PyTorch must come first: any other torch requirement pulls the multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export PIP_DISABLE_PIP_VERSION_CHECK=1
if ! $PY -c "import torch, sys; sys.exit(0 if torch.__version__.startswith('2.13.0') else 1)" 2>/dev/null; then
  $PY -m pip install -q torch==2.13.0
fi
# constraints.txt pins the versions this repo was tested with (it also keeps pip's resolver from
# backtracking through hundreds of langgraph-api releases).
$PY -m pip install -q -c constraints.txt -e ".[dev]"
# The review page's tests drive Debian's Chromium through Playwright (never `playwright install`: no
# browser downloads). Installed only when missing and only where apt is available (root on Debian).
if ! command -v chromium >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get install -y -q chromium >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
fi
