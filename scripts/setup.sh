#!/usr/bin/env bash
# Creates .venv and installs opkit into it (editable). Sourced by demo.sh and test.sh.
# torch is pinned to the CPU build: an unpinned torch pulls a multi-GB CUDA build.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
if [ ! -x "$ROOT/.venv/bin/python" ]; then
  echo "== creating $ROOT/.venv"
  "$PY" -m venv "$ROOT/.venv"
fi
VENV="$ROOT/.venv"
"$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
echo "== installing torch==2.13.0 (CPU) and opkit"
"$VENV/bin/python" -m pip install -q torch==2.13.0
"$VENV/bin/python" -m pip install -q -e "$ROOT[test]"
export PATH="$VENV/bin:$PATH"
