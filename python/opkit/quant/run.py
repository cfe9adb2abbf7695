"""``opkit.quantize(model, calib, data=labelled, ...)``: what AMCT + ATC would make of a model, and what to change.

One pass: check the inputs; read the graph (Conv+BN pairs, requant chains); calibrate the base config (AMCT's
defaults or the user's); score FP32, fp16 and INT8 on the labelled set through the engine (opkit.evaluate);
per-layer table and AMCT sensitivity; if the drop misses the target, AMCT's binary search and a greedy search;
rerun the winner from its written AMCT config (recalibrated) to verify it; the strategy table (top-1, drop,
float layers, weight memory, modelled latency); fusions on and off; overflow tracing with fixes rerun.
"""
from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import time
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn as nn

from ..accuracy.layers import compare_runs, summary
from ..accuracy.policy import Policy, load_policy
from ..accuracy.simulate import Simulator
from ..errors import OpkitError
from .calibrate import calibrate
from .config import QuantConfig, default_config, load_config, parse_config
from .graph import ModelGraph, read_graph
from .modes import FloatConv, FoldedBatchNorm, QuantLayer
from .report import QuantReport
from .variant import QuantVariant, build_variant


@dataclass
class Deploy:
    """How ATC builds the model: the precision policy and the numerics-changing fusions that take effect."""
    policy: Policy
    conv_bn: bool = True            # ConvBatchnormFusionPass
    requant: bool = True            # RequantFusionPass


class Session:
    """What one quantize() run shares: the model, its graph, data, the FP32 reference and the scorer."""

    def __init__(self, model: nn.Module, calib: torch.Tensor, data, deploy: Deploy, table_x: torch.Tensor,
                 batch_size: int, workers: int, log: Callable[[str], None], quant_matmul: bool = False):
        self.model, self.calib, self.data, self.deploy = model, calib, data, deploy
        self.table_x, self.batch_size, self.workers, self.log = table_x, batch_size, workers, log
        self.graph: ModelGraph = read_graph(model, (calib[:2],))
        self.matmuls = list(self.graph.matmuls) if quant_matmul else []
        _, self.ref = Simulator(None).run(model, (table_x,))
        self._records: dict[str, dict] = {}
        self._scores: dict[str, tuple[float, float]] = {}
        self.evals = 0
        self.eval_seconds = 0.0
        self.fp32_top1, self.target_drop = 100.0, 0.5      # set once FP32 is scored

    # -- variants -------------------------------------------------------------------------------------------
    def records(self, config: QuantConfig) -> dict:
        key = hashlib.sha256(json.dumps([config.to_json(only_enabled=True), self.matmuls],
                                        sort_keys=True).encode()).hexdigest()
        if key not in self._records:
            self.log(f"calibration: {len(config.quant_layers)} layer(s), batch_num {config.batch_num}")
            self._records[key] = calibrate(self.model, self.calib, config, self.graph, self.log,
                                           matmuls=self.matmuls)
        return self._records[key]

    def variant(self, config: QuantConfig, name: str, records: dict | None = None, conv_bn: bool | None = None,
                requant: bool | None = None) -> QuantVariant:
        recs = records if records is not None else (self.records(config) if config.quant_layers or self.matmuls
                                                    else {})
        v = build_variant(self.model, config, recs, self.graph,
                          atc_conv_bn=self.deploy.conv_bn if conv_bn is None else conv_bn,
                          requant=self.deploy.requant if requant is None else requant, name=name)
        v.policy = self.deploy.policy
        return v

    def float_variant(self, name: str = "fp16", conv_bn: bool | None = None) -> QuantVariant:
        """The model in float under the policy: no AMCT, ATC's ConvBatchnormFusionPass as deployed."""
        cfg = default_config(self.model).with_float(default_config(self.model).layers)
        cfg.do_fusion = False
        return self.variant(cfg, name, records={}, conv_bn=conv_bn)

    # -- measurements -----------------------------------------------------------------------------------------
    def score(self, variants: list) -> dict[str, tuple[float, float]]:
        """Top-1 / top-5 (percent) of each variant on the labelled set, cached by name."""
        from ..evaluate import evaluate
        todo = [v for v in variants if v.name not in self._scores]
        if todo:
            t0 = time.monotonic()
            self.log(f"evaluating {', '.join(v.name for v in todo)} on {len(self.data)} samples")
            res = evaluate(self.model, self.data, todo, topk=5, batch_size=self.batch_size, workers=self.workers)
            for name in res.names:
                self._scores[name] = (res.topk(name, 1), res.topk(name, 5))
            self.evals += len(todo)
            self.eval_seconds += time.monotonic() - t0
        return {v.name: self._scores[v.name] for v in variants}

    def top1(self, v) -> float:
        return self.score([v])[v.name][0]

    def rows(self, v: QuantVariant | None):
        """Per-layer rows of ``v`` vs FP32 on the fixed batch. A conv with a BatchNorm folded into it is one op on
        the device: its row is compared with the FP32 BatchNorm's output."""
        sim = v.simulator(self.deploy.policy) if v is not None else Simulator(self.deploy.policy, naive=False)
        out, recs = sim.run(self.model, (self.table_x,))
        layers = v.layers if v is not None else {}
        folded = {m.into: bn for bn, m in layers.items() if isinstance(m, FoldedBatchNorm)}
        by = {r.name: r for r in self.ref}

        def target(name: str):
            t = by[folded[name]].tensor if name in folded and folded[name] in by else by[name].tensor
            m = layers.get(name)
            if isinstance(m, QuantLayer) and m.requant_to is not None and m.requant_to[3]:
                t = t.clamp(min=0)      # AscendRequant hands on ReLU'd codes: compare with the FP32 ReLU output
            return t
        ref = []
        for r in self.ref:
            m = layers.get(r.name)
            t = target(m.into) if isinstance(m, FoldedBatchNorm) and m.into in by else target(r.name)
            ref.append(dataclasses.replace(r, tensor=t) if t is not r.tensor else r)
        return compare_runs(ref, recs, 0.999), sim


