"""AMCT's ADA (AdaRound) weight quantization in the classic flow: learn, per weight, whether to round up or down.

Written from hicann/amct (commit in docs/facts/quantization-facts.md, "ADA"), paths relative to
amct_pytorch/classic/graph_based/amct_pytorch/: the weight scale is found by KL divergence on a 512-bin histogram
(ada_round/kl_divergence.py), each weight is ``(floor(W / s) + h(alpha)) * s`` with the rectified sigmoid
``h = clamp(sigmoid(alpha) * 1.2 - 0.1, 0, 1)`` (custom_op/ada_round_quant.py), and ``alpha`` is trained layer
by layer in graph order with Adam on ``|| act(layer_q(x_q)) - act(layer(x)) ||^2`` plus an annealed rounding
regularizer (ada_round/ada_round_optimize.py). The layer's input x_q comes from the model with the earlier
layers' learned (soft) weights, its target from the float model; the activation that follows the layer (ReLU,
GELU, ...) is part of the loss.

    params = AdaParams(num_iteration=10000)                    # AMCT's defaults
    res = ada_round(model, calib, {"conv1": params, "fc": params}, seed=0)
    res.weights["conv1"], res.scales["conv1"]                  # learned fake-quant weight, KL scale

Training draws its minibatches (32 samples) with torch.randperm from the global generator, as AMCT does; with the
same seed and the same inputs, opkit's learned weights equal AMCT's (tests/test_ada_round.py).
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from ..errors import OpkitError

GAMMA, ZETA, ANNEAL = -0.1, 1.1, 0.5                   # custom_op/ada_round_quant.py:24-26
HIST_BINS, NUM_SEARCH, QUANT_BINS = 512, 20, 255       # ada_round/kl_divergence.py:27-29
FLT_EPSILON = 1.192092896e-7
SUPPORTED = ("Conv2d", "ConvTranspose2d", "Linear")    # ada_round_quant.py:77-99


@dataclass(frozen=True)
class AdaParams:
    """AMCT's ADAquantize (proto/calibration_config_pytorch.proto:56-63), with its defaults."""
    num_iteration: int = 10000
    reg_param: float = 0.01
    beta_range: tuple[float, float] = (20.0, 2.0)
    warm_start: float = 0.2
    channel_wise: bool = True


# -- the KL weight scale -----------------------------------------------------------------------------------------

def _condition(hist: list[float]) -> list[float]:
    zeros = sum(1 for v in hist if v == 0)
    eps_nz = 0.0001 * zeros / (len(hist) - zeros)
    if eps_nz >= 1:
        return hist
    return [0.0001 if v == 0 else v + eps_nz for v in hist]


def _kl(p, q) -> float:
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    p, q = p / np.sum(p), q / np.sum(q)
    return np.sum(p * np.log(p / q))


def _merged(p: list[float]) -> list[float]:
    """The window's histogram as 255 quantization bins, each bin's mass spread over its non-empty source bins."""
    q = [0.0] * len(p)
    width = len(p) / QUANT_BINS
    for j in range(QUANT_BINS):
        lo, hi = math.ceil(j * width), len(p) if j == QUANT_BINS - 1 else math.ceil((j + 1) * width)
        nonzero = sum(p[k] != 0 for k in range(lo, hi))
        if nonzero:
            mean = sum(p[lo:hi]) / nonzero
            for k in range(lo, hi):
                if p[k] != 0:
                    q[k] = mean
    return q


def kl_scale(w: torch.Tensor) -> torch.Tensor:
    """One scale for ``w`` (kl_divergence.py:61-141): a symmetric 512-bin histogram on [-max|w|, max|w|]; for
    i = 0..19 the window [i, 512 - i) with the tails added to its end bins vs its 255-bin requantization;
    the lowest KL divergence (first on ties) gives scale = -(window start) / 128."""
    t = w.flatten()
    hi = t.abs().max()
    if hi == -hi:
        return torch.tensor(1)
    hist = torch.histc(t.to(torch.float32), bins=HIST_BINS, min=-hi, max=hi).tolist()
    best, scale = float("inf"), torch.tensor(1)
    for i in range(NUM_SEARCH):
        p = hist[i:HIST_BINS - i]
        p[0] += sum(hist[:i])
        p[-1] += sum(hist[HIST_BINS - i:])
        q = _merged(p)
        kl = _kl(_condition(p), _condition(q))
        if kl < best:
            best, scale = kl, (-hi + i * ((hi - -hi) / HIST_BINS)) / -128
    return scale


def kl_scales(w: torch.Tensor, channel_wise: bool) -> torch.Tensor:
    """Per output channel (row 0) or one for the tensor, float32; below FLT_EPSILON -> 1 (kl_divergence.py:32-58)."""
    rows = [w[i] for i in range(w.shape[0])] if channel_wise else [w]
    scale = torch.zeros(len(rows))
    for i, r in enumerate(rows):
        scale[i] = kl_scale(r)
    return torch.where(scale < FLT_EPSILON, torch.tensor(1.0), scale)


