"""``opkit.quantize(model, calib, data, ...)``: what AMCT + ATC would make of a model, and what to change.

One path: check the inputs (quant/inputs.py); read the graph and calibrate the base config (AMCT's defaults or
the user's) -- quant/builder.py builds every variant; score FP32, fp16 and INT8 on the labelled set through
opkit.evaluate (quant/scoring.py runs every variant, and answers the engine queries on a fixed batch);
per-layer table and AMCT sensitivity; if the drop misses the target, AMCT's binary search and a greedy search
(quant/search.py); rerun the winner from its written AMCT config (recalibrated) to verify it; the strategy table
(top-1, drop, float layers, weight memory, modelled latency); fusions on and off; overflow tracing with fixes
rerun (quant/overflow.py); the report (quant/report.py: presentation only).
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Callable

import torch.nn as nn

from ..accuracy.layers import summary
from ..accuracy.policy import Policy, load_policy
from ..errors import OpkitError
from ..evaluate import FP32
from ..evaluate.target import EPS_POINTS, Target
from .builder import Deploy, VariantBuilder
from .config import QuantConfig, default_config, load_config, parse_config, unsimulated
from .inputs import read_inputs
from .modes import FloatConv, QuantLayer
from .overflow import Finding, trace_overflow
from . import prefix
from .report import QuantReport, Recommended, StrategyRow, activation_histograms, plot_layers
from .scoring import Run, Scorer, placed_workers, servable
from .layer_algorithms import ALGORITHMS, chosen
from .linear_flow import deploy_dtype as deploy_dtype_of
from .search import SearchResult, Step, apply, binary_search, greedy, sensitivity
from .variant import QuantVariant

__all__ = ["quantize", "Deploy", "VariantBuilder", "Scorer", "Run"]


@dataclass
class Base:
    """The base config (AMCT's defaults or the user's), its calibration and its variant."""
    name: str                       # int8-default | int8-config
    config: QuantConfig
    records: dict
    variant: QuantVariant
    shared: list[str]               # modules that run more than once per forward (kept in float)


@dataclass
class OverflowFix:
    """The config-level fix applied to a recommendation that went non-finite."""
    config: QuantConfig             # the recommended config with the fold off (skip_fusion_layers)
    variant: QuantVariant           # ... deployed with ATC's ConvBatchnormFusionPass off
    fix: str                        # what was applied, as the overflow trace names it
    layer: str
    cause: str
    findings: list[Finding]         # the overflow trace of the recommendation before the fix


@dataclass
class Recommendation:
    config: QuantConfig             # the recommended AMCT config, as written and recalibrated
    records: dict
    variant: QuantVariant
    win: Step | None                # what the searches found (None: no search ran)
    searches: list[SearchResult] = field(default_factory=list)
    fix: OverflowFix | None = None  # the overflow fix applied to it, if one was needed


def _check_numbers(target_drop: float, prefix_mb: float) -> None:
    """quantize's numeric options, refused with the option's name."""
    if target_drop < 0:
        raise OpkitError(f"--target-drop must be >= 0 points; got {target_drop}")
    if not prefix_mb >= 0:      # NaN too
        raise OpkitError(f"quantize: prefix_mb must be >= 0 (megabytes; 0 turns prefix reuse off); got {prefix_mb}")


def quantize(model: nn.Module, calib, data, config=None, policy: str | Policy = "cann-force-fp16",
             target_drop: float = 0.5, *, fusion_result=None, chip: str = "ascend910b", batch_size: int = 64,
             transform=None, calib_transform=None, workers: int | None = 1, ray: str | None = None,
             model_spec: str | None = None, table_samples: int = 32, greedy_width: int = 6, search: bool = True,
             quant_matmul: bool = False, deploy_dtype: str | None = None, algorithms=None,
             prefix_mb: float = prefix.DEFAULT_MB, log: Callable[[str], None] | None = None) -> QuantReport:
    """Simulate AMCT PTQ + ATC conversion of ``model`` on the CPU and find what meets ``target_drop``.

    ``calib``: calibration inputs (tensor, labelled set, or a .pt/.npz/folder path, read with ``calib_transform``,
    default ``transform``); ``data``: the labelled evaluation set (a ``(x, y)`` pair, a labelled set, or a path
    read with ``transform``); ``config``: an AMCT config JSON (path, dict or QuantConfig; default: AMCT's
    create_quant_config defaults); ``policy``: the precision policy around the quantized layers (ATC's default
    force_fp16); ``fusion_result``: ATC's fusion_result.json (which fusions took effect). ``workers`` / ``ray``:
    how the labelled evaluations run (scoring.placed_workers; worker processes reload the model from
    ``model_spec``, the MODEL spec it was loaded from). ``deploy_dtype`` (float16 | bfloat16): the dtype the model
    is deployed in; AMCT's current-API Linear flows (W8A8, SmoothQuant, W8A16, GPTQ, AWQ) run on the model cast
    to it, as rows and a per-layer search (quant/linear_flow.py). The model is deep-copied; nothing given is
    modified. ``algorithms``: AMCT's per-layer algorithms tried as strategy rows and search actions (names,
    default ("dmq",); "ada" trains AMCT's 10,000 steps per layer). ``prefix_mb``: memory (MB) the search may
    keep of the base variant's module outputs on the labelled set, so that a variant starts from them up to its
    first changed layer (in-process evaluations only; 0: off; quant/prefix.py). See docs/quant.md.
    """
    from . import fusion as F
    t0 = time.monotonic()
    log = log or (lambda s: None)
    _check_numbers(target_drop, prefix_mb)
    dtype, algos = deploy_dtype_of(deploy_dtype), chosen(algorithms)
    inp = read_inputs(model, calib, data, transform=transform, calib_transform=calib_transform,
                      table_samples=table_samples)
    pol = policy if isinstance(policy, Policy) else load_policy(policy)
    fr = F.read_fusion_result(fusion_result) if fusion_result else None
    # AMCT's fake-quant model has no ATC fusion (amct-fake-quant policy)
    deploy = Deploy(pol, conv_bn=not pol.fake_quant and F.took_effect(fr, (F.CONV_BN,)) is not False,
                    requant=not pol.fake_quant and F.took_effect(fr, F.REQUANT_NAMES) is not False)
    b = VariantBuilder(inp.model, inp.calib, deploy, log, quant_matmul)
    notes: list[str] = []
    base = _base(b, config, notes)
    workers = placed_workers(workers, ray, search, servable(inp.model, base.variant, prefix_mb))
    sc = Scorer(inp.model, inp.data, inp.table_x, Run(batch_size, workers, ray, model_spec, prefix_mb), log)
    log(sc.prefix_status())
    v_fp16 = b.float_variant()
    sc.keep_prefix(base.variant)          # the search's variants differ from it in a few layers
    scores = sc.score([FP32, v_fp16, base.variant])
    target = Target.drop(scores["fp32"].top1, target_drop)

    log("per-layer comparison and AMCT sensitivity")
    rows = sc.rows(base.variant)
    first_capture: list = []          # sensitivity's first batch, for the report's activation histograms
    sens = sensitivity(inp.model, [inp.calib[i:i + batch_size] for i in range(0, min(len(inp.calib), 4 * batch_size),
                                                                              batch_size)],
                       base.config, base.records, b.graph, first=first_capture,
                       plotted=plot_layers(base.config, base.variant))
    order = sorted(sens, key=lambda n: sens[n])            # most sensitive (lowest similarity) first
    rec = _recommend(b, sc, base, order, target, search, greedy_width, log, algos)
    if rec.fix:
        notes.append(f"the recommended deployment overflowed at {rec.fix.layer} ({rec.fix.cause}); "
                     f"applied: {rec.fix.fix}")
    log("strategy table")
    table = _strategy_table(b, sc, base, v_fp16, rec.variant, chip, algos)
    linear = _linear(inp, sc, dtype, table, target_drop, search, log) if dtype is not None else {}
    columns = _columns(b, inp, base, table, notes)
    fusion_rows = _fusions(b, sc, rec, v_fp16, fr, target_drop, log)
    checked = {"fp16": v_fp16, base.name: base.variant} | ({} if rec.fix else {"recommended": rec.variant})
    overflow = trace_overflow(sc, checked, target, log) + (rec.fix.findings if rec.fix else [])
    return QuantReport(
        fp32={"top1": scores["fp32"].top1, "top5": scores["fp32"].top5}, target_drop=target_drop,
        policy=pol.describe(), chip=chip, strategies=table, base=base.name, config=rec.config,
        base_config=base.config, records=rec.records, base_records=base.records,
        recommend=_recommended(rec, sc, base, target), searches=rec.searches, sensitivity=sens,
        layers=_layer_rows(rows, base, sens, order), fusion=fusion_rows, overflow=overflow,
        notes=notes + list(rec.variant.notes), deploy=deploy.__dict__ | {"policy": pol.name},
        data=inp.data.describe(), calib_samples=int(inp.calib.shape[0]),
        fusion_result=str(fusion_result) if fusion_result else "", graph=b.graph,
        variants={"fp16": v_fp16, base.name: base.variant, "recommended": rec.variant}, model=inp.model,
        activations=activation_histograms(inp.model, b.graph, base, inp.calib[:batch_size],
                                          captured=first_capture[0] if first_capture else None),
        predictions={r.name: sc.scored(r.name).predictions for r in table},
        evals=sc.evals, eval_backends=sorted(sc.backends) + [_logged(log, sc.prefix_status())],
        eval_seconds=sc.eval_seconds,
        seconds=time.monotonic() - t0, columns=columns, amct_only=amct_only(inp.model), linear=linear)


def _logged(log: Callable[[str], None], line: str) -> str:
    log(line)
    return line


def _base(b: VariantBuilder, config, notes: list[str]) -> Base:
    """The base config: AMCT's defaults or the user's, shared modules and layers AMCT cannot quantize in float."""
    model = b.model
    if config is None:
        cfg, name = default_config(model), "int8-default"
    else:
        cfg = config if isinstance(config, QuantConfig) else \
            parse_config(config, model) if isinstance(config, dict) else load_config(config, model)
        name = "int8-config"
    if b.matmuls:
        notes.append(f"what-if: {len(b.matmuls)} function-level matmul call(s) in INT8 in every INT8 row "
                     f"({', '.join(b.matmuls)}); AMCT's PyTorch flow quantizes modules, not these")
    for n, why in amct_only(model).items():
        notes.append(f"NOT AMCT'S ANSWER at {n}: {why}; it stays float in every row here")
    stateless = [n for n in b.graph.rnn_without_state if n in cfg.quant_layers]
    for n in stateless:
        # AMCT's create_quant_config leaves such an RNN out (configuration/check.py:872-916: the initial state
        # must come from the graph input), and its calibration refuses it (cali_quant.py:90-93)
        notes.append(f"{n}: an RNN called without its initial state (hx); AMCT quantizes an LSTM/GRU only when "
                     "hx is passed in from the input: kept in float")
    cfg = cfg.with_float(stateless)
    shared = [n for n in cfg.layers if b.graph.calls.get(n, 0) != 1]
    for n in shared:
        if cfg.layers[n].quant_enable:
            notes.append(f"{n}: runs {b.graph.calls.get(n, 0)} time(s) per forward; AMCT quantizes modules "
                         "that run once (shared weights are skipped): kept in float")
    cfg = cfg.with_float(shared)
    if not cfg.quant_layers:
        raise OpkitError("opkit quant: no layer to quantize (Conv1d, Conv2d, Linear running once per forward)")
    if cfg.batch_num > b.calib.shape[0]:
        raise OpkitError(f"--calib: batch_num {cfg.batch_num} is larger than the calibration set "
                         f"({b.calib.shape[0]} samples)")
    records = b.records(cfg)
    v = b.variant(cfg, name, records)
    notes.extend(v.notes)
    # layers AMCT cannot quantize (int32 bias overflow) are float in every variant built from this config
    cfg = cfg.with_float([n for n in cfg.quant_layers if n not in v.quantized])
    return Base(name, cfg, records, v, shared)


def amct_only(model: nn.Module) -> dict[str, str]:
    """Layers AMCT's classic flow quantizes that opkit does not simulate in INT8 (never silently float):
    module -> why. Module types from AMCT's capacity list (config.QUANTIZABLE_TYPES)."""
    return unsimulated(model)