def _as_inputs(calib, what: str, transform=None) -> torch.Tensor:
    """Calibration inputs: a tensor (N, ...), a labelled set, or what opkit.data.load_inputs reads."""
    if isinstance(calib, torch.Tensor):
        x = calib
    else:
        from ..data import load_inputs
        x = load_inputs(calib, transform)
    if x.dim() < 1 or x.shape[0] == 0:
        raise OpkitError(f"{what}: no samples (shape {list(x.shape)})")
    if not x.is_floating_point():       # token ids of a text model: its Linear layers still quantize
        if x.is_complex() or x.dtype == torch.bool:
            raise OpkitError(f"{what}: inputs must be real numbers or integer ids; got {x.dtype}")
        return x
    if not torch.isfinite(x).all():
        raise OpkitError(f"{what}: inputs hold inf or NaN (AMCT refuses such calibration data)")
    return x.float()


def _labelled(data):
    from ..data import LabelledSet, TensorSet, load_dataset
    if data is None:
        raise OpkitError("opkit quant: --data (a labelled set: .pt/.npz with x and y, or a folder "
                         "ROOT/<class>/<file>) is required: the drop in top-1 is the headline figure")
    if isinstance(data, (tuple, list)) and len(data) == 2:
        ds = TensorSet(torch.as_tensor(data[0]), torch.as_tensor(data[1]), source="data=(x, y)")
    else:
        ds = data if isinstance(data, LabelledSet) else load_dataset(data)
    if len(ds) == 0:
        raise OpkitError(f"--data {ds.source}: the labelled set is empty")
    return ds


def _check_fits(model: nn.Module, x: torch.Tensor, what: str) -> torch.Tensor:
    try:
        with torch.no_grad():
            out = model(x[:2])
    except Exception as e:  # noqa: BLE001 - the model's own error names the mismatch
        raise OpkitError(f"{what}: inputs of shape {list(x.shape[1:])} (per sample) do not fit the model: "
                         f"{type(e).__name__}: {e}") from None
    t = out if isinstance(out, torch.Tensor) else next((o for o in out if isinstance(o, torch.Tensor)), None)
    if t is None or t.dim() != 2:
        raise OpkitError(f"{what}: the model's output is not [batch, classes] (got "
                         f"{list(t.shape) if t is not None else type(out).__name__}); opkit quant scores classifiers")
    return t