# -- the AdaRound layer ----------------------------------------------------------------------------------------

class AdaRoundLayer(nn.Module):
    """A Conv2d / ConvTranspose2d / Linear whose weight is (floor(W / s) + h(alpha)) * s while ``soft`` is on."""

    def __init__(self, module: nn.Module, params: AdaParams):
        super().__init__()
        self.module, self.params, self.soft = module, params, False
        self.weight = module.weight
        scale = kl_scales(module.weight.detach(), params.channel_wise)
        self.record_scale = scale
        kind = type(module).__name__
        # the shapes AMCT gives the scale (ada_round_quant.py:136-157); a Linear keeps [n], broadcast over Cin
        if kind == "Conv2d":
            scale = scale.reshape(-1, 1, 1, 1)
        elif kind == "ConvTranspose2d":
            scale = scale.reshape(1, -1, 1, 1)
            if module.groups > 1 and params.channel_wise:
                cin, cout_g = module.weight.shape[0], module.weight.shape[1]
                scale = scale.reshape(module.groups, cout_g, 1, 1).repeat_interleave(cin // module.groups, dim=0)
        self.scale = scale
        # AMCT builds AdaRoundQuant before it writes W * f into the layer (weight_calibration.py:396-425), so with
        # DMQ alpha starts from the unbalanced weight's fractions, then rounds the balanced one
        w = getattr(module, "dmq_unbalanced_weight", self.weight) / scale
        diff = w - torch.floor(w)
        self.alpha = nn.Parameter(-torch.log((ZETA - GAMMA) / (diff - GAMMA) - 1), requires_grad=True)

    def h(self) -> torch.Tensor:
        return torch.clamp(torch.sigmoid(self.alpha) * (ZETA - GAMMA) + GAMMA, 0, 1)

    def quantized_weight(self) -> torch.Tensor:
        q = torch.clamp(torch.floor(self.weight / self.scale) + self.h(), -128, 127)
        return (q * self.scale).to(dtype=self.weight.data.dtype)

    def forward(self, x):
        m = self.module
        f = getattr(m, "dmq_factor", None)     # DMQ balanced (opkit.quant.dmq): AMCT divides the input here
        if f is not None:
            x = x / (f.reshape(1, -1, 1, 1) if type(m).__name__ != "Linear" else f)
        w = self.quantized_weight() if self.soft else self.weight.data
        kind = type(m).__name__
        if kind == "Conv2d":
            return F.conv2d(x, w, m.bias, m.stride, m.padding, m.dilation, m.groups)
        if kind == "ConvTranspose2d":
            return F.conv_transpose2d(x, w, m.bias, m.stride, m.padding, m.output_padding, m.groups, m.dilation)
        return F.linear(x, w, m.bias)


# -- training -----------------------------------------------------------------------------------------------------

def _beta(p: AdaParams, it: int) -> float:
    """Cosine decay from beta_range[0] to [1] after the warm start (ada_round_optimize.py:179-201)."""
    warm = p.warm_start * p.num_iteration
    rel = (it - warm) / (p.num_iteration - warm)
    start, end = p.beta_range
    return end + ANNEAL * (start - end) * (1 + np.cos(rel * np.pi))


def _round_loss(layer: AdaRoundLayer, it: int):
    p = layer.params
    if it < p.num_iteration * p.warm_start:
        return 0
    return p.reg_param * torch.add(1, -(torch.add(2 * layer.h(), -1).abs()).pow(_beta(p, it))).sum()


class _Stop(Exception):
    pass


def _capture(model: nn.Module, layer: nn.Module, x: torch.Tensor, output: bool) -> torch.Tensor:
    """The layer's input or output on ``x``; the forward stops there (ada_round_data_manager.py)."""
    got = []

    def hook(mod, args, out):
        got.append((out if output else args[0]).detach())
        raise _Stop
    h = layer.register_forward_hook(hook)
    try:
        model(x)
    except _Stop:
        pass
    finally:
        h.remove()
    return got[0]


def _train(model, layers: dict[str, AdaRoundLayer], name: str, act, x: torch.Tensor) -> None:
    layer = layers[name]
    for m in layers.values():
        m.soft = False
    target = _capture(model, layer, x, output=True)
    if act is not None:
        target = act(target)
    for m in layers.values():
        m.soft = True
    with torch.no_grad():
        inputs = _capture(model, layer, x, output=False)
    opt = torch.optim.Adam([layer.alpha])
    for it in range(layer.params.num_iteration):
        idx = torch.randperm(inputs.size(0))[:32]
        opt.zero_grad()
        y = layer(inputs[idx])
        if act is not None:
            y = act(y)
        loss = torch.norm(y - target[idx], p="fro", dim=1).pow(2).mean() + _round_loss(layer, it)
        if not torch.isfinite(loss):
            raise OpkitError(f"ADA on {name}: the loss is inf or nan (check the layer's activations)")
        loss.backward()
        opt.step()


@dataclass
class AdaResult:
    weights: dict[str, torch.Tensor] = field(default_factory=dict)   # learned fake-quant weights
    scales: dict[str, torch.Tensor] = field(default_factory=dict)    # KL weight scales (the record's scale_w)
    model: nn.Module | None = None                                    # a copy with the learned weights


def ada_round(model: nn.Module, x: torch.Tensor, layers: dict[str, AdaParams], activations=None,
              seed: int | None = None) -> AdaResult:
    """Learn the rounding of ``layers`` (in the model's call order) on the inputs ``x`` (AMCT: the input_data
    given to quantize_model). ``activations``: layer -> the activation module that follows it (None: found from
    the model's graph, :func:`following_activations`). BatchNorm must already be folded. ``model`` is copied."""
    model = copy.deepcopy(model)
    mods = dict(model.named_modules())
    for n in layers:
        if type(mods.get(n)).__name__ not in SUPPORTED:
            raise OpkitError(f"ADA on {n!r}: not a {'/'.join(SUPPORTED)} layer of the model (AMCT's AdaRoundQuant)")
    acts = following_activations(model, list(layers)) if activations is None else activations
    order = [n for n, _ in model.named_modules() if n in layers]
    order = _call_order(model, order, x)
    ada = {n: AdaRoundLayer(mods[n], layers[n]) for n in order}
    for n, m in ada.items():
        _set(model, n, m)
    if seed is not None:
        torch.manual_seed(seed)
    model.train()
    for n in order:
        _train(model, ada, n, acts.get(n), x)
    model.eval()
    res = AdaResult()
    for n, m in ada.items():
        m.soft = False
        with torch.no_grad():
            res.weights[n] = m.quantized_weight().detach()
        res.scales[n] = m.record_scale
        m.module.weight.data = res.weights[n]
        _set(model, n, m.module)
    res.model = model
    return res


def _set(model: nn.Module, name: str, module: nn.Module) -> None:
    parent, _, leaf = name.rpartition(".")
    setattr(model.get_submodule(parent) if parent else model, leaf, module)


def _call_order(model: nn.Module, names: list[str], x: torch.Tensor) -> list[str]:
    seen: list[str] = []
    mods = dict(model.named_modules())
    hooks = [mods[n].register_forward_pre_hook(lambda m, a, n=n: seen.append(n) if n not in seen else None)
             for n in names]
    try:
        with torch.no_grad():
            model(x[:1])
    finally:
        for h in hooks:
            h.remove()
    return seen + [n for n in names if n not in seen]


_ACT_MODULES = (nn.ReLU, nn.ReLU6, nn.Sigmoid, nn.Tanh, nn.GELU, nn.LeakyReLU)
_ACT_FUNCS = {torch.relu: nn.ReLU, F.relu: nn.ReLU, torch.sigmoid: nn.Sigmoid, torch.tanh: nn.Tanh,
              F.relu6: nn.ReLU6, F.gelu: nn.GELU}


def following_activations(model: nn.Module, names: list[str]) -> dict[str, nn.Module | None]:
    """The activation each layer feeds alone (ada_round_groups.py:227-257: ReLU, ReLU6, Sigmoid, Tanh, GELU,
    LeakyReLU), read from a torch.fx trace; a layer whose output has other or several consumers: None."""
    try:
        gm = torch.fx.symbolic_trace(model)
    except Exception as e:                                  # noqa: BLE001 -- fx cannot trace every model
        raise OpkitError(f"ADA: cannot trace the model to find the activation after each layer ({e}); "
                         "pass activations={layer: module or None}") from e
    mods = dict(gm.named_modules())
    out = {}
    for node in gm.graph.nodes:
        if node.op != "call_module" or node.target not in names:
            continue
        users = list(node.users)
        while len(users) == 1 and users[0].op == "call_module" and isinstance(mods[users[0].target], nn.Identity):
            users = list(users[0].users)       # a folded BatchNorm left as Identity: ONNX drops it for AMCT
        act = None
        if len(users) == 1:
            u = users[0]
            if u.op == "call_module" and type(mods[u.target]) in _ACT_MODULES:
                act = copy.deepcopy(mods[u.target])
            elif u.op == "call_function" and u.target in _ACT_FUNCS:
                act = _ACT_FUNCS[u.target]()
            elif u.op == "call_method" and u.target in ("relu", "sigmoid", "tanh"):
                act = {"relu": nn.ReLU, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh}[u.target]()
        out[node.target] = act
    return out
