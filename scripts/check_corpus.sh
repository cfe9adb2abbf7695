#!/usr/bin/env bash
# check_corpus.sh DIR -- build every CANN-style CPU-debug program under DIR unchanged against opkit's
# emulator, run it, and check its output against the golden data its own generator writes.
#
# A program is a directory whose .cpp files call ICPU_RUN_KF. For each one, in a scratch copy (DIR is
# never written to):
#   build   g++ $(opkit cflags) <every .cpp of the directory> $(opkit cflags --libs)
#   data    the directory's data generator, if any (a .py that writes .bin files with tofile), run from
#           the copy with input/ and output/ created, as the samples' run.sh does
#   run     the program, from the copy (timeout 600 s)
#   check   each output/*.bin the program wrote against the golden .bin of the same size: byte-equal,
#           or equal within 1e-3 relative as the generator's dtype (float16 if it names float16,
#           else float32). A program with no golden data counts as "ran" only.
# Prints one line per program and a summary; exits 1 if any program failed to build, run or match.
# Example: bash scripts/check_corpus.sh /tmp/ascend-samples/cplusplus/level1_single_api
#
# check_corpus.sh --projects DIR -- CANN custom-op projects (op_host/ + op_kernel/) fetched locally: each op's
# kernel compiled unchanged with its own op_host tiling header, and, for ops with an obvious PyTorch
# equivalent, its own TilingFunc + kernel run against it (scripts/cann_survey.py; figures in docs/cann.md).
set -uo pipefail
if [ "${1:-}" = "--projects" ] && [ $# -eq 2 ] && [ -d "$2" ]; then
  ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  PY="${OPKIT_PYTHON:-$ROOT/.venv/bin/python}"
  exec "$PY" "$ROOT/scripts/cann_survey.py" --any-chip "$2"
fi

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
  echo "usage: $0 DIR   (a checkout holding CANN CPU-debug programs)" >&2
  exit 2
fi
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$(cd "$1" && pwd)"
PY="${OPKIT_PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PY" ] || PY="$(command -v python3)"
CFLAGS="$(PYTHONPATH="$ROOT/python" "$PY" -c 'from opkit import emulator; print(" ".join(emulator.cflags()))')" || {
  echo "check_corpus: cannot get the emulator flags from $ROOT/python (run scripts/setup.sh)" >&2; exit 2; }
LIBS="$(PYTHONPATH="$ROOT/python" "$PY" -c 'from opkit import emulator; print(" ".join(emulator.cflags(libs=True)))')"
WORK="$(mktemp -d /tmp/opkit-corpus.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

mapfile -t PROGS < <(grep -rl --include='*.cpp' 'ICPU_RUN_KF' "$DIR" 2>/dev/null | xargs -r -n1 dirname | sort -u)
tried=0; built=0; ran=0; right=0; failed=0
echo "check_corpus: ${#PROGS[@]} CPU-debug program(s) under $DIR"
for src in "${PROGS[@]}"; do
  tried=$((tried + 1))
  name="${src#"$DIR"/}"
  w="$WORK/$tried"
  mkdir -p "$w" && cp -r "$src"/. "$w"/ && mkdir -p "$w/input" "$w/output"
  printf '[%d/%d] %s: ' "$tried" "${#PROGS[@]}" "$name"
  # shellcheck disable=SC2086
  if ! (cd "$w" && nice -n 10 g++ $CFLAGS -O1 -w ./*.cpp -o prog $LIBS) > "$w/build.log" 2>&1; then
    echo "BUILD FAILED"; sed -n '/error/{p;q}' "$w/build.log" | cut -c1-300 | sed 's/^/    /'
    failed=$((failed + 1)); continue
  fi
  built=$((built + 1))
  gen="$(grep -l 'tofile' "$w"/*.py "$w"/scripts/*.py 2>/dev/null | grep -v verify | head -1)"
  if [ -n "$gen" ] && ! (cd "$w" && "$PY" "$gen") > "$w/gen.log" 2>&1; then
    echo "built; DATA GENERATOR FAILED ($(basename "$gen"))"; tail -2 "$w/gen.log" | sed 's/^/    /'
    failed=$((failed + 1)); continue
  fi
  find "$w/output" -name '*.bin' ! -name '*golden*' -delete
  if ! (cd "$w" && timeout 600 ./prog) > "$w/run.log" 2>&1; then
    echo "built; RUN FAILED"; grep -m2 'opkit emulator\|rror' "$w/run.log" | cut -c1-300 | sed 's/^/    /'
    failed=$((failed + 1)); continue
  fi
  ran=$((ran + 1))
  verdict="$("$PY" - "$w" "$gen" <<'EOF'
import sys
from pathlib import Path
import numpy as np
w, gen = Path(sys.argv[1]), sys.argv[2]
dt = np.float16 if gen and "float16" in Path(gen).read_text() else np.float32
golden = [p for p in w.rglob("*.bin") if "golden" in p.name]
outs = [p for p in (w / "output").glob("*.bin") if "golden" not in p.name]
if not golden or not outs:
    print("ran (no golden data to compare)")
    sys.exit(0)
bad = []
for o in outs:
    g = next((g for g in golden if g.stat().st_size == o.stat().st_size), None)
    if g is None:
        bad.append(f"{o.name}: no golden file of its size")
        continue
    a, b = o.read_bytes(), g.read_bytes()
    if a == b:
        continue
    x, y = np.frombuffer(a, dt).astype(np.float64), np.frombuffer(b, dt).astype(np.float64)
    if not np.allclose(x, y, rtol=1e-3, atol=1e-3, equal_nan=True):
        i = int(np.argmax(~np.isclose(x, y, rtol=1e-3, atol=1e-3, equal_nan=True)))
        bad.append(f"{o.name} vs {g.name}: element {i} is {x[i]}, golden {y[i]}")
print("RIGHT" if not bad else "WRONG: " + "; ".join(bad))
EOF
)"
  echo "built, ran, $verdict"
  case "$verdict" in
    RIGHT) right=$((right + 1)) ;;
    ran*) ;;
    *) failed=$((failed + 1)) ;;
  esac
done
echo "check_corpus: tried $tried, built unchanged $built, ran $ran, computed right $right"
[ "$failed" -eq 0 ] || exit 1