def quantize(model: nn.Module, calib, data=None, config=None, policy: str | Policy = "cann-force-fp16",
             target_drop: float = 0.5, *, fusion_result=None, chip: str = "ascend910b", batch_size: int = 64,
             transform=None,
             workers: int = 1, table_samples: int = 32, greedy_width: int = 6, search: bool = True,
             quant_matmul: bool = False,
             log: Callable[[str], None] | None = None) -> QuantReport:
    """Simulate AMCT PTQ + ATC conversion of ``model`` on the CPU and find what meets ``target_drop``.

    ``calib``: calibration inputs (tensor, labelled set, or a .pt/.npz/folder path); ``data``: the labelled
    evaluation set (a ``(x, y)`` pair, a labelled set, or a path); ``config``: an AMCT config JSON (path, dict
    or QuantConfig; default: AMCT's create_quant_config defaults); ``policy``: the precision policy around the
    quantized layers (ATC's default force_fp16); ``fusion_result``: ATC's fusion_result.json (which fusions took
    effect). The model is deep-copied; nothing given is modified. See docs/quant.md.
    """
    from . import fusion as F
    from .overflow import trace_overflow
    from .strategies import fp32_bytes, latency, profile_ops
    from .search import binary_search, greedy, sensitivity

    t0 = time.monotonic()
    log = log or (lambda s: None)
    if not isinstance(model, nn.Module):
        raise OpkitError(f"opkit.quantize: expected an nn.Module; got {type(model).__name__}")
    if target_drop < 0:
        raise OpkitError(f"--target-drop must be >= 0 points; got {target_drop}")
    ds = _labelled(data)
    x_calib = _as_inputs(calib, "--calib", transform)
    model = copy.deepcopy(model).eval()
    out = _check_fits(model, x_calib, "--calib")
    x_data, _ = ds.batch(list(range(min(len(ds), table_samples))))
    _check_fits(model, x_data, f"--data {ds.source}")
    ds.check_labels(out.shape[1], "the model")
    pol = policy if isinstance(policy, Policy) else load_policy(policy)
    fr = F.read_fusion_result(fusion_result) if fusion_result else None
    # AMCT's fake-quant model has no ATC fusion (amct-fake-quant policy)
    deploy = Deploy(pol, conv_bn=not pol.fake_quant and F.took_effect(fr, (F.CONV_BN,)) is not False,
                    requant=not pol.fake_quant and F.took_effect(fr, F.REQUANT_NAMES) is not False)
    notes: list[str] = []
    s = Session(model, x_calib, ds, deploy, x_data, batch_size, workers, log, quant_matmul)
    if s.matmuls:
        notes.append(f"what-if: {len(s.matmuls)} function-level matmul call(s) in INT8 in every INT8 row "
                     f"({', '.join(s.matmuls)}); AMCT's PyTorch flow quantizes modules, not these")

    # -- the base config -----------------------------------------------------------------------------------
    if config is None:
        base = default_config(model)
        base_name = "int8-default"
    else:
        base = config if isinstance(config, QuantConfig) else \
            parse_config(config, model) if isinstance(config, dict) else load_config(config, model)
        base_name = "int8-config"
    shared = [n for n in base.layers if s.graph.calls.get(n, 0) != 1]
    for name in shared:
        if base.layers[name].quant_enable:
            notes.append(f"{name}: runs {s.graph.calls.get(name, 0)} time(s) per forward; AMCT quantizes modules "
                         "that run once (shared weights are skipped): kept in float")
    base = base.with_float(shared)
    if not base.quant_layers:
        raise OpkitError("opkit quant: no layer to quantize (Conv1d, Conv2d, Linear running once per forward)")
    if base.batch_num > x_calib.shape[0]:
        raise OpkitError(f"--calib: batch_num {base.batch_num} is larger than the calibration set "
                         f"({x_calib.shape[0]} samples)")
    records = s.records(base)
    v_base = s.variant(base, base_name, records)
    for n in v_base.notes:
        notes.append(n)
    # layers AMCT cannot quantize (int32 bias overflow) are float in every variant built from this config
    base = base.with_float([n for n in base.quant_layers if not isinstance(v_base.layers.get(n), QuantLayer)])

    # -- accuracy of the references and the base -------------------------------------------------------------
    from ..evaluate import FP32
    v_fp16 = s.float_variant()
    scores = s.score([FP32, v_fp16, v_base])
    fp32_top1 = scores["fp32"][0]
    s.fp32_top1, s.target_drop = fp32_top1, target_drop

    # -- per-layer table and sensitivity ------------------------------------------------------------------
    log("per-layer comparison and AMCT sensitivity")
    rows, _ = s.rows(v_base)
    sens = sensitivity(model, [x_calib[i:i + batch_size] for i in range(0, min(len(x_calib), 4 * batch_size),
                                                                          batch_size)], base, records, s.graph)
    order = sorted(sens, key=lambda n: sens[n])            # most sensitive (lowest similarity) first

    # -- search --------------------------------------------------------------------------------------------
    base_top1 = scores[base_name][0]
    searches = []
    counter = [0]

    def score_cfg(cfg: QuantConfig) -> float:
        counter[0] += 1
        v = s.variant(cfg, f"search-{counter[0]}", records)
        return s.top1(v)
    if search:
        searches.append(binary_search(order, score_cfg, base, fp32_top1, target_drop, base_top1, log))
        searches.append(greedy(order, score_cfg, base, fp32_top1, target_drop, base_top1, greedy_width, log))
    met = [r for r in searches if r.met]
    if met:
        win = min(met, key=lambda r: (len(r.best.float_layers), -r.best.top1)).best
    elif searches:
        win = max((r.best for r in searches), key=lambda b: b.top1)
    else:
        win = None
    rec_cfg = base.with_float(win.float_layers).with_channel_wise(True, set(win.per_channel)) if win else base

    # -- verification: the written config recalibrated and rerun ----------------------------------------------
    log("verifying the recommendation: recalibrated from its config and rerun")
    rec_cfg_again = parse_config(rec_cfg.to_json(), model, "recommended config")
    rec_records = calibrate(model, x_calib, rec_cfg_again, s.graph, log, matmuls=s.matmuls)
    v_rec = s.variant(rec_cfg_again, "recommended", rec_records)
    rec_fix = _fix_recommended(s, v_rec, rec_cfg_again, log)
    if rec_fix:
        rec_cfg_again, v_rec = rec_fix["config"], rec_fix["variant"]
        rec_records = s.records(rec_cfg_again)
        notes.append(f"the recommended deployment overflowed at {rec_fix['layer']} ({rec_fix['cause']}); "
                     f"applied: {rec_fix['fix']}")
    rec_top1, rec_top5 = s.score([v_rec])["recommended"]
    found = win.ok if win is not None else fp32_top1 - base_top1 <= target_drop + 1e-9
    verified = found and fp32_top1 - rec_top1 <= target_drop + 1e-9      # the rerun holds what the search found

    # -- the strategy table ------------------------------------------------------------------------------------
    log("strategy table")
    strat = {"fp32": FP32, "fp16": v_fp16}
    amct_default = default_config(model, batch_num=base.batch_num).with_float(shared)
    v_default = v_base if base_name == "int8-default" else s.variant(amct_default, "int8-default")
    strat["int8-default"] = v_default
    if base_name == "int8-config":
        strat["int8-config"] = v_base
    if not pol.fake_quant:      # AMCT's own answer beside the deployed one (issue 30; opkit/quant/amct/columns.py)
        from .amct.columns import fake_quant_variant
        strat["int8-amct-fake-quant"] = fake_quant_variant(s, base, records)
    strat["int8-per-channel"] = s.variant(base.with_channel_wise(True), "int8-per-channel")
    strat["int8-per-layer"] = s.variant(base.with_channel_wise(False), "int8-per-layer")
    ends = base.quant_layers
    fl = [ends[0], ends[-1]] if len(ends) > 1 else ends
    strat["int8-first-last-float"] = s.variant(base.with_float(fl), "int8-first-last-float")
    strat["recommended"] = v_rec
    scores = s.score(list(strat.values()))
    ops = profile_ops(model, x_calib[:1])
    table = []
    for name, v in strat.items():
        t1, t5 = scores[name]
        if name == "fp32":
            mem, lat, floats = fp32_bytes(model), latency(ops, None, chip, fp32=True), list(base.layers)
        else:
            mem, lat = v.weight_bytes(model), latency(ops, v.layers, chip)
            floats = v.float_layers
        table.append({"name": name, "top1": t1, "top5": t5, "drop": fp32_top1 - t1, "float_layers": floats,
                      "n_float": len(floats), "weight_bytes": mem, "latency_s": lat["seconds"],
                      "latency": lat, "channel_wise": ({n: v.config.layers[n].channel_wise for n in v.quantized}
                                                       if name != "fp32" else {})})

    columns = {}
    if "int8-amct-fake-quant" in strat:
        from .amct.columns import parting_layers
        fq, dep = scores["int8-amct-fake-quant"][0], scores[base_name][0]
        parts = parting_layers(model, s.table_x, strat["int8-amct-fake-quant"], v_base)
        columns = {"amct_fake_quant_top1": fq, "deployed_top1": dep, "deployed": base_name,
                   "parting_layers": [p.__dict__ for p in parts]}
        notes.append(f"both columns: AMCT fake-quant top-1 {fq:.2f}%, deployed ({base_name}, {pol.name}) {dep:.2f}%; "
                     + ("they part at " + ", ".join(f"{p.layer} (cos {p.cosine:.6f})" for p in parts) if parts
                        else "no layer parts (cosine above 0.99999 everywhere)"))

    # -- fusions and overflow ----------------------------------------------------------------------------------
    fusion_rows = _fusions(s, rec_cfg_again, rec_records, v_rec, v_fp16, fr, log)
    overflow = trace_overflow(s, {"fp16": v_fp16, base_name: v_base} | ({} if rec_fix else {"recommended": v_rec}),
                              log) + (rec_fix["findings"] if rec_fix else [])

    rep = QuantReport(
        fp32={"top1": fp32_top1, "top5": scores["fp32"][1]}, target_drop=target_drop, policy=pol.describe(),
        chip=chip, strategies=table, base=base_name, config=rec_cfg_again, base_config=base,
        records=rec_records, base_records=records,
        recommend={"float_layers": v_rec.float_layers,
                   "channel_wise": {n: rec_cfg_again.layers[n].channel_wise for n in v_rec.quantized},
                   "top1": rec_top1, "top5": rec_top5, "drop": fp32_top1 - rec_top1, "meets_target": found,
                   "verified": verified, "search_top1": win.top1 if win else base_top1,
                   "skip_fusion_layers": list(rec_cfg_again.skip_fusion_layers),
                   "atc_fusions_off": ["ConvBatchnormFusionPass"] if rec_fix else [],
                   "overflow_fix": rec_fix["fix"] if rec_fix else "",
                   "found_by": ([r.strategy for r in searches if r.best is win] or ["base"])[0]},
        searches=searches, sensitivity=sens, layers=_layer_rows(rows, base, records, sens, order, v_base),
        fusion=fusion_rows, overflow=overflow, notes=notes + list(v_rec.notes), deploy=deploy.__dict__ | {
            "policy": pol.name}, data=ds.describe(), calib_samples=int(x_calib.shape[0]),
        fusion_result=str(fusion_result) if fusion_result else "", graph=s.graph, variants={
            "fp16": v_fp16, base_name: v_base, "recommended": v_rec}, model=model)
    rep.plot_x = x_calib[:batch_size]
    rep.columns = columns
    rep.evals, rep.eval_seconds, rep.seconds = s.evals, s.eval_seconds, time.monotonic() - t0
    return rep


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


