#!/usr/bin/env bash
# The whole loop in a scratch workspace: scan -> scaffold -> write one kernel -> opkit test -> no fallback.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WS="${OPKIT_EXAMPLE_WS:-$(mktemp -d)}"
mkdir -p "$WS" && cd "$WS"
cp "$HERE/model.py" "$HERE/check.py" .
echo "== 1. scan (exit 3: something falls back)"
opkit scan model:make --input 1x3x64x64 --input 2x3x48x80 --json scan.json --scaffold || test $? -eq 3
echo "== 2. write one kernel: hypot (the scaffold's Compute() only copies its input)"
cp "$HERE/hypot_fp32.kernel.cpp" ops/hypot_fp32/kernel.cpp
echo "== 3. build and test it against aten::hypot"
opkit build hypot_fp32
opkit test hypot_fp32
echo "== 4. the model with the kernel as aten::hypot's PrivateUse1 implementation"
python check.py
