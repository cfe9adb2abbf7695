"""A quantized variant of a model: AMCT config + calibration record -> per-layer engine modes.

``QuantVariant`` is what ``opkit quant`` builds and ``opkit eval --quant`` reads: plain tensors and numbers
(picklable, shipped to Ray workers). quant only builds it; it runs as an evaluate variant (``as_variant()``: a
``SimVariant`` carrying its engine modes), so it runs exactly as every other variant of every command::

    v = QuantVariant.from_amct(model, "quant.json", "record.txt")       # or the result of opkit.quantize()
    evaluate(model, data, [v.as_variant()])
    out, _ = v.simulator("cann-force-fp16").run(model, (x,), record=False)

Building follows AMCT's deploy model: Conv+BN folded in FP32 where ``do_fusion`` allows (AMCT ConvBnFusionPass),
weights quantized with the record's ``scale_w`` (ARQ, symmetric), bias quantized to int32 with
deq_scale = scale_d * scale_w (AMCT InsertBiasQuantPass, which stops when a code leaves int32: opkit keeps
that layer in float and says so). With ``atc_conv_bn`` the remaining float Conv+BN pairs are folded as ATC's
ConvBatchnormFusionPass does (fold in FP32, weights stored in the policy's dtype).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn as nn

from ..accuracy.policy import Entry, Policy
from ..accuracy.simulate import LayerMode, Simulator
from ..errors import OpkitError
from ..evaluate.variants import SimVariant
from .algorithms import int_range, quantize
from .config import QuantConfig
from .graph import ModelGraph
from .layer_algorithms import ALGORITHMS, prepare
from .capture import layer_weights
from .modes import (ConvGeometry, FloatConv, FoldedBatchNorm, QuantLayer, QuantMatmul, TensorMemo, fold_bn, same_state,
                    tensor_state)
from .rnn import RNN_TYPES, QuantRnn
from .rnn import fake_weights as rnn_fake_weights
from .records import LayerRecord  # noqa: F401 - defined with the record file it mirrors

ATC_CONV_BN = "ConvBatchnormFusionPass"


@dataclass
class QuantVariant:
    """A model's quantized deployment: which layers run in INT8 with which factors, what is folded."""
    config: QuantConfig
    records: dict[str, LayerRecord]
    layers: dict[str, LayerMode] = field(default_factory=dict)
    layer_overrides: dict[str, Entry] = field(default_factory=dict)   # layer -> Entry (kept in FP32 ...)
    functions: dict[str, LayerMode] = field(default_factory=dict)     # "matmul#k" -> QuantMatmul (what-if)
    notes: list[str] = field(default_factory=list)
    name: str = "int8"
    policy: str | None = "cann-force-fp16"    # the precision policy around the quantized layers (ATC's default)
    atc_conv_bn: bool = True                  # ATC's ConvBatchnormFusionPass in this deployment
    requant: bool = True                      # ATC's RequantFusionPass in this deployment

    def describe(self) -> dict:
        pol = self.policy.name if isinstance(self.policy, Policy) else self.policy
        return {"name": self.name, "policy": pol, "quantized": self.quantized, "float_layers": self.float_layers,
                "channel_wise": {n: self.config.layers[n].channel_wise for n in self.quantized},
                "folded": {m.into: n for n, m in self.layers.items() if isinstance(m, FoldedBatchNorm)},
                "fp32_layers": sorted(self.layer_overrides), "notes": list(self.notes)}

    def as_variant(self, policy: str | Policy | None = None) -> SimVariant:
        """The evaluate variant of this deployment (under ``policy``, default the variant's own)."""
        pol = self.policy if policy is None else policy
        return SimVariant(self.name, policy=pol, layers=self.layers, layer_overrides=self.layer_overrides,
                          functions=self.functions, info={k: v for k, v in self.describe().items() if k != "name"
                                                          and k != "policy"})

    @property
    def quantized(self) -> list[str]:
        return [n for n, m in self.layers.items() if isinstance(m, (QuantLayer, QuantRnn))]

    @property
    def float_layers(self) -> list[str]:
        return [n for n, c in self.config.layers.items()
                if n not in self.layers or not isinstance(self.layers[n], (QuantLayer, QuantRnn))]

    @classmethod
    def from_amct(cls, model: nn.Module, config, record, example: torch.Tensor, atc_conv_bn: bool = True,
                  name: str = "int8") -> "QuantVariant":
        """A variant from AMCT's config JSON (path, dict or QuantConfig) and record file (path or records);
        ``example``: one input batch (the Conv+BN pairs are read from a run)."""
        from .config import load_config, parse_config
        from .graph import read_graph
        from .records import read_record
        if isinstance(config, QuantConfig):
            cfg = config
        elif isinstance(config, dict):
            cfg = parse_config(config, model)
        else:
            cfg = load_config(config, model)
        from .records import check_against
        recs = record if isinstance(record, dict) else read_record(record)
        check_against(model, recs, str(record) if not isinstance(record, dict) else "record")
        missing = [n for n in cfg.quant_layers if n not in recs]
        if missing:
            raise OpkitError(f"record {record if not isinstance(record, dict) else '(dict)'}: no factors for "
                             f"quantized layer(s) {', '.join(missing)}")
        model.eval()
        graph = read_graph(model, (example,))
        return build_variant(model, cfg, recs, graph, atc_conv_bn=atc_conv_bn, name=name)

    def simulator(self, policy: str | Policy | None = None) -> Simulator:
        """The engine running this deployment (as evaluate runs it) under ``policy`` (default the variant's)."""
        return self.as_variant(policy).simulator()

    def weight_bytes(self, model: nn.Module) -> int:
        """Bytes of weights as deployed: integer codes (packed to their bit width) + int32 bias + fp32 scales for
        quantized layers, fp16 for every other parameter (force_fp16) except an unfolded BatchNorm's (FP32 scale,
        offset, mean, variance: the only dtype CANN's BatchNorm takes); a folded BatchNorm lives in its conv."""
        total = 0
        for name, mod in model.named_modules():
            m = self.layers.get(name)
            if isinstance(m, QuantLayer):
                total += (m.codes.numel() * m.wts_bits + 7) // 8 + m.scale_w.numel() * 4
                total += m.bias_codes.numel() * 4 if m.bias_codes is not None else 0
            elif isinstance(m, QuantRnn):     # weight_ih / weight_hh as codes + fp32 scales, biases fp16
                codes = sum(w.numel() for w in m.weights.values())
                r = self.records[name]
                total += (codes * m.wts_bits + 7) // 8 + 4 * (len(r.scale_w) + len(r.scale_r or []))
                total += 2 * sum(p.numel() for k, p in mod.named_parameters(recurse=False) if k not in m.weights)
            elif isinstance(m, FloatConv):
                total += 2 * (m.weight.numel() + (m.bias.numel() if m.bias is not None else 0))
            elif isinstance(mod, nn.modules.batchnorm._BatchNorm) and m is None:   # BatchNorm takes FP32 only
                total += 4 * sum(t.numel() for t in (mod.weight, mod.bias, mod.running_mean, mod.running_var)
                                 if t is not None)
            elif not isinstance(m, FoldedBatchNorm):
                total += 2 * sum(p.numel() for p in mod.parameters(recurse=False))
        return total


