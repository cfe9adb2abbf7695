"""Issue 14 row: cold build of one new op (goal <= 15 s): `opkit new LayerNormFP32 && opkit build` in
a fresh workspace, all dtypes and the `--dtype float32` edit-loop build.

    python benchmarks/bench_build_cold_op.py [--name LayerNormFP32]
"""
from __future__ import annotations

import argparse
import shutil

import _bench


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", default="LayerNormFP32")
    args = ap.parse_args()
    _bench.banner(f"cold build of one new op ({args.name})")
    rows = []
    for label, extra in (("all dtypes", ()), ("--dtype float32", ("--dtype", "float32"))):
        with _bench.scratch_workspace([args.name]) as ws:
            shutil.rmtree(ws / "build", ignore_errors=True)
            wall, cpu, out = _bench.run(_bench.opkit_cmd("build", *extra), cwd=ws)
            print(f"   cold build, {label}: wall {wall:6.1f} s, CPU {cpu:6.1f} s", flush=True)
            rows.append((label, wall, cpu))
    _bench.done([(f"{label}, wall", wall, 15.0, " s") for label, wall, _ in rows] +
                [(f"{label}, CPU / 2 cores (idle-machine estimate)", cpu / 2, 15.0, " s") for label, _, cpu in rows])


if __name__ == "__main__":
    main()
