"""ATC (and AMCT) fusions that change numerics, each simulated on and off through the engine.

- ``ConvBatchnormFusionPass`` (ATC graph fusion; Conv2D/Conv3D + BatchNorm/BNInference with constant inputs,
  hiascend.com graphubfusionref atlasrr_30_0018/0021): the BatchNorm folded into the conv in FP32, the folded
  weights and bias stored in the model's dtype -- fp16 under force_fp16. A channel with a tiny running variance
  gets gamma / sqrt(var + eps) large: folded weights or bias beyond 65504 become inf, or the bias cancels the
  conv's sum in fp16. Off: the conv and the BatchNorm run as two fp16 ops.
- AMCT ``do_fusion`` (ConvBnFusionPass before quantization): the same fold in FP32, then the folded weights
  are quantized; a folded bias far from the codes' range needs big int32 bias codes that cancel the products.
  Off for a layer: ``skip_fusion_layers`` in the AMCT config (a recalibration).
- ``RequantFusionPass`` (ATC; V200RequantFusionPass on Atlas inference products, atlasrr_30_0006):
  AscendDequant (+ ReLU) + AscendQuant between two INT8 layers become one AscendRequant: int32 straight to
  int8 with one fp32 scale, no fp16 rounding in between, ReLU as a clamp.
- Conv + bias in L0C (Conv2D's bias input; AABiasaddConvFusion merges a separate BiasAdd and "cannot be
  disabled", atlasrr_30_0152): the bias added to the FP32 accumulator before the one fp16 rounding, instead
  of an fp16 conv output plus an fp16 add. Reported, never switched off.

``fusion_result.json`` (ATC ``--export_compile_stat``, atlasatcparam_16_0098): per ``session_and_graph_id_*``,
``graph_fusion`` and ``ub_fusion`` maps of pass name -> {match_times, effect_times, ...} (counts written as
strings); a pass with effect_times > 0 took effect. ``fusion_switch.cfg`` (``--fusion_switch_file``,
atlasatcparam_16_0053): one ``PassName:off`` per line.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch

from ..errors import OpkitError
from ..toolchain.files import write_report
from .modes import ConvGeometry, FloatConv

CONV_BN = "ConvBatchnormFusionPass"
REQUANT = "RequantFusionPass"
AMCT_BN = "AMCT do_fusion"
BIAS_L0C = "Conv+bias in L0C"
REQUANT_NAMES = ("RequantFusionPass", "V100RequantFusionPass", "V200RequantFusionPass",
                 "TbeConvDequantQuantFusionPass", "TbeConvDequantVaddReluQuantFusionPass")
BIAS_NAMES = ("AABiasaddConvFusion", "ConvBiasAddFusionPass")


@dataclass
class FusionRow:
    name: str                           # pass
    layers: list[str]                   # the layers it merged (the first of each merged group)
    switchable: bool                    # can fusion_switch.cfg turn it off
    cosine_fused: float | None = None   # min cosine vs FP32 over the merged layers' outputs, pass on
    cosine_unfused: float | None = None
    output_cosine_fused: float | None = None
    output_cosine_unfused: float | None = None
    nonfinite_fused: float = 0.0
    nonfinite_unfused: float = 0.0
    top1_fused: float | None = None
    top1_unfused: float | None = None
    in_fusion_result: str = ""          # what fusion_result.json says about it ("" when none was given)
    hurts: bool = False
    why: str = ""
    remedy: str = ""

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["pass"] = d.pop("name")
        return d


def read_fusion_result(path: str | Path) -> dict[str, dict]:
    """Pass name -> {"effect_times", "match_times", "kind"} summed over the graphs of an ATC fusion_result.json."""
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except (OSError, ValueError) as e:
        raise OpkitError(f"--fusion-result {p}: cannot read ATC's fusion_result.json: {e}") from None
    if not isinstance(data, dict) or not data:
        raise OpkitError(f"--fusion-result {p}: expected an object of session_and_graph_id_* entries")
    out: dict[str, dict] = {}
    for gid, graph in data.items():
        if not isinstance(graph, dict) or not set(graph) & {"graph_fusion", "ub_fusion"}:
            raise OpkitError(f"--fusion-result {p}: entry {gid!r} has no graph_fusion / ub_fusion map")
        for kind in ("graph_fusion", "ub_fusion"):
            for name, cnt in (graph.get(kind) or {}).items():
                if not isinstance(cnt, dict):
                    raise OpkitError(f"--fusion-result {p}: {gid}.{kind}.{name} is not a counter object")
                try:
                    eff, match = int(cnt.get("effect_times", 0)), int(cnt.get("match_times", 0))
                except (TypeError, ValueError):
                    raise OpkitError(f"--fusion-result {p}: {gid}.{kind}.{name}: effect_times/match_times must be "
                                     "counts") from None
                row = out.setdefault(name, {"effect_times": 0, "match_times": 0, "kind": kind})
                row["effect_times"] += eff
                row["match_times"] += match
    return out


def took_effect(result: dict[str, dict] | None, names) -> bool | None:
    """None without a fusion_result; else whether any of ``names`` took effect."""
    if result is None:
        return None
    return any(result.get(n, {}).get("effect_times", 0) > 0 for n in names)


def describe_in_result(result: dict[str, dict] | None, names) -> str:
    if result is None:
        return ""
    hits = [f"{n}: effect_times {result[n]['effect_times']}, match_times {result[n]['match_times']}"
            for n in names if n in result]
    return "; ".join(hits) if hits else "not in fusion_result.json (switched off, or never matched)"


def write_fusion_switch(rows: list[FusionRow], path: str | Path, depthwise: bool = False,
                        required: list[str] = ()) -> tuple[Path, list[str]]:
    """fusion_switch.cfg as ``fusion_switch`` plans it; (the path written, notes on what was left on)."""
    lines, notes = fusion_switch(rows, depthwise, required)
    return write_report(path, "".join(f"{line}\n" for line in lines)), notes


def fusion_switch(rows: list[FusionRow], depthwise: bool = False, required: list[str] = ()) -> tuple[list[str], list[str]]:
    """``PassName:off`` for every pass that hurts and can be switched off, and the ``required`` ones (the
    recommendation's overflow fix); notes on what was left on."""
    lines, notes = [f"{n}:off" for n in required], []
    for r in rows:
        if not r.hurts:
            continue
        if not r.switchable:
            notes.append(f"{r.name} hurts but cannot be switched off ({r.remedy or 'no switch'})")
            continue
        if r.name == REQUANT and depthwise:
            # --fusion_switch_file doc: a Convolution with group == num_output needs RequantFusionPass on
            notes.append(f"{REQUANT} left on: the model has depthwise convs, which need it (ATC "
                         "--fusion_switch_file constraint)")
            continue
        if f"{r.name}:off" not in lines:
            lines.append(f"{r.name}:off")
    return lines, notes


@dataclass
class SplitBiasConv(FloatConv):
    """A float conv whose bias is added after the conv's fp16 rounding, as a separate fp16 add (no L0C bias)."""

    def run(self, sim, module, forward, args, kwargs):
        x = args[0]
        if sim.policy is None:
            return self.geometry.apply(x, self.weight, self.bias), torch.float32, "float32", "conv, bias apart"

        def conv(x, w):
            return self.geometry.apply(x, w)
        y, io, label, _ = sim.execute(self.op_type, conv, (x, self.weight), {}, layer=self.name)
        b = self.geometry.channel_view(self.bias, y)

        def add(a, c):
            return a + c
        out, io, _, _ = sim.execute("add", add, (y, b), {})
        return out, io, label, "conv (fp16 out) + bias as an fp16 add"


def split_bias(layers: dict, model, names) -> dict:
    """``layers`` with the float convs ``names`` running their bias as a separate fp16 add."""
    mods = dict(model.named_modules())
    out = dict(layers)
    for n in names:
        m = out.get(n)
        if isinstance(m, FloatConv):
            out[n] = SplitBiasConv(n, m.geometry, m.weight, m.bias, m.folded_bn, m.by)
        else:
            mod = mods[n]
            out[n] = SplitBiasConv(n, ConvGeometry.of(mod), mod.weight.detach().float(), mod.bias.detach().float())
    return out
