"""Issue 37: where the classic search's time outside the labelled evaluations goes, measured without a profiler
(cProfile inflates the Python-heavy pieces several-fold against the torch-heavy ones, and more under load).

Each piece's CPU seconds are summed over its calls by a wrapper around its function (a call inside another
wrapped piece counts in both: the recorded runs include those of the overflow trace). The run: the encoder of
tests/quantdata/encoder.py as bench_quant_algos_search.py --no-linear runs it (300 labelled, 16 calibration,
target drop 3 points, one torch thread), the fastest of --repeats searches; the FP32 plain pass measured before
each search, the fastest counting.

    .venv/bin/python benchmarks/bench_quant_outside_split.py [--repeats 5]
"""
from __future__ import annotations

import argparse
import importlib
import sys
import time

from _bench import ROOT, banner, load

import torch

sys.path.insert(0, str(ROOT / "tests"))

# (module, class or None, function, label): the pieces docs/quant.md names
PIECES = (("opkit.quant.scoring", None, "evaluate", "labelled evaluations"),
          ("opkit.quant.calibrate", None, "calibrate", "calibrations"),
          ("opkit.quant.variant", None, "build_variant", "building variants"),
          ("opkit.quant.overflow", None, "trace_overflow", "overflow trace"),
          ("opkit.quant.scoring", "Scorer", "_run_recorded", "recorded runs"),
          ("opkit.quant.prefix", "PrefixCache", "plan_for", "prefix planning"),
          ("opkit.quant.search", None, "sensitivity", "sensitivity"))


def _wrap(spent: dict, mod: str, cls: str | None, fn: str, label: str) -> None:
    owner = importlib.import_module(mod)
    owner = getattr(owner, cls) if cls else owner
    f = getattr(owner, fn)

    def timed(*args, **kw):
        t0 = time.process_time()
        try:
            return f(*args, **kw)
        finally:
            spent[label] = spent.get(label, 0.0) + time.process_time() - t0
    setattr(owner, fn, timed)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5, help="searches; the fastest counts")
    a = ap.parse_args()
    torch.set_num_threads(1)
    import opkit
    from opkit.evaluate import FP32, evaluate
    from opkit.quant.inputs import labelled
    from bench_quant_algos_search import encoder_model
    m, x, y, c = encoder_model(300)
    banner("opkit quant, classic flow, encoder (10 Linear), 300 labelled: CPU time outside the evaluations")
    spent: dict[str, float] = {}
    for p in PIECES:
        _wrap(spent, *p)
    best, plain = None, float("inf")
    for _ in range(a.repeats):
        t = time.process_time()
        evaluate(m, labelled((x, y)), [FP32], batch_size=64, workers=1)
        plain = min(plain, time.process_time() - t)
        spent.clear()
        t = time.process_time()
        rep = opkit.quantize(m, c, (x, y), policy="amct-fake-quant", target_drop=3.0, batch_size=64, workers=1)
        total = time.process_time() - t
        if best is None or total < best[0]:
            best = (total, dict(spent), rep.evals)
    total, split, evals = best
    inside = split.pop("labelled evaluations")
    print(f"   search {total:.3f} s CPU (fastest of {a.repeats}), {evals} evaluations; FP32 plain pass {plain:.4f} s; "
          f"{total / ((evals + 2) * plain):.2f}x the budget (evaluations + 2) passes")
    print(f"   in the evaluations {inside:.3f} s = {inside / plain:.1f} passes ({inside / evals / plain:.2f} each); "
          f"outside {total - inside:.3f} s = {(total - inside) / plain:.1f} passes")
    for label, s in sorted(split.items(), key=lambda kv: -kv[1]):
        print(f"     {label:<20} {s * 1000:6.1f} ms = {s / plain:4.2f} passes")
    print(f"   after: {load()}")


if __name__ == "__main__":
    main()
