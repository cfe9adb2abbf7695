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
``--target-drop`` (modelled throughput from experiment/cost.py, an estimate), with the commands to get there.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import torch
import torch.nn.functional as F

from ..accuracy.layers import compare_runs, summary
from ..accuracy.policy import KEEP_FP32, Entry, load_policy
from ..data.sets import LabelledSet, load_dataset
from ..errors import OpkitError
from ..evaluate import EPS_POINTS, FP32, SimVariant, Target, evaluate
from ..evaluate.shard import ModelRef
from . import cost
from .shapes import ShapeVariant, choose_buckets, read_sizes

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
    if variant.policy is None:
        return 1.0
    _, recs = variant.simulator().run(model, (x,))
    return summary(compare_runs(ref, recs, 0.999))["min_cosine"]


@dataclass
class VariantRow:
    name: str
    top1: float
    top5: float
    min_cosine: float | None            # worst per-layer cosine vs FP32 on the fixed input
    changed: int                        # samples whose top-1 differs from FP32's
    throughput: dict                    # experiment/cost.py's modelled figures (an estimate)


@dataclass
class Recommendation:
    variant: str
    top1: float
    meets_target: bool | None           # None: no target
    fp32_op_types: list[str]
    replace_ops: list[dict]
    policy: str
    throughput: dict
    shapes: dict | None = None


@dataclass
class ExperimentResult:
    """What ``opkit experiment`` found; ``to_json()`` is the ``--json`` form, experiment/report.py prints it."""
    model: str
    data: dict
    input: list[int]
    policy: str
    n: int
    target_top1: float | None           # the floor the recommendation is held to (percent)
    target_drop: float | None           # when the target was given as points below FP32
    fps_target: float | None
    variants: list[VariantRow]
    points: dict[str, float]            # points recovered by each change
    loss: float                         # points the deployed variant loses vs FP32
    cause: str
    causes: list[dict]
    recommend: Recommendation
    fallbacks: list[dict]
    rescue: object
    shapes: dict | None
    notes: list[str]
    seconds: float
    run: dict
    predictions: dict[str, list[int]] = field(default_factory=dict)    # top-1 per sample, by variant (not in JSON)

    @property
    def blanket_fp32(self) -> VariantRow:
        return self.variants[0]

    def to_json(self) -> dict:
        return {"model": self.model, "data": self.data, "input": self.input, "policy": self.policy, "n": self.n,
                "target_top1": self.target_top1, "target_drop": self.target_drop, "fps_target": self.fps_target,
                "variants": [asdict(v) for v in self.variants], "points": self.points, "loss": self.loss,
                "cause": self.cause, "causes": self.causes, "recommend": asdict(self.recommend),
                "fallbacks": self.fallbacks, "rescue": self.rescue, "shapes": self.shapes,
                "blanket_fp32": {"top1": self.blanket_fp32.top1, "throughput": self.blanket_fp32.throughput},
                "throughput_model": cost.ASSUMPTIONS, "cannot_show": CANNOT_SHOW, "notes": self.notes,
                "seconds": self.seconds, "run": self.run}


@dataclass
class _Setup:
    """The model, data, fixed input and policy of one experiment, and the variants it compares."""
    spec: str
    model: torch.nn.Module
    data: LabelledSet
    shape: tuple[int, int, int, int]
    x0: torch.Tensor
    policy: object
    fallbacks: list[dict]
    variants: list[SimVariant]
    fp32_types: list[str]
    rescue: object
    notes: list[str]