def build_variant(model: nn.Module, config: QuantConfig, records: dict[str, LayerRecord], graph: ModelGraph,
                  atc_conv_bn: bool = True, requant: bool = True, name: str = "int8") -> QuantVariant:
    """Engine modes for ``config`` (its quant_enable layers, with ``records``' factors); ``atc_conv_bn`` and
    ``requant``: ATC's ConvBatchnormFusionPass and RequantFusionPass on (ATC's default) or off."""
    mods = dict(model.named_modules())
    v = QuantVariant(config=config, records=records, name=name, atc_conv_bn=atc_conv_bn, requant=requant)
    folded_by_amct: set[str] = set()
    for lname, lc in config.layers.items():
        if type(mods[lname]).__name__ in RNN_TYPES:
            if lc.quant_enable and lname in records:
                r = records[lname]
                v.layers[lname] = QuantRnn(lname, type(mods[lname]).__name__,
                                           rnn_fake_weights(mods[lname], r.scale_w, r.scale_r, r.wts_bits),
                                           float(r.scale_d), int(r.offset_d), float(r.scale_h), int(r.offset_h),
                                           r.act_bits, r.wts_bits)
            continue
        w, b, bn = layer_weights(model, lname, graph, config)
        geo = ConvGeometry.of(mods[lname])
        if bn:
            folded_by_amct.add(lname)
            v.layers[bn] = FoldedBatchNorm(into=lname)
        if not lc.quant_enable or lname not in records:
            if bn:
                v.layers[lname] = FloatConv(lname, geo, w, b, folded_bn=bn, by="AMCT do_fusion")
            continue
        r = records[lname]
        if lc.wts["wts_algo"] == "ada_quantize" and r.ada_weight is None:
            raise OpkitError(f"{lname}: wts_algo ada_quantize, but the record has no learned weights -- AMCT keeps "
                             "ADA's weights in the model quantize_model exports, not in the record file: rebuild "
                             "with opkit quant (it recalibrates from the config)")
        if not geo.weighted:       # AvgPool2d: the pool on the activation codes, dequantized by scale_d x 1.0
            v.layers[lname] = QuantLayer(lname, geo, torch.zeros(0, dtype=torch.int8),
                                         torch.tensor(r.scale_w, dtype=torch.float32), float(r.scale_d),
                                         int(r.offset_d), r.act_bits, r.wts_bits, clip=(r.clip_min, r.clip_max))
            continue
        key = _layer_key(lname, mods[lname], geo, w, b, bn, r) if KEEP_LAYERS else None
        kept = _kept_layer(w, key) if key is not None else None
        if kept is not None:
            v.layers[lname] = kept
            continue
        scale_w = torch.tensor(r.scale_w, dtype=torch.float32)
        w, in_scale = prepare(mods[lname], w, r)          # DMQ & co (layer_algorithms.py); as calibrated
        codes, bias_codes, bad = weight_codes(w, b, scale_w, float(r.scale_d), r.wts_bits, geo)
        if bad is not None:
            v.notes.append(f"{lname}: quantized bias {bad:.4g} leaves int32 (AMCT stops here: \"Quantized bias "
                           f"... exceed int32 range, please add it to skip layer\"); kept in float")
            if bn:
                v.layers[lname] = FloatConv(lname, geo, w, b, folded_bn=bn, by="AMCT do_fusion")
            continue
        v.layers[lname] = QuantLayer(lname, geo, codes,
                                     scale_w, float(r.scale_d), int(r.offset_d), r.act_bits, r.wts_bits,
                                     bias_codes, folded_bn=bn, clip=(r.clip_min, r.clip_max), bias=b,
                                     in_scale=in_scale)
        if key is not None:
            _keep_layer(key[0], key[1], v.layers[lname])
    for key, r in records.items():            # function-level matmuls (what-if): "matmul#k"
        if key.startswith("matmul#"):
            v.functions[key] = QuantMatmul(key, r.scale_d, r.offset_d, r.scale_w[0], r.act_bits)
    if atc_conv_bn:
        add_atc_conv_bn(v, model, graph, skip=folded_by_amct)
    if requant:
        add_requant(v, graph)
    return v