def _recommend(b: VariantBuilder, sc: Scorer, base: Base, order: list[str], target: Target, search: bool,
               width: int, log, algos=()) -> Recommendation:
    """The searches, then their winner written as an AMCT config, recalibrated and rerun (with the overflow fix
    when the rerun goes non-finite and a config-level fix verifies)."""
    base_top1 = sc.top1(base.variant)
    searches: list[SearchResult] = []
    counter = [0]

    def score_cfg(cfg: QuantConfig) -> float:
        counter[0] += 1
        return sc.top1(b.variant(cfg, f"search-{counter[0]}", _search_records(b, base, cfg)))
    if search:
        searches.append(binary_search(order, score_cfg, base.config, target, base_top1, log))
        searches.append(greedy(order, score_cfg, base.config, target, base_top1, width, log, algos))
    met = [r for r in searches if r.met]
    if met:
        win = min(met, key=lambda r: (len(r.best.float_layers), -r.best.top1)).best
    elif searches:
        win = max((r.best for r in searches), key=lambda s: s.top1)
    else:
        win = None
    cfg = apply(base.config, win.float_layers, win.per_channel, win.algorithms) if win else base.config
    log("verifying the recommendation: recalibrated from its config and rerun")
    cfg = parse_config(cfg.to_json(), b.model, "recommended config")
    records = b.records(cfg, fresh=True)
    rec = Recommendation(cfg, records, b.variant(cfg, "recommended", records), win, searches)
    fix = _fix_recommended(b, sc, rec, target, log)
    if fix:
        rec.config, rec.variant, rec.fix = fix.config, fix.variant, fix
        rec.records = b.records(rec.config)
    return rec