def experiment(model: str, data, input_shape: str, *, policy: str = "cann-force-fp16", scan=None,
               target_top1: float | None = None, target_drop: float | None = None, sizes=None, buckets: int = 3,
               fps: float | None = None, transform=None, batch_size: int = 16, workers: int | None = None,
               ray: str | None = None, log=None) -> ExperimentResult:
    """Attribute the model's top-1 loss under ``policy``; see the module docstring and docs/experiment.md.
    The target: ``target_drop`` points below FP32's top-1, or an absolute ``target_top1`` (percent); not both."""
    if target_top1 is not None and target_drop is not None:
        raise OpkitError("give one target: target_drop (points below FP32) or target_top1 (percent), not both")
    log = log or (lambda s: None)
    t0 = time.monotonic()
    st = _setup(model, data, input_shape, policy, scan, transform, log)
    log(f"evaluate {len(st.variants)} variant(s) + FP32 on {len(st.data)} samples")
    res = evaluate(model, st.data, st.variants, batch_size=batch_size, workers=workers, ray=ray, progress=True)
    rows = _rows(st, res)
    top = {r.name: r.top1 for r in rows}
    points = {}
    if st.fallbacks:
        points["fallback"] = top["replaced"] - top["deployed"]
    last_prec = "replaced" if st.fallbacks else "deployed"
    if st.fp32_types:
        points["precision"] = top["fp32-types"] - top[last_prec]
    best_prec = "fp32-types" if st.fp32_types else last_prec
    shapes = None
    if sizes:
        shapes = _shapes(st, sizes, buckets, best_prec, batch_size, workers, ray, log)
        points["dynamic-shape"] = shapes["points"]
    loss = top[BLANKET] - top["deployed"]
    causes = sorted(({"cause": k, "points": v} for k, v in points.items() if v > EPS_POINTS),
                    key=lambda c: -c["points"])
    cause = causes[0]["cause"] if causes else "none"
    if loss > EPS_POINTS and not causes:
        cause = "precision"
        st.notes.append(f"the policy loses {loss:.2f} points that neither replacing fallbacks nor FP32 op types "
                        "recovers (see opkit diagnose's per-layer table)")
    if fps is not None:
        for r in rows:
            r.throughput["meets_fps"] = (r.throughput["fps"] or 0) >= fps
    n_, c_, h_, w_ = st.shape
    target = Target.drop(top[BLANKET], target_drop) if target_drop is not None else Target(target_top1)
    return ExperimentResult(
        model=model, data=res.data, input=[n_, c_, h_, w_], policy=st.policy.name, n=res.n, target_top1=target.floor,
        target_drop=target_drop, fps_target=fps, variants=rows, points=points, loss=loss, cause=cause, causes=causes,
        recommend=_recommend(st, rows, target, shapes), fallbacks=st.fallbacks, rescue=st.rescue,
        shapes=shapes, notes=st.notes + res.notes, seconds=time.monotonic() - t0,
        run={"backend": res.backend, "workers": res.workers, "shards": res.shards},
        predictions={name: res.top1_predictions(name) for name in res.names})


def _setup(model: str, data, input_shape: str, policy: str, scan, transform, log) -> _Setup:
    shape = parse_input(input_shape)
    n_, c_, h_, w_ = shape
    m = ModelRef(spec=model).load().eval()
    ds = _Resized(load_dataset(data, transform), (h_, w_))
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
    rep = diagnose(m, x0, policy=replace(pol, ops={**pol.ops, **replaced}), rescue=True, patch=False)
    fp32_types = list(rep.recommend or [])
    if fp32_types:
        variants.append(SimVariant("fp32-types", policy=pol,
                                   overrides={**replaced, **{t: KEEP_FP32 for t in fp32_types}}))
    elif rep.diverged:
        notes.append("diagnose found layers below 0.999 cosine but no op type whose FP32 rescue helps")
    return _Setup(model, m, ds, shape, x0, pol, fallbacks, variants, fp32_types, rep.rescue, notes)


