"""Issue 37: where the classic search's time outside the labelled evaluations goes, measured without a profiler
(cProfile inflates the Python-heavy pieces several-fold against the torch-heavy ones, and more under load).

Each piece's CPU seconds are summed over its calls by a wrapper around its function (a call inside another
wrapped piece counts in both: the recorded runs include those of the overflow trace). The run: the encoder of
tests/quantdata/encoder.py as bench_quant_algos_search.py --no-linear runs it (300 labelled, 16 calibration,
target drop 3 points, one torch thread), the fastest of --repeats searches; the FP32 plain pass measured before
each search, the fastest counting.

    .venv/bin/python benchmarks/bench_quant_outside_split.py [--repeats 5] [--model encoder|zoo:NAME|resnet18]

--model: the encoder (default), a trained zoo net on its own labelled test images or ResNet-18 at --size (as
bench_quant_algos_search.py --model builds them). The IFMR memo line gives the run's calibrate.IfmrMemo counts:
the layer inputs handed to it (hits + misses) and the searches it ran (misses: it reuses a search for the same
bytes and parameters, so these are the distinct inputs). IFMR runs outside the memo (RNN records) are not counted.

--per-eval: each labelled evaluation of the fastest search on its own line, in FP32 passes -- its variants, how
many of them prefix reuse served, the modules each runs otherwise than the base (prefix.changed: the first of them
in execution order is where a served run starts) -- and the accumulation path each INT8 layer call took (one
float32 conv/matmul with the int32 bias inside: every partial sum below 2^24; chunks of input channels; or the
per-call exact_product). The wrappers add a little to each evaluation.

--before TREE: the same measurement of another source tree (TREE/python: e.g. ``git archive main | tar -x -C
TREE``) beside this one, each side in its own process (``--inner`` searches each, the fastest counting), the two
sides alternating ``--repeats`` times, the fastest of each side counting; the two reports must be equal field for
field (timings and the status lines of eval_backends aside), every row's class per sample and the activation
histograms too (the script fails otherwise).
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time

from _bench import ROOT, banner, import_opkit, load

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
    ap.add_argument("--repeats", type=int, default=5, help="searches; the fastest counts (with --before: rounds "
                    "of the two sides' processes)")
    ap.add_argument("--before", help="a source tree to measure beside this one (its python/ is imported)")
    ap.add_argument("--inner", type=int, default=2, help="--before: searches per process, the fastest counting")
    ap.add_argument("--model", default="encoder", help="encoder, zoo:NAME or resnet18 (bench_quant_algos_search.py)")
    ap.add_argument("--size", type=int, default=32, help="--model resnet18: input size")
    ap.add_argument("--per-eval", action="store_true", help="each evaluation's passes and the INT8 layers' paths")
    ap.add_argument("--child", help=argparse.SUPPRESS)      # one side's process: its figures as JSON to this file
    ap.add_argument("--tree", help=argparse.SUPPRESS)       # one side's process: the python/ to import opkit from
    a = ap.parse_args()
    if a.before:
        return beside(a)
    torch.set_num_threads(1)
    opkit = import_opkit(a.tree)        # --tree: that side's, before _bench's own tree (it put ROOT/python first)
    from opkit.evaluate import FP32, evaluate
    from opkit.quant.inputs import labelled
    from bench_quant_algos_search import encoder_model, other_model
    if a.model == "encoder":
        (m, x, y, c), what = encoder_model(300), "encoder (10 Linear)"
    else:
        m, x, y, c, what = other_model(argparse.Namespace(model=a.model, n=300, size=a.size))
    if not a.child:
        banner(f"opkit quant, classic flow, {what}, 300 labelled: CPU time outside the evaluations")
    spent: dict[str, float] = {}
    for p in PIECES:
        _wrap(spent, *p)
    memos = _count_ifmr()
    evals_seen, paths = _per_eval() if a.per_eval else ([], {})
    best, plain = None, float("inf")
    for _ in range(a.repeats):
        t = time.process_time()
        evaluate(m, labelled((x, y)), [FP32], batch_size=64, workers=1)
        plain = min(plain, time.process_time() - t)
        spent.clear()
        memos.clear()
        evals_seen.clear()
        paths.clear()
        t = time.process_time()
        rep = opkit.quantize(m, c, (x, y), policy="amct-fake-quant", target_drop=3.0, batch_size=64, workers=1)
        total = time.process_time() - t
        if best is None or total < best[0]:
            best = (total, dict(spent), rep.evals, {"inputs": sum(m.hits + m.misses for m in memos),
                                                    "searches": sum(m.misses for m in memos)},
                    list(evals_seen), dict(paths))
    total, split, evals, ifmr, evals_seen, paths = best
    if a.child:
        with open(a.child, "w") as f:
            json.dump({"total": total, "plain": plain, "evals": evals, "split": split, "ifmr": ifmr,
                       "report": _comparable(rep)}, f)
        return
    inside = split.pop("labelled evaluations")
    print(f"   search {total:.3f} s CPU (fastest of {a.repeats}), {evals} evaluations; FP32 plain pass {plain:.4f} s; "
          f"{total / ((evals + 2) * plain):.2f}x the budget (evaluations + 2) passes")
    print(f"   in the evaluations {inside:.3f} s = {inside / plain:.1f} passes ({inside / evals / plain:.2f} each); "
          f"outside {total - inside:.3f} s = {(total - inside) / plain:.1f} passes")
    for label, s in sorted(split.items(), key=lambda kv: -kv[1]):
        print(f"     {label:<20} {s * 1000:6.1f} ms = {s / plain:4.2f} passes")
    print(f"   IFMR memo: {ifmr['inputs']} layer inputs, {ifmr['searches']} searched (distinct inputs)")
    if a.per_eval:
        print("   each evaluation (FP32 passes; served: by prefix reuse):")
        for names, served, s in evals_seen:
            print(f"     {s / plain:5.2f}  served {served}  " + "; ".join(
                f"{n}: {'all differ' if ch is None else sorted(ch) if len(ch) < 4 else f'{len(ch)} modules'}" for n, ch in names))
        print("   INT8 layer calls by accumulation path: " +
              ", ".join(f"{k} {n}" for k, n in sorted(paths.items(), key=lambda kv: -kv[1])))
    print(f"   after: {load()}")


def _per_eval() -> tuple[list, dict]:
    """--per-eval: wrappers recording each Scorer.score call that evaluates (its variants and what they change
    against the base, the evaluations served, CPU seconds) and each INT8 layer call's path."""
    from opkit.quant import modes as M, prefix, scoring
    seen, paths = [], {}
    score, acc = scoring.Scorer.score, M.QuantLayer._accumulate

    def scored(self, variants, model=None):
        todo = [v for v in variants if v.name not in self._scores]
        base = self.prefix.ref if self.prefix is not None else None
        names = [(v.name, None if base is None else prefix.changed(base, scoring._sim_variant(v))) for v in todo]
        r0, t = self.replayed, time.process_time()
        out = score(self, variants, model)
        if todo:
            seen.append((names, self.replayed - r0, time.process_time() - t))
        return out

    def accumulate(self, q, int_bias=True, own=False, centered=False, kept=None):
        if self.geometry.weighted:
            plan, bias_f32, _ = kept[0] if kept is not None else self._planned()
            if not (self.planned and M.exact32_allowed()):
                plan = None
            k = "exact_product" if plan is None else "one float32 op, bias inside" if bias_f32 else \
                f"{len(plan)} chunk(s)"
            paths[k] = paths.get(k, 0) + 1
        return acc(self, q, int_bias, own, centered, kept)
    lean = getattr(M.QuantLayer, "_lean_run", None)          # q15b's lean call skips _accumulate

    def lean_run(self, x):
        out = lean(self, x)
        if out is not None:
            k = "one float32 op, bias inside (lean call)"
            paths[k] = paths.get(k, 0) + 1
        return out
    if lean is not None:
        M.QuantLayer._lean_run = lean_run
    scoring.Scorer.score, M.QuantLayer._accumulate = scored, accumulate
    return seen, paths


