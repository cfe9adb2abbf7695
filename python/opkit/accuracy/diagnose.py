"""``opkit.diagnose(model, inputs, policy=...)``: which layers and which op types lose accuracy, and the fix.

The method (the one porting teams use): a fixed input; per-layer outputs of the FP32 run and of the
policy run; cosine and max abs error per layer; the first divergence; then re-runs that keep one op type in
FP32 at a time (the rescue table); a greedy minimal set of op types that brings every layer above the
threshold; and the same policy run with ``opkit.patch`` applied (fp16 I/O, FP32 compute in opkit's kernels).
"""
from __future__ import annotations

import copy
import hashlib
import time
import warnings
from pathlib import Path
from typing import Callable

import torch
import torch.nn as nn

from ..errors import OpkitError
from .layers import compare_runs, summary
from .policy import KEEP_FP32, Policy, load_policy
from .report import DiagnoseReport
from .simulate import Simulator


def input_hash(inputs) -> str:
    h = hashlib.sha256()
    for t in inputs:
        if isinstance(t, torch.Tensor):
            t = t.detach().cpu().contiguous()
            h.update(str((tuple(t.shape), str(t.dtype))).encode())
            h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()[:16]


def load_data(data, samples: int | None = None) -> list[torch.Tensor]:
    """Batches for top-1 agreement: a tensor, a list of tensors, or a folder of ``.pt`` / ``.npy`` files
    (each a batch, or one sample without the batch dim when it has the rank of the others minus one)."""
    if data is None:
        return []
    if isinstance(data, torch.Tensor):
        batches = [data]
    elif isinstance(data, (list, tuple)):
        batches = [torch.as_tensor(b) for b in data]
    else:
        folder = Path(data)
        files = sorted(list(folder.glob("*.pt")) + list(folder.glob("*.npy"))) if folder.is_dir() else []
        if not files:
            raise OpkitError(f"--batches {folder}: expected a folder of .pt or .npy input tensors")
        batches = []
        for f in files:
            if f.suffix == ".npy":
                import numpy as np
                batches.append(torch.from_numpy(np.load(f)))
            else:
                t = torch.load(f, map_location="cpu", weights_only=True)
                if not isinstance(t, torch.Tensor):
                    raise OpkitError(f"{f}: expected a tensor, got {type(t).__name__}")
                batches.append(t)
        rank = max(b.dim() for b in batches)
        batches = [b.unsqueeze(0) if b.dim() == rank - 1 else b for b in batches]
    if samples is not None:
        out, left = [], int(samples)
        for b in batches:
            if left <= 0:
                break
            out.append(b[:left])
            left -= out[-1].shape[0]
        batches = out
    return [b.float() if b.is_floating_point() else b for b in batches]


def _top1(out) -> torch.Tensor:
    t = out if isinstance(out, torch.Tensor) else next(o for o in out if isinstance(o, torch.Tensor))
    return t.float().reshape(t.shape[0], -1).argmax(1)


class _Runner:
    """FP32 reference kept once; policy runs with overrides compared against it."""

    def __init__(self, model: nn.Module, inputs: tuple, policy: Policy, threshold: float, batches: list,
                 notes: list[str], log: Callable[[str], None]):
        self.model, self.inputs, self.policy, self.threshold = model, inputs, policy, threshold
        self.batches, self.notes, self.log = batches, notes, log
        _, self.ref = Simulator(None).run(model, inputs)
        self.ref_top1 = []
        with torch.no_grad():
            for b in batches:
                self.ref_top1.append(_top1(model(b)))

    def run(self, overrides: dict | None = None, model: nn.Module | None = None) -> dict:
        model = model or self.model
        sim = simulator_for(self.policy, overrides, notes=self.notes)
        _, recs = sim.run(model, self.inputs)
        rows = compare_runs(self.ref, recs, self.threshold)
        res = {"rows": rows, **summary(rows), "sim": sim}
        if self.batches:
            agree = total = 0
            for b, ref in zip(self.batches, self.ref_top1):
                out, _ = simulator_for(self.policy, overrides, notes=self.notes).run(model, (b,))
                agree += int((_top1(out) == ref).sum())
                total += ref.numel()
            res["top1"] = agree / max(total, 1)
        return res


def _score(res: dict) -> tuple:
    """Better first: fewer layers below the threshold, higher top-1 agreement, higher worst and output cosine."""
    return (res["below"], -(res.get("top1") or 0.0), -(res["min_cosine"] or -1.0), -(res["output_cosine"] or -1.0))


