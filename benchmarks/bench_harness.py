"""Harness throughput for LayerNormFP32 on the emulator (issue 4, performance).

Prints:
1. `opkit test layer_norm_fp32 --quick` and the default matrix, end to end with N workers (default 2):
   wall seconds, cases, cases/second (target: default matrix < 20 s);
2. in one process (one torch thread), the per-case cost split (inputs, golden + error scale, opkit op,
   naive op, metrics) and how it grows with tensor size (cases bucketed by element count);
3. growth with the number of cases: --quick vs default vs --full case counts and in-process seconds.

Usage: python benchmarks/bench_harness.py [--workspace WS] [--jobs 2] [--skip-e2e] [--skip-full]
Without --workspace a scratch workspace is made (copy of ops/layer_norm_fp32) and built first.
"""
from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))


def opkit(ws: Path, *args) -> tuple[int, float, str]:
    env = dict(os.environ, PYTHONPATH=str(REPO / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "opkit", *args], cwd=ws, env=env, capture_output=True, text=True)
    return r.returncode, time.perf_counter() - t, r.stdout + r.stderr


def make_workspace() -> Path:
    ws = Path(tempfile.mkdtemp(prefix="opkit-bench-harness-"))
    (ws / "ops").mkdir()
    shutil.copytree(REPO / "ops" / "layer_norm_fp32", ws / "ops" / "layer_norm_fp32",
                    ignore=shutil.ignore_patterns("__pycache__"))
    code, secs, out = opkit(ws, "build", "layer_norm_fp32")
    if code:
        sys.exit(f"opkit build failed:\n{out}")
    print(f"built {ws} in {secs:.1f} s")
    return ws


def in_process(ws: Path, mode: str) -> dict:
    import torch

    from opkit.harness import golden as G
    from opkit.harness.binding import get_handle, reference_of
    from opkit.harness.cases import build_matrix, make_inputs
    from opkit.harness.metrics import compare
    from opkit.opspec.standard import thresholds
    from opkit.opspec import load_spec

    torch.set_num_threads(1)
    spec = load_spec(ws / "ops" / "layer_norm_fp32")
    h = get_handle(spec, ws)
    ref = reference_of(str(spec.reference_file))
    rows = []
    for c in build_matrix(spec, mode):
        t = [time.perf_counter()]
        inp = make_inputs(spec, c)
        t.append(time.perf_counter())
        g = G.golden(ref, inp, c.attrs)
        s = G.error_scale(ref, inp, c.attrs, g)
        t.append(time.perf_counter())
        with torch.no_grad():
            o = h.fn(*inp, **c.attrs)
        t.append(time.perf_counter())
        with torch.no_grad():
            n = h.naive_fn(*inp, **c.attrs) if c.dtype != spec.compute_dtype else None
        t.append(time.perf_counter())
        thr = thresholds(c.dtype)
        compare(o, g[0], thr, s[0])
        if n is not None:
            compare(n, g[0], thr, s[0])
        t.append(time.perf_counter())
        rows.append((math.prod(c.lead_shape), [b - a for a, b in zip(t, t[1:])]))
    return {"rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspace", type=Path)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--skip-e2e", action="store_true")
    ap.add_argument("--skip-full", action="store_true")
    a = ap.parse_args()
    ws = a.workspace.resolve() if a.workspace else make_workspace()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (other work slows everything)")

    if not a.skip_e2e:
        print(f"\n== end to end: opkit test layer_norm_fp32 -j {a.jobs}")
        for label, flags in (("--quick", ["--quick"]), ("default", [])):
            code, secs, out = opkit(ws, "test", "layer_norm_fp32", "-j", str(a.jobs), *flags)
            line = next((ln for ln in out.splitlines() if ln.startswith("opkit test:")), out[-300:])
            n = int(line.split()[2]) if line.startswith("opkit test:") else 0
            print(f"{label:8s} exit {code}  {secs:6.1f} s wall  {n} cases  {n / secs:6.1f} cases/s  | {line}")

    print("\n== in one process, one torch thread: where a case's time goes")
    modes = ["quick", "default"] + ([] if a.skip_full else ["full"])
    parts = ["inputs", "golden+scale", "opkit op", "naive op", "metrics"]
    for mode in modes:
        t0 = time.perf_counter()
        res = in_process(ws, mode)
        secs = time.perf_counter() - t0
        rows = res["rows"]
        tot = [sum(r[1][i] for r in rows) for i in range(len(parts))]
        elems = sum(r[0] for r in rows)
        print(f"{mode:8s} {len(rows):4d} cases  {elems / 1e6:7.1f} M elements  {secs:6.1f} s  "
              f"({len(rows) / secs:5.1f} cases/s, {secs / max(elems, 1) * 1e9:5.0f} ns/element)  split: " +
              ", ".join(f"{p} {v:.1f}s" for p, v in zip(parts, tot)))
        if mode == "default":
            print("   by tensor size (elements of x): cases, mean ms per case, ns per element")
            buckets = [(0, 1e3), (1e3, 1e4), (1e4, 1e5), (1e5, 1e6), (1e6, 1e9)]
            for lo, hi in buckets:
                sel = [r for r in rows if lo <= r[0] < hi]
                if sel:
                    ms = sum(sum(r[1]) for r in sel) / len(sel) * 1e3
                    ns = sum(sum(r[1]) for r in sel) / max(1, sum(r[0] for r in sel)) * 1e9
                    print(f"   [{lo:>8.0e}, {hi:>8.0e}): {len(sel):4d} cases  {ms:8.1f} ms  {ns:8.1f} ns/elem")


if __name__ == "__main__":
    main()