def _layer_rows(rows, cfg: QuantConfig, records: dict, sens: dict, order: list[str], v: QuantVariant) -> list[dict]:
    sig = _signature(rows)
    first = next((r.name for r in rows if r.below), None)
    out = []
    for r in rows:
        d = r.as_dict()
        name = r.name.split("#")[0]
        rec = records.get(name)
        q = isinstance(v.layers.get(name), QuantLayer)
        d.update({"quantized": q, "sensitivity_rank": order.index(name) + 1 if name in order else None,
                  "similarity": sens.get(name), "signature": sig.get(r.name, ""),
                  "granularity": ("channel" if cfg.layers[name].channel_wise else "layer") if q else "",
                  "clip_min": rec.clip_min if q and rec else None, "clip_max": rec.clip_max if q and rec else None,
                  "clipped": rec.clipped if q and rec else None, "first_divergence": r.name == first})
        out.append(d)
    return out


def _fusions(s: Session, cfg: QuantConfig, records: dict, v_rec: QuantVariant, v_fp16: QuantVariant, fr, log):
    """Each numerics-changing fusion on and off, on the deployment it belongs to."""
    from . import fusion as F
    rows = []

    def compare(on: QuantVariant, off: QuantVariant, layers: list[str]):
        r_on, _ = s.rows(on)
        r_off, _ = s.rows(off)
        pick = lambda rs: [r for r in rs if r.name.split("#")[0] in layers]        # noqa: E731
        cos = lambda rs: min((r.cosine for r in pick(rs) if r.cosine is not None), default=None)  # noqa
        nf = lambda rs: max((r.nonfinite for r in rs), default=0.0)               # noqa: E731
        return (cos(r_on), cos(r_off), summary(r_on)["output_cosine"], summary(r_off)["output_cosine"],
                nf(r_on), nf(r_off))

    def finish(row: F.FusionRow, on, off):
        if s.data is not None:
            sc = s.score([on, off])
            row.top1_fused, row.top1_unfused = sc[on.name][0], sc[off.name][0]
        # a loss counts past noise: half the target drop, and at least two samples' worth
        margin = max(s.target_drop / 2, 200.0 / max(len(s.data), 1)) if s.data is not None else 0.0
        worse_top1 = row.top1_fused is not None and row.top1_unfused - row.top1_fused >= margin - 1e-9
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
        on, off = v_fp16, s.float_variant("fp16-no-convbn", conv_bn=False)
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
        off = s.variant(cfg_off, "recommended-no-amct-bn", conv_bn=v_rec.atc_conv_bn, requant=v_rec.requant)
        c = compare(v_rec, off, amct + [s.graph.pairs[n] for n in amct])
        row = F.FusionRow(F.AMCT_BN, amct, False, *c, remedy="skip_fusion_layers in the AMCT config")
        finish(row, v_rec, off)
    # RequantFusionPass on the recommended INT8 deployment
    chains = [n for n, m in v_rec.layers.items() if isinstance(m, QuantLayer) and m.requant_to is not None]
    if chains:
        log("fusion: RequantFusionPass on/off")
        off = s.variant(cfg, "recommended-no-requant", records, conv_bn=v_rec.atc_conv_bn, requant=False)
        c = compare(v_rec, off, chains)
        row = F.FusionRow(F.REQUANT, chains, True, *c, in_fusion_result=F.describe_in_result(fr, F.REQUANT_NAMES),
                          remedy="fusion_switch.cfg RequantFusionPass:off")
        finish(row, v_rec, off)
    # Conv + bias accumulated in L0C: float convs with a bias (informational: it cannot be disabled)
    mods = dict(s.model.named_modules())
    biased = [n for n, m in v_fp16.layers.items() if isinstance(m, FloatConv) and m.bias is not None]
    biased += [n for n in s.graph.order if isinstance(mods.get(n), (nn.Conv1d, nn.Conv2d)) and mods[n].bias is not None
               and n not in v_fp16.layers]
    if biased:
        from .fusion import split_bias
        off = copy.copy(v_fp16)
        off.name = "fp16-bias-apart"
        off.layers = split_bias(v_fp16.layers, s.model, biased)
        c = compare(v_fp16, off, biased)
        row = F.FusionRow(F.BIAS_L0C, biased, False, *c, in_fusion_result=F.describe_in_result(fr, F.BIAS_NAMES),
                          remedy="none: AABiasaddConvFusion cannot be disabled")
        finish(row, v_fp16, off)
    return rows



