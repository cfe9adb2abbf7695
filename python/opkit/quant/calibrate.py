"""Calibration as AMCT runs it: ARQ on the (BN-folded) weights, then ``batch_num`` forward passes of the FP32 model
with fake-quantized weights, recording each quantized layer's input; IFMR on all of it, or HFMG on a histogram
merged batch by batch. One engine run per batch (opkit/accuracy/simulate.py with ``CalibLayer`` modes)."""
from __future__ import annotations

import hashlib
from types import SimpleNamespace
from typing import Callable

import numpy as np
import torch
import torch.nn as nn

from ..accuracy.simulate import Simulator
from ..errors import OpkitError
from .algorithms import Histogram, arq, hfmg, ifmr
from .config import IFMR_DEFAULTS, QuantConfig
from .layer_algorithms import calib_divisor, calibrate_all, prepare, weight_scale
from .graph import ModelGraph
from .modes import CalibMatmul, ConvGeometry
from .rnn import CalibRnn
from .rnn import weight_scales as rnn_weight_scales
from .capture import capture_modes
from .variant import LayerRecord


# True: a calibration reuses the IFMR result of a layer input it has searched before -- the same bytes, the same
# parameters -- from an earlier calibration of the same run (IfmrMemo). False: IFMR runs on every layer of every
# calibration, as before (tests and benchmarks/bench_quant_algos_search.py compare the two).
REUSE_IFMR = True


class IfmrMemo:
    """IFMR results by their input, for the calibrations of one run: a calibration forward is always run, and a
    layer whose collected input is byte for byte one already searched with the same parameters (its upstream
    layers calibrated alike: the verifying recalibration, the strategy table's configs) gets the same result
    without the 60-candidate search. Keyed by a BLAKE2b digest of the float32 bytes (holding the inputs
    themselves would keep every calibration's activations in memory)."""

    def __init__(self):
        self._done: dict[tuple, object] = {}
        self.hits = self.misses = 0

    def __call__(self, data: torch.Tensor, *args):
        if not REUSE_IFMR:
            return ifmr(data, *args)
        x = data.detach().reshape(-1).to(torch.float32).contiguous()
        key = (args, x.numel(), hashlib.blake2b(x.numpy().view(np.uint8), digest_size=32).digest())
        got = self._done.get(key)
        if got is None:
            got = self._done[key] = ifmr(x, *args)
            self.misses += 1
        else:
            self.hits += 1
        return got


