"""Issue 25 row: a run of 100 cases that each break an emulator rule vs a passing run of the same 100 cases
(goal <= 1.5x wall).

    python benchmarks/bench_rule_failures.py [--cases 100] [--keep]

A scratch workspace holds the bundled LayerNormFP32 and the rule-breaking copy of bench_failing_test.py
(its store is a plain DataCopy of rows*cols elements: datacopy-length / gm-bounds). Both are built; the
broken op's default matrix is run once to find the edge/explicit cases that fail by a rule, then the first
--cases of them (by id) are run with the real `opkit test OP -k ...` on both ops: every case must fail by a rule on
the broken op and pass on the bundled one. The figure is failing wall / passing wall of those two runs.
"""
from __future__ import annotations

import argparse
import json

import _bench
from bench_failing_test import make_broken


def run_test(ws, op: str, extra: tuple[str, ...]) -> tuple[float, list[dict]]:
    report = ws / f"{op}.json"
    wall, _cpu, out = _bench.run(_bench.opkit_cmd("test", op, "--json", str(report), *extra), cwd=ws,
                                 check=False)
    if not report.exists():
        raise SystemExit(f"opkit test {op} wrote no report:\n{out[-3000:]}")
    return wall, json.loads(report.read_text())["cases"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    _bench.banner(f"opkit test: {args.cases} rule-failing cases vs the same {args.cases} cases passing")
    with _bench.scratch_workspace(["LayerNormFP32"], keep=args.keep) as ws:
        make_broken(ws)
        _bench.run(_bench.opkit_cmd("build"), cwd=ws)
        _, cases = run_test(ws, "layer_norm_bad_fp32", ())
        # random-kind shapes are drawn per op name: only the edge and explicit cases exist in both ops
        ids = sorted(c["id"] for c in cases if "emulator rule" in c.get("reason", "") and c["kind"] != "random")
        if len(ids) < args.cases:
            raise SystemExit(f"only {len(ids)} of {len(cases)} default cases break a rule; need {args.cases}")
        ids = ids[: args.cases]
        # "[id]": -k matches substrings of the node name op[id]; the brackets keep bf16-1x1-normal from
        # also selecting bf16-1x1-normal-... ids
        selector = ("-k", " or ".join(f"[{i}]" for i in ids))
        walls = {}
        for op, want in (("layer_norm_fp32", "pass"), ("layer_norm_bad_fp32", "rule")):
            wall, got = run_test(ws, op, selector)
            ok = [c for c in got if (c["verdict"] == "pass" if want == "pass" else "emulator rule" in c.get("reason", ""))]
            crashes = sum("crashed" in c.get("reason", "") for c in got)
            print(f"   {op}: {len(got)} cases run, {len(ok)} {'passed' if want == 'pass' else 'failed by a rule'}"
                  f", {crashes} crashes; wall {wall:6.1f} s", flush=True)
            if len(got) != args.cases or len(ok) != args.cases:
                raise SystemExit(f"{op}: expected {args.cases} cases all {want}, got {len(ok)} of {len(got)}")
            walls[want] = wall
    _bench.done([(f"{args.cases} failing / {args.cases} passing wall", walls["rule"] / walls["pass"], 1.5, "x")])


if __name__ == "__main__":
    main()
