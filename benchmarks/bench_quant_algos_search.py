"""Issue 37 benchmark: `opkit quant` with AMCT's algorithms as candidates (DMQ row + greedy action; with
--deploy-dtype float16 the current API's Linear rows and per-layer search) against the budget "(labelled
evaluations + 2) plain passes of the labelled set".

A plain pass: the model as the user deploys it, in plain PyTorch, over the labelled set -- with --deploy-dtype
float16 the float16 model (docs/quant.md "Benchmark" says why); the FP32 pass (one opkit.evaluate run of the
float32 model) is printed beside it. Before / after in one run: float16 F.linear on ATen's kernel and every search
model deep-copied, then F.linear on opkit's kernel (quant/fp16_linear.py, the same bits) and the search's models
sharing their tensors; the two reports must be equal field for field and every row's class per sample equal.
The run: the 10-Linear ViT-style encoder of tests/quantdata/encoder.py in float32, labels = its own top-1, 16
calibration samples, target drop 3 points. CPU seconds of this process (one torch thread; the machine is shared), one run.

With --no-linear: the classic flow (no --deploy-dtype) before and after, interleaved --repeats times, fastest CPU
counting, time in the evaluations and outside them split, reports compared; --model zoo:NAME or resnet18 (--size)
for a larger model than the encoder. --before round10 (default): the before side is this tree with the tenth
round's change off (ROUND10_FLAGS: prefix reuse's first labelled batch runs in full in every served evaluation),
every older round's switch on -- so the bare command measures round 10 alone. Until round 10 the default was
round9, until round 9 round7: a figure docs/quant.md cites from the bare command compared the default of its round
(today each also turns the later rounds off, which changes no result); --before round9: the ninth round's change
off too (ROUND9_FLAGS: every op under amct-fake-quant goes through the engine's execute); --before round7: the
seventh round's change off too (ROUND7_FLAGS: prefix reuse -- every search variant runs the whole model instead of
starting from the base variant's kept module outputs up to its first changed module); --before round6: the sixth
round's changes off too (ROUND6_FLAGS: IFMR's every candidate's exact loss instead of the bound's survivors' only,
every INT8 layer built anew per variant, the report's activation histograms from their own capture run); --before
round5: the fifth round's changes off too (ROUND5_FLAGS: the torch ops instead of quant/fused.py's kernels, IFMR's
row means one at a time, the engine's forwards through nn.Module's setattr, the channels-first LayerNorm probe on
every module, three keyed checks per INT8 call, the per-op bookkeeping as before); --before fixed: the fourth
round's cuts of the fixed cost off too (FIXED_FLAGS: rows recomputed per query, metrics through the masks, IFMR one
candidate at a time and on every calibration); --before engine: the third round's engine changes off too
(ENGINE_FLAGS).

    .venv/bin/python benchmarks/bench_quant_algos_search.py [--n 300] [--no-linear [--model M] [--repeats 3]
                                                [--before round10|round9|round7|round6|round5|fixed|engine]]
"""
from __future__ import annotations

import argparse
import copy
import json
import sys
import time

from _bench import ROOT, banner, load

import _models

import torch

