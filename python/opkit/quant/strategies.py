"""The strategy table's cost columns: weight memory as deployed and a modelled latency (opkit/roofline.py), from
one profiling run of the FP32 model on a single sample: every op the engine sees (modules it runs as one op,
function-level ops outside them) with its elements in and out and, for conv/linear, its multiply-adds."""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.overrides import TorchFunctionMode

from .. import roofline
from ..accuracy.simulate import atomic_modules, counted_call, op_name
from .modes import FloatConv, FoldedBatchNorm, QuantLayer

CUBE = ("conv1d", "conv2d", "conv3d", "linear", "matmul", "mm", "bmm", "addmm")


@dataclass
class Op:
    name: str            # module path, or "<op>@<enclosing module>" for a function-level op
    op_type: str
    in_elems: int
    out_elems: int
    weight_elems: int = 0
    macs: int = 0


def _numel(obj) -> int:
    if isinstance(obj, torch.Tensor):
        return obj.numel() if obj.is_floating_point() else 0
    if isinstance(obj, (list, tuple)):
        return sum(_numel(o) for o in obj)
    if isinstance(obj, dict):
        return sum(_numel(o) for o in obj.values())
    return 0


def _macs(m: nn.Module, out: torch.Tensor) -> int:
    if isinstance(m, nn.Linear):
        return out.numel() * m.in_features
    if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
        k = 1
        for s in m.kernel_size:
            k *= s
        return out.numel() * (m.in_channels // m.groups) * k
    return 0


def profile_ops(model: nn.Module, sample: torch.Tensor) -> list[Op]:
    """The ops of one forward on ``sample`` (a batch of one), in call order."""
    ops: list[Op] = []
    atomic = atomic_modules(model)
    depth = [0]

    def pre(name):
        def hook(mod, args):
            depth[0] += 1
        return hook

    def post(name, t):
        def hook(mod, args, out):
            depth[0] -= 1
            o = out if isinstance(out, torch.Tensor) else None
            w = sum(p.numel() for p in mod.parameters(recurse=False))
            ops.append(Op(name, t, _numel(args), _numel(out), w, _macs(mod, o) if o is not None else 0))
        return hook

    class Funcs(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            n = op_name(func)
            if not depth[0] and counted_call(n, args, kwargs):
                macs = 0
                if n in ("matmul", "mm", "bmm") and len(args) >= 2 and isinstance(out, torch.Tensor):
                    macs = out.numel() * args[0].shape[-1]
                ops.append(Op(f"{n}#{len(ops)}", n, _numel((args, kwargs)), _numel(out), 0, macs))
            return out

    handles = []
    for name, (m, t) in atomic.items():
        handles.append(m.register_forward_pre_hook(pre(name)))
        handles.append(m.register_forward_hook(post(name, t)))
    try:
        with torch.no_grad(), Funcs():
            model(sample)
    finally:
        for h in handles:
            h.remove()
    return ops


def latency(ops: list[Op], layers: dict | None, chip: str = "ascend910b", fp32: bool = False) -> dict:
    """Modelled time of one sample through the model: each op its own launch (see roofline.op_time).

    ``layers``: a variant's engine modes (None: the float model). FP32: 4-byte tensors at the cube's fp32 rate;
    otherwise fp16 (force_fp16); a QuantLayer reads int8 codes and int8 weights at the int8 rate after an
    AscendQuant op (fp16 in, int8 out), its dequant fused into the cube's output; a folded BatchNorm costs nothing.
    """
    layers = layers or {}
    fsize = 4 if fp32 else 2
    dtype = "float32" if fp32 else "float16"
    total, cube, mem = 0.0, 0.0, 0.0
    for op in ops:
        mode = layers.get(op.name)
        if isinstance(mode, FoldedBatchNorm):
            continue
        if isinstance(mode, QuantLayer):
            q = roofline.op_time(0, op.in_elems * (fsize + 1), dtype, chip)              # AscendQuant
            c = roofline.op_time(2 * op.macs, op.in_elems + (op.weight_elems * mode.wts_bits + 7) // 8
                                 + op.out_elems * fsize, "int8", chip)
            parts = (q, c)
            if getattr(mode, "in_scale", None) is not None:     # DMQ's Mul by 1 / f before AscendQuant
                parts = (roofline.op_time(0, 2 * op.in_elems * fsize, dtype, chip),) + parts
        else:
            w = op.weight_elems if not isinstance(mode, FloatConv) else mode.weight.numel()
            flops = 2 * op.macs if op.op_type in CUBE else 0
            parts = (roofline.op_time(flops, (op.in_elems + w + op.out_elems) * fsize, dtype, chip),)
        for p in parts:
            total += p["seconds"]
            cube += p["cube_s"]
            mem += p["memory_s"]
    return {"seconds": total, "cube_s": cube, "memory_s": mem, "chip": chip, "estimate": True}


def fp32_bytes(model: nn.Module) -> int:
    return 4 * sum(p.numel() for p in model.parameters())