def _linear(inp, sc: Scorer, dtype, table: list[StrategyRow], target_drop: float, search: bool, log) -> dict:
    """AMCT's current-API Linear flows on the model in the deployment dtype: a row per candidate (every Linear
    layer AMCT takes), and the per-layer plan written as AMCT configs, verified by a rebuild from them."""
    from .linear_flow import LinearFlow
    lf = LinearFlow(inp.model, dtype, inp.calib, sc, log)
    if not lf.layers:
        return {"dtype": lf.tag, "note": "no nn.Linear layer AMCT's current API quantizes"}
    fp32 = sc.top1(FP32)
    for row, vname in lf.strategy_rows().items():
        s = sc.scored(vname)
        table.append(StrategyRow(row, s.top1, s.top5, fp32 - s.top1, [], linear_weight_bytes(lf, row),
                                 {"seconds": float("nan"), "estimate": True, "not_modelled": "current-API fake-quant"},
                                 {}))
    out = {"dtype": lf.tag, "layers": lf.layers}
    if search:
        got = lf.search(target_drop)
        if got:
            res, plan = got
            out |= plan.as_dict() | {"steps": [st.__dict__ for st in res.steps], "sensitivity": res.sensitivity}
    out["calibrations"] = lf.calibrations
    return out


def linear_weight_bytes(lf, row: str) -> int:
    """Weights as the row deploys them: the Linear layers' integer codes (4/8 bits) + a float32 scale per output
    channel, every other parameter in the 16-bit deployment dtype."""
    from .linear_search import CANDIDATES
    cand = CANDIDATES.get(row.removeprefix("linear-"))
    total = 0
    for n, m in lf.m.named_modules():
        own = sum(p.numel() for p in m.parameters(recurse=False))
        if cand is not None and n in lf.layers:
            total += (m.weight.numel() * cand.weight_bits + 7) // 8 + 4 * m.weight.shape[0] + 2 * (own - m.weight.numel())
        else:
            total += 2 * own
    return total


