"""Run one case: inputs, golden, the op, the naive variant, metrics, verdict, modelled device time.

Pure with respect to how the op is obtained: ``OpHandle`` carries callables, so unit tests can pass plain
torch functions and the plugin passes ``torch.ops.opkit.<op>`` (see binding.py).
"""
from __future__ import annotations

import contextlib
import os
import time
import traceback
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable

import torch

from .. import roofline
from ..errors import EmulatorError
from ..opspec import DTYPES, OpSpec
from . import golden as G
from .cases import Case, make_inputs
from .metrics import compare
from ..opspec.standard import thresholds


@dataclass
class OpHandle:
    fn: Callable                                  # the op under test
    naive_fn: Callable | None = None              # same kernel, compute dtype = I/O dtype
    last_launch: Callable[[], dict] | None = None  # emulator counters of this thread's last launch
    naive_label: str = "kernel built with compute dtype = I/O dtype"
    device: Any = None                            # set on a device target: `fn` moves inputs there
    op: Callable | None = None                    # the torch op itself (opcheck), when `fn` wraps it
    missing: dict[str, str] = field(default_factory=dict)   # ops it needs that are not built -> why
    fast_proof: bool = False                      # an emulator op: prove its fast launch bitwise (run_case)


@contextlib.contextmanager
def emulator_checks(mode: str):
    """OPKIT_EMU_CHECKS for the launches inside (csrc/kernels.cpp): the harness checks every rule on every
    case ("always"), then runs the case once more with the rules skipped ("fast") to prove the bytes equal."""
    old = os.environ.get("OPKIT_EMU_CHECKS")
    os.environ["OPKIT_EMU_CHECKS"] = mode
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("OPKIT_EMU_CHECKS", None)
        else:
            os.environ["OPKIT_EMU_CHECKS"] = old


def fast_differs(checked: tuple, fast: tuple) -> str:
    """'' when the fast launch's outputs are bitwise the checked launch's, else what differs."""
    if len(fast) != len(checked):
        return f"{len(fast)} output(s), checked launch {len(checked)}"
    for j, (a, b) in enumerate(zip(checked, fast)):
        if a.dtype != b.dtype or a.shape != b.shape:
            return f"output {j}: {b.dtype} {list(b.shape)}, checked launch {a.dtype} {list(a.shape)}"
        x, y = a.contiguous().reshape(-1), b.contiguous().reshape(-1)
        if x.numel() and not torch.equal(x.view(torch.uint8), y.view(torch.uint8)):
            bad = (x.view(torch.uint8).reshape(x.numel(), -1) != y.view(torch.uint8).reshape(y.numel(), -1)).any(1)
            first = int(bad.nonzero()[0])
            return (f"output {j}: {int(bad.sum())} of {x.numel()} elements differ (first at flat index {first}: "
                    f"{x[first].item()!r} checked, {y[first].item()!r} fast)")
    return ""


def _dtype_name(dt: torch.dtype) -> str:
    return str(dt).replace("torch.", "")


def expected_out_dtype(spec: OpSpec, out_index: int, case: Case) -> str:
    o = spec.outputs[out_index]
    names = [i.name for i in spec.inputs]
    if o.dtype in names:
        return case.dtype     # inputs follow the lead dtype (the binding casts them)
    return o.dtype


def failure_reason(exc: BaseException) -> str:
    """A one-line reason for an op that raised: the emulator rule when there is one."""
    text = str(exc)
    emu = EmulatorError.from_message(text)
    if emu is not None:
        return (f"emulator rule [{emu.rule}] broken by {emu.call} at {emu.file}:{emu.line} "
                f"(block {emu.block}): {emu.detail}")
    first = text.strip().splitlines()[0] if text.strip() else ""
    return f"op raised {type(exc).__name__}: {first}"[:600]