def _brief(res: dict) -> dict:
    return {k: res.get(k) for k in ("below", "min_cosine", "output_cosine", "first_divergence", "top1")}


def diagnose(model: nn.Module, inputs, *, policy: str | Policy = "cann-force-fp16", threshold: float = 0.999,
             data=None, samples: int | None = None, mixlist: str | Path | None = None, rescue: bool = True,
             patch: bool = True, scan: str | Path | dict | None = None,
             log: Callable[[str], None] | None = None) -> DiagnoseReport:
    """Per-layer accuracy of ``model`` on ``inputs`` under ``policy`` vs FP32; see docs/diagnose.md.

    ``inputs``: a tensor or a tuple of positional inputs (a fixed input). ``data``: batches for top-1
    agreement (tensor, list, or folder of .pt/.npy), ``samples`` caps them. ``mixlist``: CANN modify_mixlist
    JSON for the mixed policy. ``scan``: an ``opkit scan`` JSON report (path or dict) for the fallback column.
    """
    if not isinstance(model, nn.Module):
        raise OpkitError(f"opkit.diagnose: expected an nn.Module; got {type(model).__name__}")
    if not 0.0 < threshold <= 1.0:
        raise OpkitError(f"opkit.diagnose: threshold must be in (0, 1]; got {threshold}")
    log = log or (lambda s: None)
    t0 = time.monotonic()
    pol = policy if isinstance(policy, Policy) else load_policy(policy, mixlist)
    inputs = (inputs,) if isinstance(inputs, torch.Tensor) else tuple(inputs)
    notes: list[str] = []
    was_training = {m: m.training for m in model.modules()}
    model.eval()
    try:
        batches = load_data(data, samples)
        log("FP32 reference run")
        runner = _Runner(model, inputs, pol, threshold, batches, notes, log)
        log(f"policy run ({pol.name})")
        base = runner.run()
        rows = base["rows"]
        report = DiagnoseReport(policy=pol.describe(), threshold=threshold, layers=rows,
                                input_hash=input_hash(inputs), input_shapes=[list(t.shape) for t in inputs
                                                                              if isinstance(t, torch.Tensor)],
                                result=_brief(base), notes=notes)
        report.op_types = {t: {"calls": base["sim"].seen[t], "lowered": base["sim"].lowered[t],
                               "io_dtype": pol.entry(t).io, "compute": pol.entry(t).compute}
                           for t in sorted(base["sim"].seen)}
        report.kernels = dict(base["sim"].kernels)
        candidates = [t for t, n in base["sim"].lowered.items() if n]
        if rescue and candidates and not _good(base, runner):     # nothing to rescue when all is well
            _rescue(runner, candidates, base, report, log)
        if patch:
            _patched(runner, model, report, log)
        if scan is not None:
            _fallback_column(report, scan)
    finally:
        for m, tr in was_training.items():
            m.training = tr
    report.seconds = time.monotonic() - t0
    return report


def _rescue(runner: _Runner, candidates: list[str], base: dict, report: DiagnoseReport, log) -> None:
    results = {}
    for i, t in enumerate(candidates):
        log(f"rescue {i + 1}/{len(candidates)}: {t} in FP32")
        results[t] = runner.run({t: KEEP_FP32})
    order = sorted(candidates, key=lambda t: _score(results[t]))
    report.rescue = {t: _brief(results[t]) for t in order}
    # Greedy: add the op type that helps most until every layer is above the threshold (and top-1 agrees).
    chosen: list[str] = []
    current = base
    tried = dict(results)
    while not _good(current, runner):
        rest = [t for t in candidates if t not in chosen]
        if not rest:
            break
        if chosen:
            tried = {}
            for t in rest:
                log(f"greedy step {len(chosen) + 1}: {'+'.join(chosen + [t])} in FP32")
                tried[t] = runner.run({c: KEEP_FP32 for c in chosen + [t]})
        best = min(rest, key=lambda t: _score(tried[t]))
        if _score(tried[best]) >= _score(current):
            report.notes.append(f"greedy stopped: keeping more op types in FP32 ({', '.join(rest)}) does not "
                                f"improve on {chosen or 'the policy'}")
            break
        chosen.append(best)
        current = tried[best]
    report.recommend = chosen
    report.recommend_result = _brief(current)
    report.recommend_ok = _good(current, runner)
    report.recommend_layers = current["rows"]