def _search_records(b: VariantBuilder, base: Base, cfg: QuantConfig) -> dict:
    """A search step's records: the base calibration, and for a layer an algorithm (DMQ ...) is newly on, that
    layer's record from one calibration of the base config with the algorithm on every layer it applies to
    (search steps reuse calibrations as the float steps do; the winner is recalibrated from its written config)."""
    recs = dict(base.records)
    for a in ALGORITHMS:
        new = [n for n in a.layers(cfg) if n not in a.layers(base.config)]
        if new:
            full = b.records(a.enable(base.config))             # cached: one calibration per algorithm
            recs.update({n: full[n] for n in new if n in full})
    return recs


def _recommended(rec: Recommendation, sc: Scorer, base: Base, target: Target) -> Recommended:
    got = sc.score([rec.variant])["recommended"]
    base_top1 = sc.top1(base.variant)
    found = rec.win.ok if rec.win is not None else target.met(base_top1)
    fp32 = sc.top1(FP32)
    return Recommended(
        float_layers=rec.variant.float_layers,
        channel_wise={n: rec.config.layers[n].channel_wise for n in rec.variant.quantized},
        top1=got.top1, top5=got.top5, drop=fp32 - got.top1, meets_target=found,
        verified=found and target.met(got.top1),      # the rerun holds what the search found
        search_top1=rec.win.top1 if rec.win else base_top1, skip_fusion_layers=list(rec.config.skip_fusion_layers),
        atc_fusions_off=["ConvBatchnormFusionPass"] if rec.fix else [], overflow_fix=rec.fix.fix if rec.fix else "",
        found_by=([r.strategy for r in rec.searches if r.best is rec.win] or ["base"])[0],
        algorithms={a.name: [n for n in a.layers(rec.config) if n in rec.variant.quantized] for a in ALGORITHMS
                    if a.layers(rec.config)})


