"""``opkit experiment``: the attribution a porting team runs before changing its deployment, with a verdict.

At one fixed input shape, against FP32 on the same labelled data, every variant run through the one engine
(evaluate/ + accuracy/simulate.py):

1. ``deployed``: the policy as deployed, the ops ``opkit scan`` finds falling back to the CPU run as the CPU
   runs them (PyTorch's CPU kernel in the dtype the tensor arrives in: the device -> host -> device round trip
   keeps the device dtype);
2. ``replaced``: the same with those ops replaced by FP32-compute ops (``opkit new --from-aten``);
3. ``fp32-types``: also the precision-sensitive op types kept in FP32, as ``opkit diagnose``'s rescue and
   greedy recommendation choose them on a fixed input;
4. with ``--sizes``: the best of those fed static (resized) vs bucketed / padded (dynamic) shapes.

Points recovered by each change name the cause; the recommendation is the cheapest variant meeting
``--target-top1`` (modelled throughput from experiment/cost.py, an estimate), with the commands to get there.
"""
from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import torch
import torch.nn.functional as F

from ..accuracy.layers import compare_runs, summary
from ..accuracy.policy import FP32, Entry, load_policy
from ..accuracy.simulate import Simulator
from ..data.sets import LabelledSet, load_dataset
from ..errors import OpkitError
from ..evaluate import SimVariant, evaluate
from ..evaluate.shard import ModelRef
from . import cost
from .shapes import ShapeVariant, choose_buckets, read_sizes

EPS_POINTS = 1e-9
BLANKET = "fp32 (blanket FP32 on the device)"

CANNOT_SHOW = [
    "CANN's own kernels: each op is modelled by its precision-policy entry (I/O dtype, FP32 or fp16 internals); "
    "a kernel's real accumulation order, its tiling and ATC's graph/UB fusions are not run",
    "layouts: NZ/5HD format conversions and the transposes around them are not simulated, so a 'fallback/layout' "
    "loss appears here only through the CPU fallback's dtype round trip",
    "time: throughput is a roofline model of this trace (an estimate), not a measurement; dynamic-shape gear "
    "switches, graph recompiles and host overheads are not in it",
    "AIPP: the device-side resize/normalisation is modelled by a bilinear resize on the CPU",
    "run-to-run device nondeterminism (atomic-add reductions) is not modelled: the CPU runs are deterministic",
]


class _Resized(LabelledSet):
    """``ds`` with every sample resized (bilinear) to ``hw``: the fixed shape of the experiment."""

    def __init__(self, ds: LabelledSet, hw: tuple[int, int]):
        self.ds, self.hw = ds, tuple(hw)
        self.source, self.classes = ds.source, ds.classes
        self.transform = f"{ds.transform}+resize{hw[0]}x{hw[1]}".lstrip("+")

    def __len__(self):
        return len(self.ds)

    def labels(self):
        return self.ds.labels()

    def where(self, i):
        return self.ds.where(i)

    def sample(self, i):
        x = self.ds.sample(i)
        if x.dim() < 3 or tuple(x.shape[-2:]) == self.hw:
            return x
        return F.interpolate(x[None].float(), size=self.hw, mode="bilinear", align_corners=False)[0]

    def _content_hashes(self):
        return self.ds._content_hashes()


def parse_input(text: str) -> tuple[int, ...]:
    try:
        shape = tuple(int(v) for v in text.lower().split("x"))
    except ValueError:
        shape = ()
    if len(shape) != 4 or min(shape) < 1:
        raise OpkitError(f"--input {text!r}: expected NxCxHxW, e.g. 1x3x640x640")
    return shape