def split_batches(calib: torch.Tensor, batch_num: int) -> list[torch.Tensor]:
    """The calibration set as ``batch_num`` batches (AMCT runs the user's loop batch_num times)."""
    n = calib.shape[0]
    if batch_num > n:
        raise OpkitError(f"batch_num {batch_num} is larger than the calibration set ({n} samples)")
    size = -(-n // batch_num)
    return [calib[i:i + size] for i in range(0, n, size)][:batch_num]


def calibrate(model: nn.Module, calib: torch.Tensor, config: QuantConfig, graph: ModelGraph,
              log: Callable[[str], None] | None = None, chunk: int = 64, matmuls=(),
              memo: IfmrMemo | None = None) -> dict[str, LayerRecord]:
    """Per quantized layer: ARQ weight scales and IFMR/HFMG activation scale/offset (an AMCT record); with
    ``matmuls`` ("matmul#k" keys, a what-if), IFMR on both operands of those function-level matmuls
    (left asymmetric as AMCT's activations, right symmetric: the cube takes an offset on one side only).
    ``memo``: IFMR results shared with the other calibrations of one run (IfmrMemo)."""
    log = log or (lambda s: None)
    search = memo if memo is not None else ifmr
    weights, in_scales = {}, {}
    batches = split_batches(calib, config.batch_num)
    # DMQ & co (layer_algorithms.py): what they record from the first calibration forward, before ARQ runs
    extra = calibrate_all(model, graph, config, batches[0])
    pre = {n: LayerRecord(0.0, 0, [], [], **fields) for n, fields in extra.items()}
    mods = dict(model.named_modules())

    def fake_quant_weight(name: str, w: torch.Tensor) -> torch.Tensor:      # ARQ on the (BN-folded) weights
        lc = config.layers[name]
        geo = ConvGeometry.of(mods[name])
        if geo.out_axis() == 1:                 # ConvTranspose1d/2d
            # ARQ per output channel on the weight as [C_out, C_in, k...] (AMCT adjust_deconv_weight_shape); the
            # calibration graph keeps the FLOAT weights: AMCT rebuilds them from the unquantized tensor
            # (weight_calibration.py:419-424), so the layers after it calibrate on a float ConvTranspose2d
            weights[name] = arq(geo.out_in(w), lc.wts["num_bits"], lc.channel_wise)
            return w
        if name in pre:
            w, in_scales[name] = prepare(mods[name], w, pre[name])
            fixed = weight_scale(pre[name])
            if fixed is not None:      # ADA: calibrated through its learned weights as they are (AMCT does)
                weights[name] = SimpleNamespace(scale=torch.tensor(fixed, dtype=torch.float32))
                return w
        wq = weights[name] = arq(w, lc.wts["num_bits"], lc.channel_wise)
        return wq.codes * (wq.scale.reshape([-1] + [1] * (w.dim() - 1)) if wq.scale.numel() > 1
                           else wq.scale.reshape([]))
    modes = capture_modes(model, graph, config, config.quant_layers, fake_quant_weight)
    for name in config.quant_layers:
        if not isinstance(modes[name], CalibRnn) and not ConvGeometry.of(mods[name]).weighted:
            # AvgPool2d: weight scale 1.0, offset 0, no calibration (weight_calibration.py:207-209, 262-275)
            weights[name] = SimpleNamespace(scale=torch.ones(1, dtype=torch.float32))
    for name, scale in in_scales.items():
        div = calib_divisor(mods[name], pre[name])
        if div is not None:
            modes[name].in_divisor = div
        else:
            modes[name].in_scale = scale
    hists = {n: Histogram(config.layers[n].act["num_of_bins"]) for n in config.quant_layers
             if config.layers[n].act["act_algo"] == "hfmg"}
    hists_h = {n: Histogram(h.nbins) for n, h in hists.items() if isinstance(modes[n], CalibRnn)}
    fmodes = {k: CalibMatmul(k) for k in matmuls}
    sim = Simulator(None, layers=modes, functions=fmodes)
    for i, batch in enumerate(batches):
        log(f"calibration batch {i + 1}/{len(batches)} ({batch.shape[0]} samples)")
        for j in range(0, batch.shape[0], chunk):
            sim.run(model, (batch[j:j + chunk],), record=False)
        for name, h in hists.items():          # HFMG merges one histogram per batch
            h.add(torch.cat([t.reshape(-1) for t in modes[name].inputs]))
            modes[name].inputs.clear()
        for name, h in hists_h.items():        # an RNN's hidden inputs: their own histogram (cali_quant.py:288)
            h.add(torch.cat([t.reshape(-1) for t in modes[name].hidden]))
            modes[name].hidden.clear()
    records = {name: _layer_record(name, config, modes[name], mods[name], hists.get(name), hists_h.get(name),
                                   weights.get(name), extra.get(name, {}), search)
               for name in config.quant_layers}
    records.update(_matmul_records(fmodes, config.activation_offset))
    return records


def _layer_record(name: str, config: QuantConfig, mode, module, hist, hist_h, wq, extra: dict,
                  search=ifmr) -> LayerRecord:
    """One layer's record from its calibration inputs: HFMG on the merged histogram or IFMR on the inputs, the
    ARQ weight scales (an RNN: _rnn_record)."""
    lc = config.layers[name]
    if mode.calls == 0:
        raise OpkitError(f"layer {name} never ran on the calibration data: it cannot be calibrated")
    bits = lc.act["num_bits"]
    asym = lc.asymmetric(config.activation_offset)
    if hist is not None:
        aq = hfmg(hist, bits, asym)
        data_min, data_max, clipped = hist.lo, hist.hi, _hist_clipped(hist, aq.clip_min, aq.clip_max)
    else:
        data = torch.cat([t.reshape(-1) for t in mode.inputs])
        mode.inputs.clear()
        a = lc.act
        aq = search(data, bits, asym, a["max_percentile"], a["min_percentile"], tuple(a["search_range"]),
                    a["search_step"])
        data_min, data_max = float(data.min()), float(data.max())
        clipped = float(((data < aq.clip_min) | (data > aq.clip_max)).float().mean())
    if isinstance(mode, CalibRnn):
        return _rnn_record(module, mode, lc, asym, hist_h, aq, data_min, data_max, clipped)
    return LayerRecord(aq.scale, aq.offset, [float(s) for s in wq.scale], [0] * wq.scale.numel(),
                       bits, lc.wts["num_bits"], aq.algo, aq.clip_min, aq.clip_max, aq.init_min,
                       aq.init_max, data_min, data_max, clipped, **extra)


def _matmul_records(fmodes: dict, activation_offset: bool) -> dict[str, LayerRecord]:
    """The what-if records of function-level matmuls: IFMR on both operands, left as AMCT's activations, right
    symmetric."""
    d = IFMR_DEFAULTS
    args = (d["max_percentile"], d["min_percentile"], tuple(d["search_range"]), d["search_step"])
    records = {}
    for key, mode in fmodes.items():
        if not mode.inputs:
            raise OpkitError(f"{key} never ran on the calibration data: it cannot be calibrated")
        a = torch.cat([t[0].reshape(-1) for t in mode.inputs])
        b = torch.cat([t[1].reshape(-1) for t in mode.inputs])
        qa, qb = ifmr(a, 8, activation_offset, *args), ifmr(b, 8, False, *args)
        records[key] = LayerRecord(qa.scale, qa.offset, [qb.scale], [0], 8, 8, "ifmr", qa.clip_min, qa.clip_max,
                                   qa.init_min, qa.init_max, float(a.min()), float(a.max()),
                                   float(((a < qa.clip_min) | (a > qa.clip_max)).float().mean()))
        mode.inputs.clear()
    return records


def _rnn_record(module, mode: CalibRnn, lc, asym: bool, hist, aq, data_min, data_max, clipped) -> LayerRecord:
    """An LSTM/GRU's record (quant/rnn.py): x's factors as any layer's, the hidden inputs' by the same algorithm
    and parameters, ARQ scales of both weights in ONNX's gate order."""
    bits, a = lc.act["num_bits"], lc.act
    if hist is not None:
        hq = hfmg(hist, bits, asym)
    else:
        h = torch.cat([t.reshape(-1) for t in mode.hidden])
        mode.hidden.clear()
        hq = ifmr(h, bits, asym, a["max_percentile"], a["min_percentile"], tuple(a["search_range"]), a["search_step"])
    scale_w, scale_r = rnn_weight_scales(module, lc.wts["num_bits"], lc.channel_wise)
    return LayerRecord(aq.scale, aq.offset, scale_w, [0] * len(scale_w), bits, lc.wts["num_bits"], aq.algo,
                       aq.clip_min, aq.clip_max, aq.init_min, aq.init_max, data_min, data_max, clipped,
                       scale_h=hq.scale, offset_h=hq.offset, scale_r=scale_r)


def _hist_clipped(h: Histogram, lo: float, hi: float) -> float:
    """Share of the histogram's samples in bins wholly outside [lo, hi]."""
    import numpy as np
    width = (h.hi - h.lo) / h.nbins
    edges = h.lo + width * np.arange(h.nbins + 1)
    out = (edges[1:] <= lo) | (edges[:-1] >= hi)
    total = float(h.counts.sum())
    return float(h.counts[out].sum()) / total if total else 0.0