def _strategy_table(b: VariantBuilder, sc: Scorer, base: Base, v_fp16: QuantVariant, v_rec: QuantVariant,
                    chip: str, algos=()) -> list[StrategyRow]:
    """One row per deployment: top-1/top-5, drop, float layers, weight memory, modelled latency."""
    from .strategies import fp32_bytes, latency, profile_ops
    model, cfg = b.model, base.config
    strat = {"fp32": FP32, "fp16": v_fp16}
    amct_default = default_config(model, batch_num=cfg.batch_num).with_float(base.shared)
    strat["int8-default"] = base.variant if base.name == "int8-default" else b.variant(amct_default, "int8-default")
    if base.name == "int8-config":
        strat["int8-config"] = base.variant
    if not b.deploy.policy.fake_quant:   # AMCT's own answer beside the deployed one (opkit/quant/amct/columns.py)
        from .amct.columns import NAME, fake_quant_variant
        strat[NAME] = fake_quant_variant(b, cfg, base.records)
    strat["int8-per-channel"] = b.variant(cfg.with_channel_wise(True), "int8-per-channel")
    strat["int8-per-layer"] = b.variant(cfg.with_channel_wise(False), "int8-per-layer")
    for a in algos:                      # AMCT's per-layer algorithms (DMQ ...) on every layer they apply to
        on = a.enable(cfg)
        if a.layers(on) != a.layers(cfg):
            strat[f"int8-{a.name}"] = b.variant(on, f"int8-{a.name}")
    ends = cfg.quant_layers
    fl = [ends[0], ends[-1]] if len(ends) > 1 else ends
    strat["int8-first-last-float"] = b.variant(cfg.with_float(fl), "int8-first-last-float")
    strat["recommended"] = v_rec
    scores = sc.score(list(strat.values()))
    fp32_top1 = scores["fp32"].top1
    ops = profile_ops(model, b.calib[:1])
    table = []
    for name, v in strat.items():
        if name == "fp32":
            mem, lat, floats = fp32_bytes(model), latency(ops, None, chip, fp32=True), list(cfg.layers)
        else:
            mem, lat, floats = v.weight_bytes(model), latency(ops, v.layers, chip), v.float_layers
        table.append(StrategyRow(name, scores[name].top1, scores[name].top5, fp32_top1 - scores[name].top1, floats,
                                 mem, lat, {n: v.config.layers[n].channel_wise for n in v.quantized}
                                 if name != "fp32" else {}))
    return table


def _columns(b: VariantBuilder, inp, base: Base, table: list[StrategyRow], notes: list[str]) -> dict:
    """AMCT's fake-quant top-1 beside the deployed one and the layers where they part (issue 30)."""
    from .amct.columns import NAME, fake_quant_variant, parting_layers
    rows = {r.name: r for r in table}
    if NAME not in rows:
        return {}
    parts = parting_layers(inp.model, inp.table_x, fake_quant_variant(b, base.config, base.records), base.variant)
    fq, dep = rows[NAME].top1, rows[base.name].top1
    notes.append(f"both columns: AMCT fake-quant top-1 {fq:.2f}%, deployed ({base.name}, {b.deploy.policy.name}) "
                 f"{dep:.2f}%; " + ("they part at " + ", ".join(f"{p.layer} (cos {p.cosine:.6f})" for p in parts)
                                    if parts else "no layer parts (1 - cosine below 1e-5 everywhere)"))
    return {"amct_fake_quant_top1": fq, "deployed_top1": dep, "deployed": base.name,
            "parting_layers": [p.__dict__ for p in parts]}