# True: a built QuantLayer is kept per (folded) weight tensor and everything else it is made of (the layer's name,
# the module, its geometry, the bias and folded BatchNorm, every field of the layer's record, and for an unfolded
# DMQ layer a digest of the weight's and bias' contents); each variant gets its own copy (add_requant and a run
# write to it). A search builds the same layers from equal records at every step. False: built on every call.
KEEP_LAYERS = True
_LAYERS = TensorMemo()


def _layer_key(lname: str, module: nn.Module, geo: ConvGeometry, w: torch.Tensor, b: torch.Tensor | None, bn: str,
               r: LayerRecord) -> tuple | None:
    """(w, what else a QuantLayer built from ``w`` depends on), or None (not kept: ADA's learned weight is a
    tensor of the record's own). ``w`` itself is the memo's key (by identity, with its version, storage, dtype
    and shape here): it is not held in the key, so the entry goes with it.

    The contents' digest, for an unfolded layer with an algorithm that remakes its weight (DMQ): a write through
    ``p.data`` or a NumPy view bumps no version and keeps the storage; an unfolded ``w`` and ``b`` are the module's
    own tensors, and such a layer's codes are made from them anew on every build (``prepare`` returns a new
    tensor, which no kept codes match), so a kept layer would be stale where a fresh build is not. Any other
    layer's fresh build is as blind to such a write (the kept fold or codes, keyed on versions, are reused), so
    the digest -- slower than a rebuild for a small layer -- is not taken there."""
    if r.ada_weight is not None or r.ada_scale is not None:
        return None
    fields = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in r.__dict__.items())
    own = not bn and any(a.active(r) for a in ALGORITHMS)
    return w, (lname, w._version, w.data_ptr(), w.dtype, tuple(w.shape), _digest(w) if own else None, id(module),
               geo, *tensor_state(b), _digest(b) if own else None, bn, fields)


def _digest(t: torch.Tensor | None) -> bytes | None:
    """BLAKE2b-128 of the tensor's bytes (about 0.5 GB/s here, below the cost of quantizing it again)."""
    if t is None:
        return None
    a = t.detach()
    if a.dtype == torch.bfloat16:         # no NumPy dtype: the same bits as int16
        a = a.view(torch.int16)
    return hashlib.blake2b(np.ascontiguousarray(a.cpu().numpy()).view(np.uint8), digest_size=16).digest()


def _kept_layer(w: torch.Tensor, key: tuple) -> "QuantLayer | None":
    got = _LAYERS.get(w)
    if got is None:
        return None
    for k, layer in got:
        if same_state(k, key[1]):
            return _fresh(layer)
    return None