def _good(res: dict, runner: _Runner) -> bool:
    return res["below"] == 0 and (res.get("top1") is None or res["top1"] >= 1.0 - 1e-12 or not runner.batches)


def _patched(runner: _Runner, model: nn.Module, report: DiagnoseReport, log) -> None:
    from ..patching import patch as opkit_patch

    log("policy run with opkit.patch")
    twin = copy.deepcopy(model)
    try:
        prep = opkit_patch(twin)
    except Exception as e:  # noqa: BLE001 - the diagnosis stands without the patch column
        report.notes.append(f"opkit.patch could not run: {type(e).__name__}: {e}")
        return
    if not prep.swapped:
        report.notes.append(nothing_swapped(prep))
    res = runner.run(model=twin)
    report.patched_layers = res["rows"]
    report.patched_result = _brief(res)
    report.patch_swapped = [list(s) for s in prep.swapped]


def nothing_swapped(prep) -> str:
    """The note for a patch that swapped nothing: no candidate, or why the candidates stayed (ops not built)."""
    if not prep.not_swapped:
        return "opkit.patch found nothing to swap in this model"
    path, kind, why = prep.not_swapped[0]
    more = f" (and {len(prep.not_swapped) - 1} more)" if len(prep.not_swapped) > 1 else ""
    return (f"opkit.patch swapped nothing: {len(prep.not_swapped)} candidate module(s) kept, e.g. "
            f"{path or '<root>'} ({kind}): {why}{more}")


NAIVE_OPS = ("layer_norm_fp32", "softmax_fp32", "gelu_fp32", "silu_fp32")   # simulate.py uses their naive variant


def simulator_for(policy: Policy | None, overrides: dict | None = None, *, notes: list[str], naive: bool = True,
                  layers: dict | None = None, layer_overrides: dict | None = None,
                  functions: dict | None = None) -> Simulator:
    """The engine as every command builds it: eval, quant and experiment (through SimVariant.simulator) and
    diagnose -- so the same model, policy and data give the same predictions everywhere. ``naive=False`` opts
    out of opkit's naive kernels; whether they run otherwise is ``naive_for``'s decision."""
    return Simulator(policy, overrides, naive=naive_for(policy, notes, naive), layers=layers,
                     layer_overrides=layer_overrides, functions=functions)


def naive_for(policy: Policy | None, notes: list[str], wanted: bool = True) -> bool:
    """Whether the engine runs fp16-internal ops on opkit's naive kernels: where the policy computes in the I/O
    dtype, when they load (else a note says why not). The one decision: SimVariant.simulator (eval, quant,
    experiment) and diagnose ask here."""
    if policy is None or not wanted:
        return False
    if not (policy.default.compute == "io" or any(e.compute == "io" for e in policy.ops.values())):
        return False
    return naive_available(notes)


_naive_unavailable: list[str] = []     # why opkit's naive kernels could not be loaded (tried once per process)


def naive_available(notes: list[str]) -> bool:
    """opkit's naive (fp16-computing) kernels, loaded if need be (built on first use; a built workspace op of
    the same name shadows the bundled one); False, with a note, if they cannot be. A failure is remembered
    for the process: every variant and rescue run asks, and a retry re-reads every op.yaml of the workspace
    (inside a workspace whose ops are not built, e.g. the opkit checkout, that cost seconds per run)."""
    from ..patching import Ops
    if all(Ops("naive").has(op) for op in NAIVE_OPS):
        return True
    if not _naive_unavailable:
        try:
            from ..loader import load
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                load(ops=list(NAIVE_OPS))
        except Exception as e:  # noqa: BLE001
            _naive_unavailable.append(f"opkit's naive kernels are unavailable ({type(e).__name__}: {e}); "
                                      "fp16-internal ops ran on PyTorch's CPU fp16 kernels, which accumulate in "
                                      "FP32 and understate the loss")
    if _naive_unavailable:
        if _naive_unavailable[0] not in notes:
            notes.append(_naive_unavailable[0])
        return False
    return Ops("naive").has("layer_norm_fp32")


def _fallback_column(report: DiagnoseReport, scan) -> None:
    from .report import fallback_layers
    try:
        marks = fallback_layers(scan)
    except OpkitError as e:
        report.notes.append(str(e))
        return
    for rows in (report.layers, report.patched_layers or []):
        for r in rows:
            base = r.name.split("#")[0]
            r.fallback = marks.get(base, "")
    report.fallback_source = str(scan) if not isinstance(scan, dict) else "(dict)"