def _fix_recommended(s: Session, v: QuantVariant, cfg: QuantConfig, log) -> dict | None:
    """If the recommended deployment goes non-finite and a config-level fix (the fold off: skip_fusion_layers in
    the AMCT config, ConvBatchnormFusionPass off for ATC) verifies, the recommendation with that fix."""
    from .overflow import trace_overflow
    found = trace_overflow(s, {"recommended": v}, log)
    if not found:
        return None
    f = found[0]
    # the config-level fix (the fold off), when it leaves nothing non-finite and costs no top-1 -- even if the
    # recommendation as a whole misses the target
    probe = copy.copy(v)
    probe.name = "recommended (before the overflow fix)"      # not cached under the final variant's name
    before = s.top1(probe)
    fix = next((x for x in f["fixes"] if x["fix"].startswith(("skip_fusion_layers", "ConvBatchnormFusionPass off"))
                and x["nonfinite"] == 0 and (x["top1"] is None or x["top1"] >= before - 1e-9)), None)
    if fix is None:
        return None
    f["fix"] = fix["fix"]
    conv = f["layer"] if f["layer"] in s.graph.pairs else \
        next((c for c, b in s.graph.pairs.items() if b == f["layer"]), f["layer"])
    fixed = cfg.copy()
    if f["fix"].startswith("skip_fusion_layers") and conv not in fixed.skip_fusion_layers:
        fixed.skip_fusion_layers = sorted(fixed.skip_fusion_layers + [conv])
    return {"config": fixed, "variant": s.variant(fixed, "recommended", conv_bn=False), "fix": f["fix"],
            "layer": f["layer"], "cause": f["cause"], "findings": found}
