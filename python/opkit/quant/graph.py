"""The little graph knowledge quantization needs, read from one FP32 run: which BatchNorm takes a conv's output
directly (and is that output's only consumer: AMCT's and ATC's Conv+BN fusion condition), and how often each
module is called (AMCT does not quantize a module that runs twice: its weights are shared)."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import torch
import torch.nn as nn
from torch.overrides import TorchFunctionMode

from ..accuracy.simulate import STRUCTURAL, op_name

CONV_TYPES = (nn.Conv1d, nn.Conv2d, nn.Conv3d)
BN_TYPES = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)


@dataclass
class ModelGraph:
    pairs: dict[str, str] = field(default_factory=dict)        # conv path -> BatchNorm path fed only by it
    not_paired: dict[str, str] = field(default_factory=dict)   # BatchNorm path -> why it cannot be folded
    calls: Counter = field(default_factory=Counter)            # module path -> calls in one forward
    order: list[str] = field(default_factory=list)             # module paths in first-call order


class _Uses(TorchFunctionMode):
    """Counts, per tracked tensor, the non-structural torch calls that take it as an argument."""

    def __init__(self, tracked: dict[int, str]):
        super().__init__()
        self.tracked = tracked
        self.uses: Counter = Counter()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if op_name(func) not in STRUCTURAL:
            for a in list(args) + list(kwargs.values()):
                if isinstance(a, torch.Tensor) and id(a) in self.tracked:
                    self.uses[id(a)] += 1
        return func(*args, **kwargs)


def read_graph(model: nn.Module, inputs: tuple) -> ModelGraph:
    g = ModelGraph()
    mods = dict(model.named_modules())
    names = {id(m): n for n, m in mods.items()}
    conv_out: dict[int, str] = {}
    keep: list[torch.Tensor] = []          # hold the outputs so their ids stay unique during the run
    bn_in: dict[str, int] = {}

    def post(mod, args, out):
        n = names[id(mod)]
        g.calls[n] += 1
        if g.calls[n] == 1:
            g.order.append(n)
        if isinstance(mod, CONV_TYPES) and isinstance(out, torch.Tensor):
            conv_out[id(out)] = n
            keep.append(out)

    def pre(mod, args):
        if isinstance(mod, BN_TYPES) and args and isinstance(args[0], torch.Tensor):
            bn_in[names[id(mod)]] = id(args[0])

    handles = [m.register_forward_hook(post) for m in mods.values()]
    handles += [m.register_forward_pre_hook(pre) for m in mods.values() if isinstance(m, BN_TYPES)]
    uses = _Uses(conv_out)
    try:
        with torch.no_grad(), uses:
            model(*inputs)
    finally:
        for h in handles:
            h.remove()
    for bn, tid in bn_in.items():
        m = mods[bn]
        conv = conv_out.get(tid)
        if conv is None:
            g.not_paired[bn] = "its input is not a conv's output"
        elif g.calls[conv] > 1 or g.calls[bn] > 1:
            g.not_paired[bn] = f"{conv} or {bn} runs more than once"
        elif uses.uses[tid] != 1:
            g.not_paired[bn] = f"{conv}'s output has {uses.uses[tid]} consumers (fusion needs the BatchNorm alone)"
        elif not (m.affine and m.track_running_stats):
            g.not_paired[bn] = "affine and track_running_stats must be True (AMCT ConvBnFusionPass)"
        elif getattr(mods[conv], "padding_mode", "zeros") != "zeros":
            g.not_paired[bn] = f"{conv} has padding_mode {mods[conv].padding_mode} (fusion needs zeros)"
        else:
            g.pairs[conv] = bn
    return g
