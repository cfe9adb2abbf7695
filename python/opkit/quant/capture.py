"""The FP32 model as AMCT's calibration graph runs it: the (BN-folded) weights of a quantized layer and the modes
that capture each layer's input. Below variant.py and layer_algorithms.py, which both build on it."""
from __future__ import annotations

from typing import Callable

import torch
import torch.nn as nn

from ..accuracy.simulate import LayerMode
from .config import QuantConfig
from .graph import ModelGraph
from .rnn import RNN_TYPES, CalibRnn
from .modes import CalibLayer, ConvGeometry, FloatConv, FoldedBatchNorm, fold_bn


def layer_weights(model: nn.Module, name: str, graph: ModelGraph, config: QuantConfig):
    """The (weight, bias, folded BatchNorm) AMCT quantizes for ``name``: Conv+BN folded in FP32 when
    do_fusion allows and the fold stays finite (AMCT skips a non-finite fold with a warning)."""
    mods = dict(model.named_modules())
    m = mods[name]
    if not ConvGeometry.of(m).weighted:
        return None, None, ""                     # AvgPool2d: nothing to fold or quantize
    w, b = m.weight.detach().to(torch.float32), (m.bias.detach().to(torch.float32) if m.bias is not None else None)
    bn = graph.pairs.get(name)
    if bn and config.do_fusion and name not in config.skip_fusion_layers:
        fw, fb = fold_bn(w, b, mods[bn])
        if torch.isfinite(fw).all() and torch.isfinite(fb).all():
            return fw, fb, bn
    return w, b, ""


def capture_modes(model: nn.Module, graph: ModelGraph, config: QuantConfig, names,
                  weight: Callable[[str, torch.Tensor], torch.Tensor] | None = None) -> dict[str, LayerMode]:
    """The FP32 model as AMCT's calibration graph runs it: each of ``names`` a ``CalibLayer`` recording its input
    (weights: ``weight(name, w)`` of the float, BN-folded ``w``; default ``w`` itself), then every remaining
    Conv+BN pair folded (AMCT folds every pair it can, quantized or not). Calibration, sensitivity and the
    report's activation plots all capture through here."""
    mods = dict(model.named_modules())
    modes: dict[str, LayerMode] = {}
    for name in names:
        kind = type(mods[name]).__name__
        if kind in RNN_TYPES:
            modes[name] = CalibRnn(name, kind)
            continue
        w, b, bn = layer_weights(model, name, graph, config)
        modes[name] = CalibLayer(name, ConvGeometry.of(mods[name]), weight(name, w) if weight and w is not None else w,
                                 b)
        if bn:
            modes[bn] = FoldedBatchNorm(into=name)
    for conv in graph.pairs:
        if conv not in modes:
            w, b, bn = layer_weights(model, conv, graph, config)
            if bn:
                modes[conv] = FloatConv(conv, ConvGeometry.of(mods[conv]), w, b, folded_bn=bn)
                modes[bn] = FoldedBatchNorm(into=conv)
    return modes