def _keep_layer(w: torch.Tensor, key: tuple, layer: QuantLayer) -> None:
    got = _LAYERS.get(w)
    if got is None:
        got = []                     # (key, layer) pairs: a key holds unhashable values (ConvGeometry)
        _LAYERS.put(w, got)
    if len(got) >= 8:
        got.pop(0)
    got.append((key, _fresh(layer)))


def _fresh(layer: QuantLayer) -> QuantLayer:
    """A copy sharing its read-only tensors and kept plans (each checked against its own key on use), with the
    fields a variant's build or run writes reset: requant_to / from_requant (add_requant), overflow (runs)."""
    new = object.__new__(QuantLayer)
    new.__dict__.update(layer.__dict__)
    new.overflow, new.requant_to, new.from_requant = [], None, False
    return new


# True: a layer's weight and bias codes are kept per (folded) weight tensor and factors -- a search rebuilds the
# same layers from the same records at every step; read only. False: quantized on every build.
KEEP_CODES = True
_CODES = TensorMemo()


def weight_codes(w: torch.Tensor, b: torch.Tensor | None, scale_w: torch.Tensor, scale_d: float, bits: int,
                 geo: ConvGeometry) -> tuple[torch.Tensor, torch.Tensor | None, float | None]:
    """(weight codes as int8/int16, int64 bias codes or None, the first bias code past int32 or None): ARQ's
    symmetric weight codes, and AMCT's InsertBiasQuantPass bias / (scale_d * scale_w) rounded."""
    key = (*tensor_state(w), tuple(scale_w.tolist()), scale_d, bits, *tensor_state(b), geo.op_type, geo.groups,
           geo.out_axis())
    memo = _CODES.get(w) if KEEP_CODES else None
    if memo is None:
        memo = {}
        if KEEP_CODES:
            _CODES.put(w, memo)
    for k, got in memo.items():
        if same_state(k, key):
            return got
    codes = quantize(w, geo.weight_view(scale_w, w), 0, bits).to(torch.int8 if bits <= 8 else torch.int16)
    bias_codes, bad = None, None
    if b is not None:
        deq = torch.tensor(scale_d, dtype=torch.float32) * scale_w
        bc = torch.round(b / deq)
        lo, hi = int_range(32)
        if bool(((bc < lo) | (bc > hi)).any()) or not torch.isfinite(bc).all():
            bad = float(bc[(bc < lo) | (bc > hi) | ~torch.isfinite(bc)][0])
        else:
            bias_codes = bc.to(torch.int64)
    got = (codes, bias_codes, bad)
    if KEEP_CODES:
        if len(memo) >= 8:
            memo.pop(next(iter(memo)))
        memo[key] = got
    return got


def add_requant(v: QuantVariant, graph: ModelGraph) -> list[str]:
    """ATC's RequantFusionPass: AscendDequant (+ ReLU) + AscendQuant between two INT8 layers become one
    AscendRequant. Returns the layers whose output it requantizes."""
    done = []
    for a, (b, relu) in graph.chains.items():
        qa, qb = v.layers.get(a), v.layers.get(b)
        bn = graph.pairs.get(a)
        if bn and not isinstance(v.layers.get(bn), FoldedBatchNorm):
            continue                        # a BatchNorm left between them: Dequant -> BN -> Quant, no requant
        if isinstance(qb, QuantLayer) and qb.in_scale is not None:
            continue                        # DMQ's Mul sits between them: Dequant -> Mul -> Quant, no requant
        if isinstance(qa, QuantLayer) and isinstance(qb, QuantLayer) and qa.act_bits <= 8 and qb.act_bits <= 8:
            qa.requant_to = (qb.scale_d, qb.offset_d, qb.act_bits, relu)
            qb.from_requant = True
            done.append(a)
    return done


def add_atc_conv_bn(v: QuantVariant, model: nn.Module, graph: ModelGraph, skip=()) -> list[str]:
    """ATC's ConvBatchnormFusionPass on the float Conv+BN pairs left in the graph: the fold in FP32, the folded
    weights stored in the policy's dtype (fp16 under force_fp16). Returns the convs it folded."""
    mods = dict(model.named_modules())
    done = []
    for conv, bn in graph.pairs.items():
        if conv in skip or conv in v.layers or bn in v.layers:
            continue
        m = mods[conv]
        w, b = fold_bn(m.weight, m.bias, mods[bn])
        v.layers[conv] = FloatConv(conv, ConvGeometry.of(m), w, b, folded_bn=bn, by=f"ATC {ATC_CONV_BN}")
        v.layers[bn] = FoldedBatchNorm(into=conv)
        done.append(conv)
    return done
