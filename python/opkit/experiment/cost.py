"""Modelled device throughput of a deployment variant: a roofline per aten op. AN ESTIMATE, not a measurement.

One FP32 run of the model on one input (batch 1) is traced below autograd (TorchDispatchMode under no_grad,
so ``linear`` is seen as ``addmm`` and convolutions as ``convolution``): per op, its FLOPs (PyTorch's
``torch.utils.flop_counter`` table: matmuls and convolutions, the cube's work), the bytes of its tensor inputs
and outputs, and its CPU time on this machine. Per variant, each op costs

    device op:    opkit.roofline.op_time: max(FLOPs / cube rate, bytes / HBM bandwidth)
    CPU fallback: bytes / host link bandwidth + its CPU time here

where an op the variant runs in FP32 moves FP32 bytes and uses the FP32 cube rate, and every other op moves
fp16 bytes (half the traced FP32 bytes). The sum is one image's time; FPS = 1 / time. Ops run one after the
other (no overlap of copies with compute, no fusion): a crude bound that ranks variants, nothing more.

The rates are opkit.roofline's (the one cost model: `opkit quant`'s latency column uses the same table).
Why those: the cited facts are the 910B fp16 cube rate (320 TFLOPS, a data-sheet figure) and the Da Vinci
cube's 4096 fp16 / 8192 int8 MACs per cycle (Hot Chips 2019), i.e. the cube takes a fixed number of operand
bytes per cycle; at that byte rate FP32 runs at half the fp16 rate -- the one FP32 figure consistent with a
cited fact (this module's former quarter had no source). No per-op launch overhead: no figure was found for
one, and a constant per op would add the same time to every variant of one model.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .. import roofline

CHIP = "ascend910b"
HOST_LINK_BYTES_PER_S = 25e9              # assumption, no source found: host <-> device copies of a fallback

SKIP = {"view", "_unsafe_view", "t", "transpose", "permute", "expand", "detach", "alias", "unsqueeze", "squeeze",
        "reshape", "slice", "select", "as_strided", "_reshape_alias", "clone", "contiguous", "lift_fresh",
        "empty", "empty_like", "zeros", "ones", "full", "new_empty", "copy_", "_to_copy", "split", "unbind"}
ALIASES = {"convolution": "conv2d", "_convolution": "conv2d", "addmm": "linear", "mm": "matmul", "bmm": "matmul",
           "baddbmm": "matmul", "native_layer_norm": "layer_norm", "_softmax": "softmax", "_log_softmax": "log_softmax",
           "native_batch_norm": "batch_norm", "_native_batch_norm_legit_no_training": "batch_norm"}

_RATES = roofline.CHIPS[CHIP]
ASSUMPTIONS = (f"roofline per op (estimate, opkit.roofline): fp16 cube {_RATES['cube_flops']['float16'] / 1e12:g} "
               f"TFLOPS, FP32 cube {_RATES['cube_flops']['float32'] / 1e12:g} TFLOPS (half: the cube's operand "
               f"bytes per cycle), HBM {_RATES['hbm_bytes_per_s'] / 1e12:g} TB/s, no launch overhead, CPU "
               f"fallbacks over a {HOST_LINK_BYTES_PER_S / 1e9:g} GB/s host link (assumed) plus their CPU time on "
               "this machine; no fusion, no overlap")


@dataclass
class OpCost:
    aten: str           # aten::addmm
    op_type: str        # the engine's op type the policy speaks (linear)
    flops: float
    bytes: int
    cpu_s: float


def op_type(aten_name: str) -> str:
    base = aten_name.split("::")[-1].split(".")[0]
    return ALIASES.get(base, base)


class _Trace(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops: list[OpCost] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        from torch.utils.flop_counter import flop_registry
        t0 = time.perf_counter()
        out = func(*args, **kwargs)
        dt = time.perf_counter() - t0
        name = func._schema.name.split("::")[-1]
        if name in SKIP:
            return out
        nbytes = 0
        for a in list(args) + list(kwargs.values()) + ([out] if isinstance(out, torch.Tensor) else list(out) if isinstance(out, (tuple, list)) else []):
            if isinstance(a, torch.Tensor):
                nbytes += a.numel() * a.element_size()
        packet = func.overloadpacket
        flops = float(flop_registry[packet](*args, **kwargs, out_val=out)) if packet in flop_registry else 0.0
        self.ops.append(OpCost(f"aten::{name}", op_type(name), flops, nbytes, dt))
        return out


def trace(model: torch.nn.Module, x: torch.Tensor) -> list[OpCost]:
    """The aten ops of one FP32 forward of ``x`` (batch 1 is what the rates below are per)."""
    model.eval()
    with torch.no_grad():
        model(x)                             # warm-up: first-call costs out of the CPU times
        tr = _Trace()
        with tr:
            model(x)
    return tr.ops


def modelled(ops: list[OpCost], fp32_types: set[str], fallback_types: set[str] = frozenset(),
             all_fp32: bool = False) -> dict:
    """Modelled time per image and FPS of one variant (keys say ``estimate``)."""
    cube = mem = fb = 0.0
    for o in ops:
        if o.op_type in fallback_types:
            fb += o.bytes / HOST_LINK_BYTES_PER_S + o.cpu_s
            continue
        fp32 = all_fp32 or o.op_type in fp32_types
        t = roofline.op_time(o.flops, o.bytes if fp32 else o.bytes / 2, "float32" if fp32 else "float16", CHIP)
        if t["bound"] == "cube":
            cube += t["seconds"]
        else:
            mem += t["seconds"]
    total = cube + mem + fb
    return {"estimate": True, "ms_per_image": total * 1e3, "fps": 1.0 / total if total > 0 else None,
            "cube_ms": cube * 1e3, "memory_ms": mem * 1e3, "fallback_ms": fb * 1e3, "ops": len(ops)}
