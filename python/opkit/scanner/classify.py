"""What torch_npu does with one aten overload, decided the way its dispatcher would.

Order (torch-npu 2.13.0; docs/scan.md "Method"):
1. the overload is in the wheel's yaml -> an NPU kernel (``supported``);
2. a PrivateUse1 kernel is registered in this process (``opkit.load(override_aten=True)``, another extension)
   -> ``supported`` (that kernel wins over the CPU fallback);
3. PyTorch's CompositeImplicitAutograd kernel -> ``decompose``: trace its inner calls instead;
4. a CompositeExplicitAutograd[NonFunctional] kernel, PrivateUse1's "default backend kernel" -> ``default``:
   trace its inner calls (functional ``gelu`` runs ``gelu.out`` on the NPU: unlisted, yet no fallback);
5. otherwise torch_npu's boxed fallback copies the inputs to the CPU and runs the CPU kernel -> ``fallback``,
   except view ops (they cannot fall back) and ops of other namespaces, which stay ``unknown``.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..toolchain.aten import qualified, yaml_name  # noqa: F401 - trace.py takes them from here
from .oplist import OpList

SUPPORTED, FALLBACK, UNKNOWN = "supported", "fallback", "unknown"
DECOMPOSE, DEFAULT, IGNORE = "decompose", "default", "ignore"
_CEA = ("CompositeExplicitAutogradNonFunctional", "CompositeExplicitAutograd")


@dataclass(frozen=True)
class Decision:
    action: str             # supported | fallback | unknown | decompose | default
    reason: str
    key: str | None = None  # dispatch key name for `default`


def _is_view(op: torch._ops.OpOverload) -> bool:
    rets = op._schema.returns
    return bool(rets) and rets[0].alias_info is not None and not rets[0].alias_info.is_write


def decide(op: torch._ops.OpOverload, ops: OpList, overrides: dict[str, str]) -> Decision:
    name = yaml_name(op)
    qual = f"{op.namespace}::{name}"          # the dispatcher's spelling: aten::lgamma, aten::lgamma.out
    if op.namespace == "prim":                # FakeTensor's prim::device and friends: no backend kernel runs
        return Decision(IGNORE, "prim op (metadata only)")
    if ops.has(op.namespace, name):
        return Decision(SUPPORTED, f"NPU kernel (listed in {_short(ops)})")
    if qual in overrides:
        owner = overrides[qual]
        return Decision(SUPPORTED, f"opkit op {owner} registered as its PrivateUse1 kernel (override_aten)")
    if op.namespace == "opkit":
        return Decision(SUPPORTED, "opkit op: its NPU kernel comes from `opkit build --target npu`")
    if torch._C._dispatch_has_kernel_for_dispatch_key(qual, "PrivateUse1"):
        return Decision(SUPPORTED, "a PrivateUse1 kernel is registered in this process")
    if torch._C._dispatch_has_kernel_for_dispatch_key(qual, "CompositeImplicitAutograd"):
        return Decision(DECOMPOSE, "CompositeImplicitAutograd: decomposed before the backend")
    for key in _CEA:
        if torch._C._dispatch_has_kernel_for_dispatch_key(qual, key):
            return Decision(DEFAULT, f"{key} default kernel: runs its inner ops on the NPU", key)
    if _is_view(op):
        return Decision(UNKNOWN, "view op without an NPU kernel: views cannot fall back, so the NPU would raise")
    if op.namespace != "aten":
        return Decision(UNKNOWN, f"{op.namespace}:: op without a PrivateUse1 kernel; would fall back unless its "
                                 "library registers one for the NPU")
    return Decision(FALLBACK, f"not in {_short(ops)} and no composite kernel: torch_npu's CPU fallback runs it")


def _short(ops: OpList) -> str:
    return f"torch-npu {ops.version}" if ops.version else ops.source


# aten op (base name, as the scan records it) -> bundled opkit op that computes it in FP32 with fp16/bf16 I/O.
COVERED_BY = {
    "native_layer_norm": "layer_norm_fp32", "layer_norm": "layer_norm_fp32",
    "native_layer_norm_backward": "layer_norm_fp32_backward",
    "rms_norm": "rms_norm_fp32", "_fused_rms_norm": "rms_norm_fp32",
    "_softmax": "softmax_fp32", "softmax": "softmax_fp32", "_softmax_backward_data": "softmax_fp32_backward",
    "_log_softmax": "log_softmax_fp32", "log_softmax": "log_softmax_fp32",
    "gelu": "gelu_fp32", "gelu_backward": "gelu_fp32_backward",
    "silu": "silu_fp32", "silu_backward": "silu_fp32_backward",
    "sum": "reduce_sum_fp32", "mean": "reduce_mean_fp32", "amax": "reduce_max_fp32",
}


def base_name(op_name: str) -> str:
    """``aten::native_layer_norm.default`` / ``native_layer_norm`` -> ``native_layer_norm``."""
    return op_name.split("::", 1)[-1].split(".", 1)[0]
