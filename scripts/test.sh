#!/usr/bin/env bash
# The test suite: set up, then run the kit's own tests (emulator, build, harness, ops, NPU checks, patch).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
cd "$ROOT"
python -c "import torch; print('== torch', torch.__version__, 'CPU capability', torch.backends.cpu.get_cpu_capability())"
exec python -m pytest tests --durations=15 "$@"