def _signature(rows) -> dict[str, str]:
    """Per quantized layer: "jump" when its error (1 - cosine) is 10x the error reaching it, else "spread"."""
    out, prev = {}, 0.0
    for r in rows:
        if r.op_type == "block" or r.cosine is None:
            continue
        err = max(0.0, 1.0 - r.cosine)
        if r.compute_dtype.startswith(("int", "a")):
            out[r.name] = "jump" if err > 1e-4 and err > 10 * max(prev, 1e-7) else "spread"
        prev = max(prev, err)
    return out


def _layer_rows(rows, base: "Base", sens: dict, order: list[str]) -> list[dict]:
    cfg, records, v = base.config, base.records, base.variant
    sig = _signature(rows)
    first = next((r.name for r in rows if r.below), None)
    out = []
    for r in rows:
        d = r.as_dict()
        name = r.name.split("#")[0]
        rec = records.get(name)
        q = name in v.quantized
        d.update({"quantized": q, "sensitivity_rank": order.index(name) + 1 if name in order else None,
                  "similarity": sens.get(name), "signature": sig.get(r.name, ""),
                  "granularity": ("channel" if cfg.layers[name].channel_wise else "layer") if q else "",
                  "clip_min": rec.clip_min if q and rec else None, "clip_max": rec.clip_max if q and rec else None,
                  "clipped": rec.clipped if q and rec else None, "first_divergence": r.name == first})
        out.append(d)
    return out


