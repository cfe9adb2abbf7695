"""The little graph knowledge quantization needs, read from one FP32 run at the engine's level (modules it runs
as one op, function-level ops outside them):

- Conv+BN pairs: a BatchNorm whose input is a conv's output and its only consumer (the condition of AMCT's
  ConvBnFusionPass and ATC's ConvBatchnormFusionPass);
- requant chains: a quantizable layer whose output reaches exactly one other quantizable layer, directly or
  through one ReLU (the pattern ATC fuses into AscendRequant);
- how often each module runs (AMCT does not quantize a module that runs twice: its weights are shared).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

import torch
import torch.nn as nn
from torch.overrides import TorchFunctionMode

from ..accuracy.simulate import STRUCTURAL, atomic_modules, counted_call, op_name

CONV_TYPES = (nn.Conv1d, nn.Conv2d, nn.Conv3d)
BN_TYPES = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
QUANT_TYPES = (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d, nn.AvgPool2d, nn.Linear)
# layers ATC's RequantFusionPass joins (Dequant + ReLU + Quant between two of them): convs and matmuls
REQUANT_TYPES = (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.Linear)


@dataclass
class ModelGraph:
    pairs: dict[str, str] = field(default_factory=dict)        # conv path -> BatchNorm path fed only by it
    not_paired: dict[str, str] = field(default_factory=dict)   # BatchNorm path -> why it cannot be folded
    chains: dict[str, tuple[str, bool]] = field(default_factory=dict)   # layer -> (next layer, through ReLU)
    calls: Counter = field(default_factory=Counter)            # module path -> calls in one forward
    matmuls: list[str] = field(default_factory=list)           # function-level matmul calls: "matmul#<k>"
    order: list[str] = field(default_factory=list)             # atomic module paths in call order
    rnn_without_state: list[str] = field(default_factory=list)  # LSTM/GRU called without an initial state


def read_graph(model: nn.Module, inputs: tuple) -> ModelGraph:
    g = ModelGraph()
    mods = dict(model.named_modules())
    atomic = {name: m for name, (m, _) in atomic_modules(model).items() if name}
    names = {id(m): n for n, m in mods.items()}
    producer: dict[int, str] = {}              # tensor id -> module path, or "relu-fn"
    relu_in: dict[int, int] = {}               # output id of a function-level relu -> its input id
    consumers: dict[int, list[str]] = defaultdict(list)
    keep: list[torch.Tensor] = []              # hold tensors so their ids stay unique during the run
    depth = [0]

    def tensors(args):
        return [a for a in args if isinstance(a, torch.Tensor)]

    def pre(mod, args):
        n = names[id(mod)]
        g.calls[n] += 1
        if isinstance(mod, (nn.LSTM, nn.GRU)) and len(args) < 2 and n not in g.rnn_without_state:
            g.rnn_without_state.append(n)
        if depth[0] == 0:
            for t in tensors(args):
                consumers[id(t)].append(n)
        depth[0] += 1

    def post(mod, args, out):
        depth[0] -= 1
        n = names[id(mod)]
        if g.calls[n] == 1 and n not in g.order:
            g.order.append(n)
        if isinstance(out, torch.Tensor):
            producer[id(out)] = n
            out_of.setdefault(n, id(out))
            keep.append(out)
        keep.extend(tensors(args))

    fn_calls: Counter = Counter()

    class Uses(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            name = op_name(func)
            if depth[0] == 0 and counted_call(name, args, kwargs):
                # counted as the engine counts function-level calls (simulate.py ``functions`` keys)
                if name == "matmul" and len(args) >= 2 and all(isinstance(t, torch.Tensor) for t in args[:2]):
                    g.matmuls.append(f"matmul#{fn_calls[name]}")
                fn_calls[name] += 1
            if depth[0] == 0:
                # hold every tensor a function touches: a freed one's id can come back as a later module's
                # output and hand it a stale consumer (a Conv+BN pair then missed at random)
                keep.extend(tensors(list(args) + list(kwargs.values())))
                keep.extend(tensors(out) if isinstance(out, (tuple, list)) else tensors([out]))
            if depth[0] == 0 and name not in STRUCTURAL:
                for t in tensors(list(args) + list(kwargs.values())):
                    consumers[id(t)].append(f"fn:{name}")
                if name in ("relu", "relu_") and isinstance(out, torch.Tensor) and args:
                    relu_in[id(out)] = id(args[0])
                    producer[id(out)] = "relu-fn"
                    keep.append(out)
            return out

    out_of: dict[str, int] = {}                # module path -> id of its (first) output
    handles = []
    for m in atomic.values():
        handles.append(m.register_forward_pre_hook(pre))
        handles.append(m.register_forward_hook(post))
    try:
        with torch.no_grad(), Uses():
            model(*inputs)
    finally:
        for h in handles:
            h.remove()
    in_of: dict[str, int] = {}
    for tid, cons in consumers.items():
        for c in cons:
            in_of.setdefault(c, tid)
    _pairs(g, mods, out_of, in_of, consumers)
    _chains(g, mods, out_of, consumers, producer, relu_in)
    return g


def _pairs(g: ModelGraph, mods, out_of, in_of, consumers) -> None:
    for bn, m in mods.items():
        if not isinstance(m, BN_TYPES) or bn not in in_of:
            continue
        tid = in_of[bn]
        conv = next((n for n, t in out_of.items() if t == tid and isinstance(mods.get(n), CONV_TYPES)), None)
        if conv is None:
            g.not_paired[bn] = "its input is not a conv's output"
        elif g.calls[conv] > 1 or g.calls[bn] > 1:
            g.not_paired[bn] = f"{conv} or {bn} runs more than once"
        elif consumers[tid] != [bn]:
            g.not_paired[bn] = (f"{conv}'s output has {len(consumers[tid])} consumers (the fusion needs the "
                                "BatchNorm alone)")
        elif not (m.affine and m.track_running_stats):
            g.not_paired[bn] = "affine and track_running_stats must be True (AMCT ConvBnFusionPass)"
        elif getattr(mods[conv], "padding_mode", "zeros") != "zeros":
            g.not_paired[bn] = f"{conv} has padding_mode {mods[conv].padding_mode} (the fusion needs zeros)"
        else:
            g.pairs[conv] = bn


def _chains(g: ModelGraph, mods, out_of, consumers, producer, relu_in) -> None:
    quant = {n for n, m in mods.items() if isinstance(m, REQUANT_TYPES) and g.calls[n] == 1}
    relu_out = {v: k for k, v in relu_in.items()}
    for a in quant:
        tid = out_of.get(a)
        if tid is None:
            continue
        node = g.pairs.get(a)                    # a folded BatchNorm is part of its conv
        if node is not None:
            tid = out_of.get(node)
        cons = consumers.get(tid, [])
        through = False
        if len(cons) == 1 and cons[0] == "fn:relu" and tid in relu_out:
            cons, through = consumers.get(relu_out[tid], []), True
        elif len(cons) == 1 and isinstance(mods.get(cons[0]), nn.ReLU):
            cons, through = consumers.get(out_of.get(cons[0]), []), True
        elif len(cons) == 2 and isinstance(mods.get(cons[0]), nn.ReLU) and mods[cons[0]].inplace:
            cons, through = cons[1:], True       # ReLU(inplace=True): the same tensor flows on
        if len(cons) == 1 and cons[0] in quant:
            g.chains[a] = (cons[0], through)
