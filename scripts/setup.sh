#!/usr/bin/env bash
# Sets MemoryX up inside the checkout: a virtual environment in .venv (it sees the packages the machine
# already has, so a prepared machine installs nothing twice), the package and its pinned dependencies, and the
# local encoder (`memoryx setup`, built once per machine with a progress bar). Needs Python 3.11+ and pip; no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${PYTHON:-python3}
export PIP_DISABLE_PIP_VERSION_CHECK=1
if [ ! -x .venv/bin/python ]; then
  echo "Creating the virtual environment .venv ..."
  if ! "$BASE" -m venv --system-site-packages .venv; then
    rm -rf .venv
    echo "error: $BASE could not create a virtual environment. On Debian/Ubuntu: apt-get install python3-venv;" \
         "or name another Python 3.11+ with PYTHON=/path/to/python3 bash scripts/setup.sh" >&2
    exit 1
  fi
fi
PY=.venv/bin/python
# Installed again only when the dependencies changed (the stamp is a digest of pyproject.toml and constraints.txt).
STAMP=.venv/.memoryx-installed
WANT=$(cat pyproject.toml constraints.txt | "$PY" -c "import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())")
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ] || ! "$PY" -c "import memoryx" 2>/dev/null; then
  echo "Installing MemoryX and its dependencies into .venv ..."
  # CPU PyTorch must come first: any other torch requirement pulls the multi-GB CUDA build.
  if ! "$PY" -c "import torch, sys; sys.exit(0 if torch.__version__.startswith('2.13.0') else 1)" 2>/dev/null; then
    "$PY" -m pip install -q torch==2.13.0
  fi
  # constraints.txt pins the versions this repo was tested with (it also keeps pip's resolver from
  # backtracking through hundreds of langgraph-api releases).
  "$PY" -m pip install -q -c constraints.txt -e ".[dev]"
  echo "$WANT" > "$STAMP"
fi
# The review page's tests drive Debian's Chromium through Playwright (never `playwright install`: no
# browser downloads). Installed only when missing and only where apt is available (root on Debian).
if ! command -v chromium >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get install -y -q chromium >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
fi
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/memoryx setup