def run_case(spec: OpSpec, case: Case, op: OpHandle, ref: ModuleType) -> dict:
    """One record for the JSON report (see report.py for the fields)."""
    rec = case.as_dict()
    rec.update(verdict="fail", reason="", metrics={}, naive_metrics=None, outputs=[], device_model=None)
    inputs = make_inputs(spec, case)
    rec["input_range"] = _value_range(inputs[0])
    try:
        gold = G.golden(ref, inputs, case.attrs)
        fp64_golden = any(x.dtype == torch.float32 for x in inputs)
        if fp64_golden and any(x.is_floating_point() and not bool(torch.isfinite(x).all()) for x in inputs):
            gold = G.fp32_nonfinite(ref, inputs, case.attrs, gold)     # NaN/inf as PyTorch's FP32 op gives
        scales = G.error_scale(ref, inputs, case.attrs, gold, seed=case.seed)
    except G.ReferenceError_ as e:
        rec["reason"] = f"golden: {e}"
        return rec

    t0 = time.perf_counter()
    try:
        with torch.no_grad(), emulator_checks("always"):
            outs = G.as_tuple(op.fn(*inputs, **case.attrs))
    except Exception as e:  # noqa: BLE001 - any kernel failure fails this case only
        rec["reason"] = failure_reason(e)
        rec["traceback"] = traceback.format_exc(limit=3)
        return rec
    rec["op_seconds"] = time.perf_counter() - t0
    try:
        stats = op.last_launch() if op.last_launch is not None else None    # the checked launch's counters
    except Exception as e:  # noqa: BLE001 - counters are a report nicety, not a verdict
        stats, rec["device_model"] = None, {"error": f"{type(e).__name__}: {e}"}
    if op.fast_proof:
        # The emulator checks a launch once, then runs the same launch fast: same bytes, proven here.
        try:
            with torch.no_grad(), emulator_checks("fast"):
                fast = G.as_tuple(op.fn(*inputs, **case.attrs))
            rec["fast_differs"] = fast_differs(outs, fast)
        except Exception as e:  # noqa: BLE001
            rec["fast_differs"] = f"the fast launch failed: {failure_reason(e)}"
        if rec["fast_differs"]:
            rec["reason"] = ("the fast launch (rules skipped, as after a key's first launch) gave other bytes than "
                             f"the checked launch: {rec['fast_differs']}")
            return rec
    if stats is not None:
        try:
            ideal = sum(x.numel() * x.element_size() for x in inputs) + \
                sum(o.numel() * o.element_size() for o in outs)
            rec["launch_stats"] = stats
            rec["device_model"] = roofline.model(stats, ideal)
        except Exception as e:  # noqa: BLE001 - counters are a report nicety, not a verdict
            rec["device_model"] = {"error": f"{type(e).__name__}: {e}"}

    naive_outs, naive_note = None, None
    if op.naive_fn is not None:
        if spec.compute_dtype == case.dtype:
            naive_note = "same as opkit (compute dtype = I/O dtype)"
            naive_outs = outs
        else:
            try:
                with torch.no_grad(), emulator_checks("always"):
                    naive_outs = G.as_tuple(op.naive_fn(*inputs, **case.attrs))
                naive_note = op.naive_label
            except Exception as e:  # noqa: BLE001
                naive_note = f"naive variant failed: {failure_reason(e)}"
    else:
        try:
            naive_outs = G.naive(ref, inputs, case.attrs)
            naive_note = "reference.py naive()" if naive_outs is not None else "no naive baseline"
        except G.ReferenceError_ as e:
            naive_note = f"naive(): {e}"
    if case.dtype == "bfloat16" and naive_note == op.naive_label:
        naive_note += " (bf16 vector math does not exist on A2: a hypothetical bf16-computing kernel)"
    rec["naive_note"] = naive_note

    if len(outs) != len(gold):
        rec["reason"] = f"op returned {len(outs)} output(s), reference {len(gold)}"
        return rec
    reasons = []
    for j, (o, g) in enumerate(zip(outs, gold)):
        name = spec.outputs[j].name if j < len(spec.outputs) else f"out{j}"
        want = expected_out_dtype(spec, j, case) if j < len(spec.outputs) else _dtype_name(o.dtype)
        thr = thresholds(want, spec.accuracy.standard, spec.accuracy.overrides, spec.compute_dtype)
        entry = {"name": name, "dtype": _dtype_name(o.dtype), "thresholds": thr.as_dict()}
        if _dtype_name(o.dtype) != want:
            entry["metrics"] = {"passed": False, "reason": f"dtype {_dtype_name(o.dtype)}, expected {want}"}
        else:
            entry["metrics"] = compare(o, g, thr, scales[j] if j < len(scales) else None)
        if naive_outs is outs:
            entry["naive_metrics"] = entry["metrics"]          # compute dtype = I/O dtype: the same kernel
        elif naive_outs is not None and j < len(naive_outs):
            entry["naive_metrics"] = compare(naive_outs[j], g, thr, scales[j] if j < len(scales) else None)
        if not entry["metrics"]["passed"]:
            reasons.append(f"{name}: {entry['metrics']['reason']}" if len(outs) > 1 else entry["metrics"]["reason"])
        rec["outputs"].append(entry)
    first = rec["outputs"][0]
    rec["metrics"] = first["metrics"]
    rec["naive_metrics"] = first.get("naive_metrics")
    rec["thresholds"] = first["thresholds"]
    rec["verdict"] = "fail" if reasons else "pass"
    rec["reason"] = "; ".join(reasons)
    return rec


def _value_range(x: torch.Tensor) -> dict:
    v = x.detach().to(torch.float64).reshape(-1)
    f = v[torch.isfinite(v)]
    return {"min": float(f.min()) if f.numel() else None, "max": float(f.max()) if f.numel() else None,
            "max_abs": float(f.abs().max()) if f.numel() else None,
            "nonfinite": int((~torch.isfinite(v)).sum())}


__all__ = ["OpHandle", "run_case", "failure_reason", "DTYPES"]