def _rows(st: _Setup, res) -> list[VariantRow]:
    """FP32 (the blanket FP32 deployment) and each variant: top-1/5, worst cosine, changed samples, FPS."""
    _, ref_recs = FP32.simulator().run(st.model, (st.x0,))
    trace = cost.trace(st.model, st.x0[:1])
    fb_types = {f["op_type"] for f in st.fallbacks}
    rows = []
    for v in [FP32] + st.variants:
        fp32_set = set(st.fp32_types) if v.name == "fp32-types" else set()
        thr = cost.modelled(trace, fp32_set, fb_types if v.name == "deployed" and st.fallbacks else set(),
                            all_fp32=v is FP32)
        rows.append(VariantRow(BLANKET if v is FP32 else v.name, res.topk(v.name, 1), res.topk(v.name, 5),
                               1.0 if v is FP32 else _min_cosine(st.model, st.x0, v, ref_recs),
                               0 if v is FP32 else len(res.changed(v.name)), thr))
    return rows


def _shapes(st: _Setup, sizes, buckets: int, best_prec: str, batch_size, workers, ray, log) -> dict:
    """The best precision variant fed static (resized) vs bucketed / padded (dynamic) shapes."""
    n_, c_, h_, w_ = st.shape
    obs = read_sizes(sizes) if not isinstance(sizes, list) else sizes
    bks = choose_buckets(obs, buckets)
    base = next(v for v in st.variants if v.name == best_prec)
    svs = [ShapeVariant(base, mode, (h_, w_), obs, bks) for mode in ("static", "bucketed", "padded")]
    log(f"evaluate static vs bucketed vs padded shapes ({len(obs)} observed sizes, buckets {bks})")
    sres = evaluate(st.spec, st.data, svs, batch_size=batch_size, workers=workers, ray=ray, progress=True)
    shapes = {"observed": len(obs), "distinct": len(set(obs)), "buckets": [list(b) for b in bks], "variants": []}
    traces: dict = {}                   # one trace per shape a variant compiles
    for sv in svs:
        per = [tuple(sv.shape_for(s)) for s in obs]
        for hw in set(per) - set(traces):
            traces[hw] = cost.modelled(cost.trace(st.model, torch.zeros(1, c_, *hw)), set(st.fp32_types), set())
        thr_ms = sum(traces[hw]["ms_per_image"] for hw in per) / len(per)      # weighted by the observed sizes
        shapes["variants"].append({"name": sv.name, "mode": sv.mode, "top1": sres.topk(sv.name, 1),
                                   "top5": sres.topk(sv.name, 5),
                                   "throughput": {"estimate": True, "ms_per_image": thr_ms,
                                                  "fps": 1e3 / thr_ms if thr_ms else None}})
    top = {s["mode"]: s["top1"] for s in shapes["variants"]}
    shapes["best_dynamic"] = max(("bucketed", "padded"), key=lambda k: top[k])
    shapes["points"] = top["static"] - top[shapes["best_dynamic"]]
    return shapes


def _recommend(st: _Setup, rows: list[VariantRow], target: Target, shapes: dict | None) -> Recommendation:
    """The cheapest configuration that meets the target (cost order), else the most accurate one."""
    by = {r.name: r for r in rows}
    order = [n for n in ("deployed", "replaced", "fp32-types", BLANKET) if n in by]
    chosen = next((n for n in order if target.met(by[n].top1)), None)
    if chosen is None:
        chosen = max(order, key=lambda n: by[n].top1)
    rec = Recommendation(
        chosen, by[chosen].top1, None if target.floor is None else target.met(by[chosen].top1),
        st.fp32_types if chosen == "fp32-types" else ["(all)"] if chosen == BLANKET else [],
        [{"op": f["op"], "command": f["command"]} for f in st.fallbacks] if chosen != "deployed" else [],
        st.policy.name, by[chosen].throughput)
    if shapes:
        h_, w_ = st.shape[2:]
        dyn = shapes["best_dynamic"]
        top = {s["mode"]: s for s in shapes["variants"]}
        rec.shapes = {"static": [h_, w_], "buckets": shapes["buckets"] if dyn == "bucketed" else
                      [max(shapes["buckets"], key=lambda b: b[0] * b[1])],
                      "choose": "static" if top["static"]["top1"] >= top[dyn]["top1"] - EPS_POINTS else dyn}
    return rec