def _count_ifmr() -> list:
    """The IfmrMemo instances a run makes (one per VariantBuilder, kept here until cleared): their own ``hits`` and
    ``misses`` are the layer inputs the calibrations handed to IFMR through the memo and the searches it ran.
    IFMR runs outside a memo (RNN records, ``calibrate(memo=None)``) are in neither count."""
    from opkit.quant import calibrate as C
    memos, init = [], C.IfmrMemo.__init__

    def made(self, *args, **kw):
        init(self, *args, **kw)
        memos.append(self)
    C.IfmrMemo.__init__ = made
    return memos


def _comparable(rep) -> dict:
    """What before and after must agree on: every report field but the timings and the status lines, every row's
    classes per sample, the activation histograms (floats by their hex)."""
    d = rep.to_dict()
    for k in ("eval_seconds", "seconds", "eval_backends"):
        d.pop(k, None)
    return {"report": json.loads(json.dumps(d, sort_keys=True, default=str)),
            "predictions": {k: list(map(int, v)) for k, v in rep.predictions.items()},
            "activations": {n: [list(map(float.hex, map(float, x))) for x in v] for n, v in rep.activations.items()}}


def beside(a) -> None:
    """``--before``: this tree and TREE, each in its own processes, alternating; fastest of each side."""
    trees = {"before": os.path.join(os.path.abspath(a.before), "python"), "after": str(ROOT / "python")}
    banner(f"opkit quant, classic flow, {a.model}, 300 labelled: {a.before} (before) beside {ROOT} (after), "
           f"{a.repeats} rounds x {a.inner} searches, one process per side and round")
    best: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.repeats):
            for side, py in (("before", trees["before"]), ("after", trees["after"])) if r % 2 == 0 else \
                    (("after", trees["after"]), ("before", trees["before"])):
                out = os.path.join(tmp, f"{side}.json")
                subprocess.run([sys.executable, __file__, "--repeats", str(a.inner), "--child", out, "--tree", py,
                                "--model", a.model, "--size", str(a.size)],
                               check=True)
                with open(out) as f:
                    got = json.load(f)
                if side in best and got["report"] != best[side]["report"]:
                    raise SystemExit(f"two runs of the {side} side differ")
                if side not in best or got["total"] < best[side]["total"]:
                    best[side] = got
    plain = min(best[s]["plain"] for s in best)      # one FP32 plain pass for both: the faster of the two
    for side in ("before", "after"):
        g = best[side]
        split, evals = dict(g["split"]), g["evals"]
        inside = split.pop("labelled evaluations")
        print(f"   {side:<6} search {g['total']:.3f} s CPU, {evals} evaluations: {g['total'] / ((evals + 2) * plain):.2f}x "
              f"the budget; in the evaluations {inside / plain:.1f} passes ({inside / evals / plain:.2f} each); "
              f"outside {(g['total'] - inside) / plain:.1f}")
        print("          " + ", ".join(f"{k} {v / plain:.2f}" for k, v in sorted(split.items(), key=lambda kv: -kv[1])))
        if "ifmr" in g:
            print(f"          IFMR memo: {g['ifmr']['inputs']} layer inputs, {g['ifmr']['searches']} searched")
    print(f"   FP32 plain pass {plain:.4f} s (fastest of both sides)")
    same = best["before"]["report"] == best["after"]["report"]
    print(f"   before == after: {'equal' if same else 'DIFFER'} (report fields, classes per sample, histograms)")
    print(f"   after: {load()}")
    if not same:
        raise SystemExit("the two sides' reports differ")


if __name__ == "__main__":
    main()
