"""Modelled device throughput of a deployment variant: a roofline per aten op. AN ESTIMATE, not a measurement.

One FP32 run of the model on one input (batch 1) is traced below autograd (TorchDispatchMode under no_grad,
so ``linear`` is seen as ``addmm`` and convolutions as ``convolution``): per op, its FLOPs (PyTorch's
``torch.utils.flop_counter`` table: matmuls and convolutions, the cube's work), the bytes of its tensor inputs
and outputs, and its CPU time on this machine. Per variant, each op costs

    device op:    max(FLOPs / cube rate, bytes / HBM bandwidth) + launch overhead
    CPU fallback: bytes / host link bandwidth + its CPU time here + launch overhead

where an op the variant runs in FP32 moves FP32 bytes and uses the FP32 cube rate, and every other op moves
fp16 bytes (half the traced FP32 bytes). The sum is one image's time; FPS = 1 / time. Ops run one after the
other (no overlap of copies with compute, no fusion): a crude bound that ranks variants, nothing more.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ..roofline import HBM_BYTES_PER_S

# Rates: ESTIMATES. 320 TFLOPS fp16 cube: the 910B data-sheet figure in docs/facts/ascendc-facts.md §4 (no
# official source); HBM 1.6 TB/s: opkit.roofline's estimate (same section).
CUBE_FP16_FLOPS = 320e12
CUBE_FP32_FLOPS = CUBE_FP16_FLOPS / 4    # assumption, no source found: FP32 (HF32) cube work at a quarter of fp16
LAUNCH_S = 10e-6                          # assumption, no source found: per-kernel launch and scheduling
HOST_LINK_BYTES_PER_S = 25e9              # assumption, no source found: host <-> device copies of a fallback

SKIP = {"view", "_unsafe_view", "t", "transpose", "permute", "expand", "detach", "alias", "unsqueeze", "squeeze",
        "reshape", "slice", "select", "as_strided", "_reshape_alias", "clone", "contiguous", "lift_fresh",
        "empty", "empty_like", "zeros", "ones", "full", "new_empty", "copy_", "_to_copy", "split", "unbind"}
ALIASES = {"convolution": "conv2d", "_convolution": "conv2d", "addmm": "linear", "mm": "matmul", "bmm": "matmul",
           "baddbmm": "matmul", "native_layer_norm": "layer_norm", "_softmax": "softmax", "_log_softmax": "log_softmax",
           "native_batch_norm": "batch_norm", "_native_batch_norm_legit_no_training": "batch_norm"}

ASSUMPTIONS = (f"roofline per op (estimate): fp16 cube {CUBE_FP16_FLOPS / 1e12:g} TFLOPS, FP32 cube "
               f"{CUBE_FP32_FLOPS / 1e12:g} TFLOPS (assumed 1/4), HBM {HBM_BYTES_PER_S / 1e12:g} TB/s, "
               f"{LAUNCH_S * 1e6:g} us launch per op (assumed), CPU fallbacks over a {HOST_LINK_BYTES_PER_S / 1e9:g} GB/s "
               "host link (assumed) plus their CPU time on this machine; no fusion, no overlap")


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
    cube = mem = fb = launch = 0.0
    for o in ops:
        launch += LAUNCH_S
        if o.op_type in fallback_types:
            fb += o.bytes / HOST_LINK_BYTES_PER_S + o.cpu_s
            continue
        fp32 = all_fp32 or o.op_type in fp32_types
        b = o.bytes if fp32 else o.bytes / 2
        c = o.flops / (CUBE_FP32_FLOPS if fp32 else CUBE_FP16_FLOPS)
        m = b / HBM_BYTES_PER_S
        if c >= m:
            cube += c
        else:
            mem += m
    total = cube + mem + fb + launch
    return {"estimate": True, "ms_per_image": total * 1e3, "fps": 1.0 / total if total > 0 else None,
            "cube_ms": cube * 1e3, "memory_ms": mem * 1e3, "fallback_ms": fb * 1e3, "launch_ms": launch * 1e3,
            "ops": len(ops)}
