"""LSTM and GRU as AMCT's classic flow quantizes them (hicann/amct 2be20daf, amct_pytorch/classic/graph_based):

- what it takes: one layer, one direction, and the initial state passed in and derived from the model's input
  (configuration/check.py:859-916 check_lstm_limit, 993-1009 check_gru_limit; custom_op/cali_quant.py:90-95
  raises without ``hx``); the calibration reads the hidden inputs batch-first (cali_quant.py:110-115 slices
  ``out[:, :-1]``), so opkit takes ``batch_first=True`` only;
- calibration: the FLOAT module runs (only the ONNX graph gets the fake-quantized weights,
  optimizer/weight_calibration.py:280-350 ``_rnn_process``); IFMR/HFMG on the input x -> scale_d/offset_d and
  on the hidden state each step reads, h0 then h_1..h_{T-1} -> scale_h/offset_h (cali_quant.py:110-150);
- weights: ARQ on weight_ih_l0 -> scale_w and weight_hh_l0 -> scale_r, recorded in ONNX's gate order
  (LSTM i,o,f,c; GRU z,r,h: weight_calibration.py:43, 152-169);
- the fake-quant model: Quant + AntiQuant on x and on the initial h (insert_rnn_fake_quant_pass.py:60-95;
  module/quant_module.py: Mul 1/scale, Round, Add offset, Clip, Sub offset, then Mul scale), the fake-quantized
  weights, the RNN itself in FP32; c0 and the biases are not quantized.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn as nn

from ..accuracy.simulate import LayerMode
from ..errors import OpkitError
from .algorithms import arq, quantize
from .modes import amct_fake_quant

F32 = torch.float32
RNN_TYPES = ("LSTM", "GRU")
ONNX_ORDER = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2]}     # torch's gate blocks, taken in ONNX's order
WEIGHTS = ("weight_ih_l0", "weight_hh_l0")


def _blocks(v: torch.Tensor, kind: str, order: list[int]) -> torch.Tensor:
    parts = torch.chunk(v, len(order), dim=0)
    return torch.cat([parts[i] for i in order], dim=0)


def to_onnx(v: torch.Tensor, kind: str) -> torch.Tensor:
    return _blocks(v, kind, ONNX_ORDER[kind])


def from_onnx(v: torch.Tensor, kind: str) -> torch.Tensor:
    inverse = sorted(range(len(ONNX_ORDER[kind])), key=ONNX_ORDER[kind].__getitem__)
    return _blocks(v, kind, inverse)


def weight_scales(m: nn.Module, bits: int, channel_wise: bool) -> tuple[list[float], list[float]]:
    """ARQ on weight_ih_l0 and weight_hh_l0 (rows = gate outputs): (scale_w, scale_r) in ONNX's gate order."""
    kind = type(m).__name__
    out = []
    for wn in WEIGHTS:
        s = arq(getattr(m, wn).detach().to(F32), bits, channel_wise).scale
        out.append([float(v) for v in (to_onnx(s, kind) if s.numel() > 1 else s)])
    return out[0], out[1]


def fake_weights(m: nn.Module, scale_w: list[float], scale_r: list[float], bits: int) -> dict[str, torch.Tensor]:
    """The fake-quantized weight_ih_l0 / weight_hh_l0 (codes x scale, FP32) from the record's scales."""
    kind = type(m).__name__
    out = {}
    for wn, scales in zip(WEIGHTS, (scale_w, scale_r)):
        w = getattr(m, wn).detach().to(F32)
        s = torch.tensor(scales, dtype=F32)
        s = from_onnx(s, kind).reshape(-1, 1) if s.numel() > 1 else s.reshape([])
        out[wn] = quantize(w, s, 0, bits) * s
    return out


def _state(name: str, kind: str, args: tuple, kwargs: dict):
    x = args[0]
    hx = args[1] if len(args) > 1 else kwargs.get("hx")
    if hx is None:
        # AMCT's CaliQuant (cali_quant.py:90-93); its create_quant_config leaves such an RNN out altogether
        raise OpkitError(f"{name}: hx is necessary input params of RNN op {kind} (AMCT quantizes an RNN whose "
                         "initial state is passed in; set quant_enable false for it)")
    return x, hx


@dataclass
class CalibRnn(LayerMode):
    """AMCT's calibration graph for an LSTM/GRU: the float module runs; x and the hidden inputs are recorded."""
    name: str
    kind: str
    inputs: list = field(default_factory=list)
    hidden: list = field(default_factory=list)
    calls: int = 0
    last: tuple = ()                     # the last call's (x, hx) as given (search.sensitivity reruns it)

    @property
    def op_type(self) -> str:
        return self.kind.lower()

    def run(self, sim, module, forward, args, kwargs):
        x, hx = _state(self.name, self.kind, args, kwargs)
        out = forward(*args, **kwargs)
        h0 = hx if self.kind == "GRU" else hx[0]
        self.calls += 1
        self.last = (x, hx)
        self.inputs.append(x.detach().to(F32).clone())
        self.hidden.append(torch.cat((h0.permute(1, 0, 2), out[0][:, :-1, :]), dim=1).detach().to(F32).clone())
        return out, F32, "float32", "AMCT calibration (float RNN weights)"


@dataclass
class QuantRnn(LayerMode):
    """An LSTM/GRU as AMCT's fake-quant model runs it (module docstring). Under a deployed policy the same FP32
    fake-quant arithmetic: the device's quantized DynamicRNN kernel is not modelled (its label says so)."""
    name: str
    kind: str
    weights: dict                         # weight_ih_l0 / weight_hh_l0, fake-quantized, FP32
    scale_d: float
    offset_d: int
    scale_h: float
    offset_h: int
    act_bits: int = 8
    wts_bits: int = 8

    @property
    def op_type(self) -> str:
        return self.kind.lower()

    def _fq(self, t: torch.Tensor, scale: float, offset: int) -> torch.Tensor:
        q = amct_fake_quant(t, scale, offset, self.act_bits)
        return q.sub_(offset).mul_(torch.tensor(scale, dtype=F32))

    def run(self, sim, module, forward, args, kwargs):
        x, hx = _state(self.name, self.kind, args, kwargs)
        xq = self._fq(x, self.scale_d, self.offset_d)
        if self.kind == "GRU":
            hq = self._fq(hx, self.scale_h, self.offset_h)
        else:
            hq = (self._fq(hx[0], self.scale_h, self.offset_h), hx[1].to(F32))
        out = _with_weights(module, self.weights, forward, xq, hq)
        device = sim.policy is not None and not sim.policy.fake_quant
        kernel = f"AMCT fake-quant {self.kind} int{self.act_bits}" + (
            " (device RNN kernel not modelled)" if device else "")
        return out, F32, f"int{self.act_bits}", kernel


def _with_weights(module: nn.Module, weights: dict, forward, *args):
    """``forward(*args)`` (the module's own, not the engine's wrapper) with ``weights`` in place of its parameters
    of those names, FP32 (the parameters' storage is swapped for the call: nn.LSTM holds the Parameter objects
    in its flat weight list)."""
    params = dict(module.named_parameters())
    saved = {k: p.data for k, p in params.items()}
    try:
        for k, p in params.items():
            p.data = weights[k] if k in weights else p.data.to(F32)
        return forward(*args)
    finally:
        for k, p in params.items():
            p.data = saved[k]