def _fusions(b: VariantBuilder, sc: Scorer, rec: "Recommendation", v_fp16: QuantVariant, fr, target_drop: float,
             log) -> list:
    """Each numerics-changing fusion on and off, on the deployment it belongs to."""
    cfg, records, v_rec = rec.config, rec.records, rec.variant
    from . import fusion as F
    rows = []

    def compare(on: QuantVariant, off: QuantVariant, layers: list[str]):
        r_on, r_off = sc.rows(on), sc.rows(off)
        pick = lambda rs: [r for r in rs if r.name.split("#")[0] in layers]        # noqa: E731
        cos = lambda rs: min((r.cosine for r in pick(rs) if r.cosine is not None), default=None)  # noqa
        nf = lambda rs: max((r.nonfinite for r in rs), default=0.0)               # noqa: E731
        return (cos(r_on), cos(r_off), summary(r_on)["output_cosine"], summary(r_off)["output_cosine"],
                nf(r_on), nf(r_off))

    def finish(row: F.FusionRow, on, off):
        got = sc.score([on, off])
        row.top1_fused, row.top1_unfused = got[on.name].top1, got[off.name].top1
        # a loss counts past noise: half the target drop, and at least two samples' worth
        margin = max(target_drop / 2, 200.0 / max(len(sc.data), 1))
        worse_top1 = row.top1_fused is not None and row.top1_unfused - row.top1_fused >= margin - EPS_POINTS
        worse_nan = row.nonfinite_fused > 0 and row.nonfinite_unfused == 0
        row.hurts = bool(worse_top1 or worse_nan)
        if row.hurts:
            row.why = ("non-finite outputs with the pass, none without" if worse_nan else
                       f"top-1 {row.top1_fused:.2f}% fused vs {row.top1_unfused:.2f}% unfused")
        rows.append(row)

    # ATC ConvBatchnormFusionPass on the fp16 deployment (when it takes effect there)
    folded = [n for n, m in v_fp16.layers.items() if isinstance(m, FloatConv) and "ATC" in m.by]
    if folded:
        log("fusion: ConvBatchnormFusionPass on/off")
        on, off = v_fp16, b.float_variant("fp16-no-convbn", conv_bn=False)
        c = compare(on, off, folded + [v_fp16.layers[n].folded_bn for n in folded])
        row = F.FusionRow(F.CONV_BN, folded, True, *c, in_fusion_result=F.describe_in_result(fr, (F.CONV_BN,)),
                          remedy="fusion_switch.cfg ConvBatchnormFusionPass:off, or a larger BatchNorm eps")
        finish(row, on, off)
    # AMCT do_fusion: BN folded before quantization (recommended config)
    amct = [n for n, m in v_rec.layers.items() if getattr(m, "folded_bn", "") and "ATC" not in getattr(m, "by", "")]
    if amct and cfg.do_fusion:
        log("fusion: AMCT Conv+BN fusion on/off (recalibrated)")
        cfg_off = cfg.copy()
        cfg_off.skip_fusion_layers = sorted(set(cfg.skip_fusion_layers) | set(amct))
        off = b.variant(cfg_off, "recommended-no-amct-bn", conv_bn=v_rec.atc_conv_bn, requant=v_rec.requant)
        c = compare(v_rec, off, amct + [b.graph.pairs[n] for n in amct])
        row = F.FusionRow(F.AMCT_BN, amct, False, *c, remedy="skip_fusion_layers in the AMCT config")
        finish(row, v_rec, off)
    # RequantFusionPass on the recommended INT8 deployment
    chains = [n for n, m in v_rec.layers.items() if isinstance(m, QuantLayer) and m.requant_to is not None]
    if chains:
        log("fusion: RequantFusionPass on/off")
        off = b.variant(cfg, "recommended-no-requant", records, conv_bn=v_rec.atc_conv_bn, requant=False)
        c = compare(v_rec, off, chains)
        row = F.FusionRow(F.REQUANT, chains, True, *c, in_fusion_result=F.describe_in_result(fr, F.REQUANT_NAMES),
                          remedy="fusion_switch.cfg RequantFusionPass:off")
        finish(row, v_rec, off)
    # Conv + bias accumulated in L0C: float convs with a bias (informational: it cannot be disabled)
    mods = dict(b.model.named_modules())
    biased = [n for n, m in v_fp16.layers.items() if isinstance(m, FloatConv) and m.bias is not None]
    biased += [n for n in b.graph.order if isinstance(mods.get(n), (nn.Conv1d, nn.Conv2d)) and mods[n].bias is not None
               and n not in v_fp16.layers]
    if biased:
        from .fusion import split_bias
        off = copy.copy(v_fp16)
        off.name = "fp16-bias-apart"
        off.layers = split_bias(v_fp16.layers, b.model, biased)
        c = compare(v_fp16, off, biased)
        row = F.FusionRow(F.BIAS_L0C, biased, False, *c, in_fusion_result=F.describe_in_result(fr, F.BIAS_NAMES),
                          remedy="none: AABiasaddConvFusion cannot be disabled")
        finish(row, v_fp16, off)
    return rows





def _fix_recommended(b: VariantBuilder, sc: Scorer, rec: Recommendation, target: Target, log) -> OverflowFix | None:
    """If the recommended deployment goes non-finite and a config-level fix (the fold off: skip_fusion_layers in
    the AMCT config, ConvBatchnormFusionPass off for ATC) verifies, the recommendation with that fix."""
    v = rec.variant
    probe = copy.copy(v)
    probe.name = "recommended (before the overflow fix)"      # not cached under the final variant's name
    found = trace_overflow(sc, {"recommended": probe}, target, log)
    if not found:
        return None
    f = found[0]
    f.variant = "recommended"
    # the config-level fix (the fold off), when it leaves nothing non-finite and costs no top-1 -- even if the
    # recommendation as a whole misses the target
    before = sc.top1(probe)
    fix = next((x for x in f.fixes if x.fix.startswith(("skip_fusion_layers", "ConvBatchnormFusionPass off"))
                and x.nonfinite == 0 and (x.top1 is None or x.top1 >= before - EPS_POINTS)), None)
    if fix is None:
        return None
    f.fix = fix.fix
    conv = f.layer if f.layer in b.graph.pairs else \
        next((c for c, bn in b.graph.pairs.items() if bn == f.layer), f.layer)
    fixed = rec.config.copy()
    if f.fix.startswith("skip_fusion_layers") and conv not in fixed.skip_fusion_layers:
        fixed.skip_fusion_layers = sorted(fixed.skip_fusion_layers + [conv])
    return OverflowFix(fixed, b.variant(fixed, "recommended", conv_bn=False), f.fix, f.layer, f.cause, found)