def read_fallbacks(scan) -> list[dict]:
    """The ops an ``opkit scan`` JSON report says fall back: [{"op", "op_type", "command"}] by the op the model
    calls (the outermost composite)."""
    import json

    from ..scanner.scaffold_aten import op_name, resolve
    try:
        data = scan if isinstance(scan, dict) else json.loads(Path(scan).read_text())
    except (OSError, ValueError) as e:
        raise OpkitError(f"--scan {scan}: cannot read the opkit scan JSON report: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("ops"), list):
        raise OpkitError(f"--scan {scan}: not an `opkit scan` JSON report (no 'ops' list)")
    out, seen = [], set()
    for r in data["ops"]:
        if r.get("status") != "fallback":
            continue
        entry = (r.get("via") or [r["op"]])[0]
        if entry in seen:
            continue
        seen.add(entry)
        try:
            name = op_name(resolve(entry))
        except OpkitError:
            name = "".join(p.title() for p in cost.op_type(entry).split("_")) + "FP32"
        out.append({"op": entry, "op_type": cost.op_type(entry), "modules": r.get("modules", []),
                    "command": f"opkit new {name} --from-aten {entry}"})
    return out


def _min_cosine(model, x, variant: SimVariant, ref) -> float | None:
    pol = variant._policy()
    if pol is None:
        return 1.0
    _, recs = Simulator(pol, variant.overrides).run(model, (x,))
    return summary(compare_runs(ref, recs, 0.999))["min_cosine"]


def experiment(model: str, data, input_shape: str, *, policy: str = "cann-force-fp16", scan=None,
               target_top1: float | None = None, sizes=None, buckets: int = 3, fps: float | None = None,
               transform=None, batch_size: int = 16, workers: int | None = None, ray: str | None = None,
               log=None) -> dict:
    """The experiment's result as a dict (the ``--json`` form; experiment/report.py prints it); see the module
    docstring and docs/experiment.md."""
    log = log or (lambda s: None)
    t0 = time.monotonic()
    n_, c_, h_, w_ = parse_input(input_shape)
    ref_model = ModelRef(spec=model)
    m = ref_model.load().eval()
    ds = load_dataset(data, transform)
    ds = _Resized(ds, (h_, w_))
    x0 = ds.batch(range(min(len(ds), n_)))[0]          # the fixed input of the per-layer runs: --input's batch
    if x0.shape[1] != c_:
        raise OpkitError(f"--input {input_shape}: the data's samples have {x0.shape[1]} channels, not {c_}")
    pol = load_policy(policy)
    notes: list[str] = []

    fallbacks = read_fallbacks(scan) if scan else []
    if not scan:
        notes.append("no --scan: CPU fallbacks not modelled (opkit scan MODEL --input ... --json scan.json)")
    fb_types = {f["op_type"] for f in fallbacks}
    on_cpu = {t: Entry(pol.entry(t).io, "io", "CPU fallback: the CPU kernel in the device dtype", "fallback")
              for t in fb_types}
    replaced = {t: Entry(pol.entry(t).io, "float32", "replaced by an FP32-compute op", "replaced") for t in fb_types}
    variants = []
    if fallbacks:
        variants.append(SimVariant("deployed", policy=pol, overrides=on_cpu))
    variants.append(SimVariant("replaced" if fallbacks else "deployed", policy=pol, overrides=dict(replaced)))

    log("diagnose: rescue on a fixed input")
    from ..accuracy.diagnose import diagnose
    pol_r = replace(pol, ops={**pol.ops, **replaced})
    rep = diagnose(m, x0, policy=pol_r, rescue=True, patch=False)
    fp32_types = list(rep.recommend or [])
    if fp32_types:
        variants.append(SimVariant("fp32-types", policy=pol, overrides={**replaced, **{t: FP32 for t in fp32_types}}))
    elif rep.diverged:
        notes.append("diagnose found layers below 0.999 cosine but no op type whose FP32 rescue helps")

    log(f"evaluate {len(variants)} variant(s) + FP32 on {len(ds)} samples")
    res = evaluate(model, ds, variants, batch_size=batch_size, workers=workers, ray=ray, progress=True)
    _, ref_recs = Simulator(None).run(m, (x0,))
    rows = []
    trace = cost.trace(m, x0[:1])
    for v in [None] + variants:
        name = "fp32" if v is None else v.name
        fp32_set = set(fp32_types) if name == "fp32-types" else set()
        thr = cost.modelled(trace, fp32_set, fb_types if name == "deployed" and fallbacks else set(),
                            all_fp32=v is None)
        rows.append({"name": name, "top1": res.topk(name, 1), "top5": res.topk(name, 5),
                     "min_cosine": 1.0 if v is None else _min_cosine(m, x0, v, ref_recs),
                     "changed": len(res.changed(name)) if v is not None else 0,
                     "throughput": thr})
    rows[0]["name"] = BLANKET
    by = {r["name"]: r for r in rows}
    top = {r["name"]: r["top1"] for r in rows}

    points = {}
    if fallbacks:
        points["fallback"] = top["replaced"] - top["deployed"]
    last_prec = "replaced" if fallbacks else "deployed"
    if fp32_types:
        points["precision"] = top["fp32-types"] - top[last_prec]
    best_prec = "fp32-types" if fp32_types else last_prec

    shapes = None
    if sizes:
        obs = read_sizes(sizes) if not isinstance(sizes, list) else sizes
        bks = choose_buckets(obs, buckets)
        base = next(v for v in variants if v.name == best_prec)
        svs = [ShapeVariant(base, mode, (h_, w_), obs, bks) for mode in ("static", "bucketed", "padded")]
        log(f"evaluate static vs bucketed vs padded shapes ({len(obs)} observed sizes, buckets {bks})")
        sres = evaluate(model, ds, svs, batch_size=batch_size, workers=workers, ray=ray, progress=True)
        shapes = {"observed": len(obs), "distinct": len(set(obs)), "buckets": [list(b) for b in bks],
                  "variants": []}
        traces: dict = {}                   # one trace per shape a variant compiles
        for sv in svs:
            per = [tuple(sv.shape_for(s)) for s in obs]
            for hw in set(per) - set(traces):
                traces[hw] = cost.modelled(cost.trace(m, torch.zeros(1, c_, *hw)), set(fp32_types), set())
            thr_ms = sum(traces[hw]["ms_per_image"] for hw in per) / len(per)      # weighted by the observed sizes
            shapes["variants"].append({"name": sv.name, "mode": sv.mode, "top1": sres.topk(sv.name, 1),
                                       "top5": sres.topk(sv.name, 5),
                                       "throughput": {"estimate": True, "ms_per_image": thr_ms,
                                                      "fps": 1e3 / thr_ms if thr_ms else None}})
        st = {s["mode"]: s["top1"] for s in shapes["variants"]}
        shapes["best_dynamic"] = max(("bucketed", "padded"), key=lambda k: st[k])
        points["dynamic-shape"] = st["static"] - st[shapes["best_dynamic"]]

    loss = top[BLANKET] - top["deployed"]
    causes = sorted(({"cause": k, "points": v} for k, v in points.items() if v > EPS_POINTS),
                    key=lambda c: -c["points"])
    cause = causes[0]["cause"] if causes else "none"
    if loss > EPS_POINTS and not causes:
        cause = "precision"
        notes.append(f"the policy loses {loss:.2f} points that neither replacing fallbacks nor FP32 op types "
                     "recovers (see opkit diagnose's per-layer table)")

    # the cheapest configuration that meets the target (cost order), else the most accurate one
    order = [n for n in ("deployed", "replaced", "fp32-types", BLANKET) if n in by]
    chosen = next((n for n in order if target_top1 is None or by[n]["top1"] >= target_top1 - EPS_POINTS), None)
    if chosen is None:
        chosen = max(order, key=lambda n: by[n]["top1"])
    rec = {"variant": chosen, "top1": by[chosen]["top1"],
           "meets_target": None if target_top1 is None else by[chosen]["top1"] >= target_top1 - EPS_POINTS,
           "fp32_op_types": fp32_types if chosen == "fp32-types" else ["(all)"] if chosen == BLANKET else [],
           "replace_ops": [{"op": f["op"], "command": f["command"]} for f in fallbacks] if chosen != "deployed" else [],
           "policy": pol.name, "throughput": by[chosen]["throughput"]}
    if shapes:
        dyn = shapes["best_dynamic"]
        st = {s["mode"]: s for s in shapes["variants"]}
        rec["shapes"] = {"static": [h_, w_], "buckets": shapes["buckets"] if dyn == "bucketed" else
                         [max(shapes["buckets"], key=lambda b: b[0] * b[1])],
                         "choose": "static" if st["static"]["top1"] >= st[dyn]["top1"] - EPS_POINTS else dyn}
    if fps is not None:
        for r in rows:
            r["throughput"]["meets_fps"] = (r["throughput"]["fps"] or 0) >= fps
    fp32_row = rows[0]
    out = {"model": model, "data": res.data, "input": [n_, c_, h_, w_], "policy": pol.name, "n": res.n,
           "target_top1": target_top1, "fps_target": fps,
           "variants": [{k: r[k] for k in ("name", "top1", "top5", "min_cosine", "changed", "throughput")}
                        for r in rows],
           "points": points, "loss": loss, "cause": cause, "causes": causes, "recommend": rec, "fallbacks": fallbacks,
           "rescue": rep.rescue, "shapes": shapes,
           "blanket_fp32": {"top1": fp32_row["top1"], "throughput": fp32_row["throughput"]},
           "throughput_model": cost.ASSUMPTIONS, "cannot_show": CANNOT_SHOW,
           "notes": notes + res.notes, "seconds": time.monotonic() - t0,
           "run": {"backend": res.backend, "workers": res.workers, "shards": res.shards}}
    return out