sys.path.insert(0, str(ROOT / "tests"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300, help="labelled samples")
    ap.add_argument("--no-linear", action="store_true", help="without --deploy-dtype (classic flow + DMQ only): "
                    "the engine before/after its changes, interleaved")
    ap.add_argument("--repeats", type=int, default=3, help="--no-linear: runs of each side, the fastest counting")
    ap.add_argument("--model", default="encoder", help="--no-linear: encoder (tests/quantdata/encoder.py), "
                    "zoo:NAME (a trained zoo model, opkit/quant/amct/zoo, on its own labelled test images), or "
                    "resnet18 (examples/resnet at --size, random init, BatchNorm statistics measured on the "
                    "calibration images, labels its own top-1)")
    ap.add_argument("--size", type=int, default=32, help="--model resnet18: input size")
    ap.add_argument("--target", type=float, default=3.0, help="target drop in points")
    ap.add_argument("--before", choices=list(reversed(ROUNDS)), default="round10",
                    help="--no-linear: what the before side turns off (ROUND10_FLAGS; round9: ROUND9_FLAGS too; "
                    "round7: ROUND7_FLAGS too; "
                    "round6: ROUND6_FLAGS too; "
                    "round5: ROUND5_FLAGS too; "
                    "fixed: FIXED_FLAGS too; engine: ENGINE_FLAGS too)")
    a = ap.parse_args()
    torch.set_num_threads(1)
    import opkit
    from opkit.evaluate import FP32, evaluate
    from opkit.quant.inputs import labelled
    if a.model != "encoder":
        if not a.no_linear:
            raise SystemExit("--model other than encoder: with --no-linear only")
        m, x, y, c, what = other_model(a)
        banner(f"opkit quant, classic flow: {what}, {a.n} labelled, {len(c)} calibration")
        t = time.process_time()
        evaluate(m, labelled((x, y)), [FP32], batch_size=64, workers=1)
        return classic(a, m, x, y, c, time.process_time() - t)
    m, x, y, c = encoder_model(a.n)
    banner(f"opkit quant with AMCT's algorithms: ViT-style encoder (10 Linear), {a.n} labelled, 16 calibration")
    t = time.process_time()
    with torch.no_grad():
        m(x)
    torch_pass = time.process_time() - t
    t = time.process_time()
    evaluate(m, labelled((x, y)), [FP32], batch_size=64, workers=1)
    plain = time.process_time() - t
    from opkit.quant import fp16_linear, linear_flow
    t = time.process_time()
    m16, x16 = copy.deepcopy(m).half(), x.half()
    with torch.no_grad():                   # the model as the user deploys it: plain PyTorch in float16
        for i in range(0, len(x16), 64):
            m16(x16[i:i + 64])
    plain16 = time.process_time() - t
    if a.no_linear:
        return classic(a, m, x, y, c, plain)
    runs = {}
    for fast in (False, True):
        # before: float16 F.linear on ATen's kernel, search models deep-copied; after: the same bits on opkit's
        # kernel (quant/fp16_linear.py), tensors shared between the search's models
        fp16_linear.ENABLED = linear_flow.SHARE_TENSORS = fast
        linear_flow.REUSE_CALIBRATIONS = True
        t = time.process_time()
        w = time.monotonic()
        rep = opkit.quantize(m, c, (x, y), policy="amct-fake-quant", target_drop=3.0, batch_size=64, workers=1,
                             deploy_dtype=None if a.no_linear else "float16")
        total, wall = time.process_time() - t, time.monotonic() - w
        runs[fast] = rep
        budget = (rep.evals + 2) * plain
        side = "" if a.no_linear else ("after (opkit's float16 Linear, ATen's bits; tensors shared): " if fast
                                       else "before (ATen's float16 Linear; deep copies): ")
        print(f"   {side}")
        print(f"   plain pass (opkit.evaluate, FP32): {plain:.3f} s CPU; plain PyTorch forward: {torch_pass:.3f} s")
        print(f"   opkit quant: {total:.1f} s CPU ({wall:.1f} s wall), {rep.evals} labelled evaluations "
              f"({rep.eval_seconds:.1f} s wall in them); current-API calibrations: {rep.linear.get('calibrations')}")
        print(f"   budget (evaluations + 2) x FP32 plain pass: {budget:.1f} s -> "
              f"{'within' if total <= budget else 'OVER'} ({total / budget:.2f} of it)")
        if not a.no_linear:
            budget16 = (rep.evals + 2) * plain16
            print(f"   plain pass of the model as deployed (PyTorch, float16): {plain16:.3f} s CPU; budget against "
                  f"it: {budget16:.1f} s -> {'within' if total <= budget16 else 'OVER'} ({total / budget16:.2f} of it)")
        print(f"   recommend (classic): {rep.recommend.describe()} -> {rep.recommend.top1:.2f}%")
        if rep.linear.get("describe"):
            print(f"   recommend (current API, float16): {rep.linear['describe']} -> "
                  f"{rep.linear['verified_top1']:.2f}% (search {rep.linear['top1']:.2f}%)")
    if len(runs) == 2:
        b, f = runs[False].to_dict(), runs[True].to_dict()
        drop = ("eval_seconds", "seconds", "eval_backends")
        js = lambda v: json.dumps(v, sort_keys=True, default=str)      # noqa: E731 - NaN equal to NaN
        same = {k: js(b[k]) == js(f[k]) for k in b if k not in drop}
        preds = all(runs[False].predictions[k] == runs[True].predictions[k] for k in runs[False].predictions)
        fields = "all equal" if all(same.values()) else f"DIFFER: {[k for k, v in same.items() if not v]}"
        print(f"   before == after: report fields {fields}; "
              f"every row's class per sample {'equal' if preds else 'DIFFERS'} ({len(runs[True].predictions)} rows)")
    print(f"   after: {load()}")


def encoder_model(n: int):
    """(model, x, y, calibration inputs): the encoder of tests/quantdata/encoder.py, ``n`` labelled samples labelled
    with its own top-1, 16 calibration samples."""
    from quantdata import encoder as E
    m = E.encoder().float().eval()
    x, c = E.patches(n, 1).float(), E.patches(16, 2).float()
    with torch.no_grad():
        y = m(x).argmax(-1)
    return m, x, y, c


def other_model(a):
    """(model, x, y, calibration inputs, description) for --model zoo:NAME | resnet18."""
    if a.model.startswith("zoo:"):
        from opkit.quant.amct import zoo
        name = a.model[4:]
        x, y = zoo.test_set(a.n)
        return zoo.load(name), x, y, zoo.calib_set(16), f"zoo {name} ({zoo.ZOO[name].family}), trained"
    if a.model != "resnet18":
        raise SystemExit(f"--model {a.model}: encoder, zoo:NAME or resnet18")
    m, c, x = _models.example_resnet18(a.size, a.n)
    with torch.no_grad():
        y = torch.cat([m(x[i:i + 64]).argmax(1) for i in range(0, a.n, 64)])
    return m, x, y, c[:16], f"ResNet-18 (examples/resnet, 100 classes, 21 quantizable layers) at 3x{a.size}x{a.size}"


ENGINE_FLAGS = (("opkit.quant.scoring", "REUSE_FP32"), ("opkit.accuracy.simulate", "MODE_OFF_INSIDE_OPS"),
                ("opkit.accuracy.simulate", "F32_AS_IS"), ("opkit.quant.modes", "KEEP_CONSTANTS"),
                ("opkit.quant.capture", "KEEP_FOLDS"), ("opkit.quant.variant", "KEEP_CODES"))


# round 4 (the fixed cost): (module, switch, before, after)
FIXED_FLAGS = (("opkit.quant.scoring", "REUSE_ROWS", False, True),
               ("opkit.accuracy.layers", "ALL_FINITE_SHORTCUT", False, True),
               ("opkit.quant.calibrate", "REUSE_IFMR", False, True),
               ("opkit.quant.algorithms", "IFMR_ROWS_ELEMENTS", 0, 1 << 16))


# round 6 (the work outside the evaluations): (module, switch, before, after)
ROUND6_FLAGS = (("opkit.quant.algorithms", "IFMR_BOUND", False, True),
                ("opkit.quant.variant", "KEEP_LAYERS", False, True),
                ("opkit.quant.capture", "SHARE_CAPTURE", False, True))


# round 7 (the evaluations themselves): a search variant starts from the base variant's kept module outputs up to
# its first changed module (quant/prefix.py)
ROUND7_FLAGS = (("opkit.quant.scoring", "REUSE_PREFIX", False, True),)


# round 9 (an evaluation's cost): the all-float32 policy's ops called without execute's lookups
ROUND9_FLAGS = (("opkit.accuracy.simulate", "F32_POLICY_FAST", False, True),)


# round 10 (an evaluation's cost): prefix reuse serves the first labelled batch too, from its own copies
ROUND10_FLAGS = (("opkit.quant.prefix", "SERVE_FIRST", False, True),)


# round 5 (an evaluation's own cost and IFMR's): (module, switch, before, after)
ROUND5_FLAGS = (("opkit.quant.fused", "ENABLED", False, True),
                ("opkit.quant.algorithms", "IFMR_FUSED", False, True),
                ("opkit.quant.algorithms", "ROW_MEANS", False, True),
                ("opkit.accuracy.simulate", "DICT_FORWARD", False, True),
                ("opkit.accuracy.simulate", "SKIP_LN_PROBE", False, True),
                ("opkit.accuracy.simulate", "LEAN_DISPATCH", False, True),
                ("opkit.quant.modes", "ONE_KEY", False, True))


# oldest first: --before R turns R and later off
ROUNDS = ("engine", "fixed", "round5", "round6", "round7", "round9", "round10")


def engine(after: bool, before: str = "round10") -> None:
    """before: round 10's change off (ROUND10_FLAGS); with ``before="round9"`` also round 9's (ROUND9_FLAGS); with
    ``before="round7"`` also round 7's prefix reuse
    (ROUND7_FLAGS); with ``before="round6"`` also round 6's (ROUND6_FLAGS);
    with ``before="round5"`` also round 5's (ROUND5_FLAGS); with ``before="fixed"`` also the fourth round's cuts (rows
    recomputed for every query, the overflow scan through full rows,
    metrics through the finiteness masks, IFMR one candidate at a time and run on every calibration); with
    ``before="engine"`` also the third round's (FP32 rerun beside every evaluation, the engine's function mode on
    inside every op, float32 ops through the casts, a layer's constants made per call, its Conv+BN fold, codes and
    plan made per variant); after: none of these (the same arithmetic)."""
    import importlib
    first_off = ROUNDS.index(before)
    for rnd, flags in (("fixed", FIXED_FLAGS), ("round5", ROUND5_FLAGS), ("round6", ROUND6_FLAGS),
                       ("round7", ROUND7_FLAGS), ("round9", ROUND9_FLAGS),
                       ("round10", ROUND10_FLAGS)):
        kept = after or ROUNDS.index(rnd) < first_off       # rounds older than ``before`` stay on
        for mod, flag, off, on in flags:
            setattr(importlib.import_module(mod), flag, on if kept else off)
    for mod, flag in ENGINE_FLAGS:
        setattr(importlib.import_module(mod), flag, after or first_off > 0)

def classic(a, m, x, y, c, plain) -> None:
    """The classic flow (no --deploy-dtype) before and after the engine changes, interleaved ``--repeats`` times,
    the fastest CPU time of each side counting; reports compared field for field, classes sample for sample."""
    import opkit
    from opkit.evaluate import FP32, evaluate
    from opkit.quant import scoring
    from opkit.quant.inputs import labelled
    inside = [0.0]
    timed = scoring.evaluate

    def counted(*args, **kw):             # CPU seconds spent in the labelled evaluations
        t0 = time.process_time()
        try:
            return timed(*args, **kw)
        finally:
            inside[0] += time.process_time() - t0
    scoring.evaluate = counted
    runs, best, split = {}, {}, {}
    for _ in range(a.repeats):
        t = time.process_time()
        evaluate(m, labelled((x, y)), [FP32], batch_size=64, workers=1)
        plain = min(plain, time.process_time() - t)
        for after in (False, True):
            engine(after, a.before)
            inside[0] = 0.0
            t = time.process_time()
            rep = opkit.quantize(m, c, (x, y), policy="amct-fake-quant", target_drop=a.target, batch_size=64,
                                 workers=1)
            total = time.process_time() - t
            if total < best.get(after, float("inf")):
                best[after], split[after] = total, inside[0]
            runs.setdefault(after, rep)
            same = _same(runs[after], rep)
            if same != "equal":
                raise SystemExit(f"two runs of the same side differ: {same}")
    engine(True)
    off = dict(round10="round 10 (batch 0 served) off", round9="rounds 9 (float32 dispatch) and 10 off",
               round7="rounds 7 (prefix reuse), 9 and 10 off", round6="rounds 6-10 off", round5="rounds 5-10 off",
               fixed="rounds 4-10 off", engine="rounds 3-10 off")
    print(f"   before: {off[a.before]}")
    for after in (False, True):
        rep, total = runs[after], best[after]
        budget = (rep.evals + 2) * plain
        print(f"   {'after ' if after else 'before'}: {total:.2f} s CPU (fastest of {a.repeats}), {rep.evals} "
              f"labelled evaluations; budget (evaluations + 2) x FP32 plain pass {plain:.4f} s = {budget:.2f} s -> "
              f"{'within' if total <= budget else 'OVER'} ({total / budget:.2f}x)")
        ev = split[after]
        print(f"           in the {rep.evals} evaluations {ev:.2f} s = {ev / rep.evals / plain:.2f} FP32 passes each; "
              f"outside them {total - ev:.2f} s = {(total - ev) / plain:.1f} FP32 passes (budget: 2)")
        print(f"           recommend: {rep.recommend.describe()[:150]} -> {rep.recommend.top1:.2f}%")
        print(f"           {rep.eval_backends[-1]}")
    print(f"   before == after: {_same(runs[False], runs[True])} ({len(runs[True].predictions)} rows)")
    print(f"   after: {load()}")


def _same(b, f) -> str:
    """'equal' when two reports agree in every field (timings aside) and every row's class per sample."""
    bd, fd = b.to_dict(), f.to_dict()
    drop = ("eval_seconds", "seconds", "eval_backends")
    js = lambda v: json.dumps(v, sort_keys=True, default=str)      # noqa: E731 - NaN equal to NaN
    differ = [k for k in bd if k not in drop and js(bd[k]) != js(fd[k])]
    preds = [k for k in b.predictions if b.predictions[k] != f.predictions.get(k)]
    if _hists(b) != _hists(f):                   # the HTML report's activation histograms (not in to_dict)
        differ.append("activations")
    if differ or preds or set(b.predictions) != set(f.predictions):
        return f"DIFFER: fields {differ}, classes of rows {preds}"
    return "equal"


def _hists(rep) -> dict:
    return {n: [list(map(float.hex, map(float, a))) for a in v] for n, v in rep.activations.items()}


if __name__ == "__main__":
    main()
