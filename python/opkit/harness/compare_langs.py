"""`opkit test --compare-langs`: for op folders holding both kernel.py (TBE) and kernel.cpp (AscendC), run
both on every case of the matrix, each against the golden and against each other, and say where they
differ: the evidence a team needs before retiring the TBE version."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import torch

from ..errors import OpkitError
from ..opspec import OpSpec
from ..workspace import build_dir, require_workspace, workspace_specs


def both_langs(spec: OpSpec) -> bool:
    return (spec.dir / "kernel.py").is_file() and (spec.dir / "kernel.cpp").is_file()


def _ascendc_fn(spec: OpSpec, ws: Path, log):
    """Build the AscendC kernel of the folder (its own build dir) and return torch.ops.opkit.<op>."""
    from .. import autograd  # noqa: F401 - loaded by the loader path too; keeps import order equal
    from .. import build as router
    from ..loader import register

    asc = dataclasses.replace(spec, lang="ascendc")
    out = build_dir(ws, "cpu") / "_compare_ascendc"
    log(f"building the AscendC kernel of {spec.snake} into {out}")
    router.build_specs([asc], out, target="cpu", log=log)
    register(asc, router.library("cpu", out, asc))
    return getattr(torch.ops.opkit, spec.snake)


def _capture(fn, box: list, seen: dict):
    def call(*args, **kwargs):
        res = fn(*args, **kwargs)
        box[:] = list(res) if isinstance(res, (tuple, list)) else [res]
        seen.update(inputs=args, attrs=kwargs)
        return res
    return call


def run(ops: list[str] | None, *, mode: str = "default", seed: int = 0, log=print,
        report_json: Path | None = None) -> int:
    from ..opspec.standard import thresholds
    from ..tbe import runner
    from . import golden as G
    from .cases import build_matrix
    from .execute import OpHandle, run_case
    from .golden import load_reference
    from .metrics import compare

    ws = require_workspace(None)
    specs = [s for s in workspace_specs(ws, tuple(ops or ())) if both_langs(s)]
    if not specs:
        raise OpkitError(f"--compare-langs: no op folder in {ws} holds both kernel.py (TBE) and kernel.cpp "
                         "(AscendC)")
    records, bad = [], 0
    for spec in specs:
        tbe_spec = dataclasses.replace(spec, lang="tbe")
        tbe_op = runner.get(tbe_spec)
        attr_names = [a.name for a in spec.attrs]

        def tbe_fn(*inputs, _op=tbe_op, **attrs):
            outs = _op(list(inputs), {n: attrs[n] for n in attr_names if n in attrs})
            return outs[0] if len(outs) == 1 else tuple(outs)
        asc_fn = _ascendc_fn(spec, ws, log)
        ref = load_reference(spec.reference_file)
        got_t, got_a, seen = [], [], {}
        cases = build_matrix(spec, mode, seed)
        differ = 0
        for i, case in enumerate(cases):
            rt = run_case(spec, case, OpHandle(fn=_capture(tbe_fn, got_t, seen)), ref)
            ra = run_case(spec, case, OpHandle(fn=_capture(asc_fn, got_a, {})), ref)
            rec = {"op": spec.snake, "case": case.id, "tbe": rt["verdict"], "ascendc": ra["verdict"],
                   "tbe_reason": rt["reason"], "ascendc_reason": ra["reason"]}
            if got_t and got_a and len(got_t) == len(got_a):
                t, a = got_t[0], got_a[0]
                thr = thresholds(str(a.dtype).replace("torch.", ""), spec.accuracy.standard,
                                 spec.accuracy.overrides, spec.compute_dtype)
                # judged like a golden comparison, AscendC output as the reference; elements that cancel
                # are judged against the reference's error_scale, as against the golden
                try:
                    gold = G.golden(ref, list(seen["inputs"]), seen["attrs"])
                    scales = G.error_scale(ref, list(seen["inputs"]), seen["attrs"], gold, seed=case.seed)
                except G.ReferenceError_:
                    scales = ()
                m = compare(t, a.to(torch.float64), thr, scales[0] if scales else None)
                both = torch.isfinite(t) & torch.isfinite(a)
                rec.update(mutual=m["passed"], identical=float((t == a).double().mean()) if t.numel() else 1.0,
                           max_abs_diff=float((t.double() - a.double())[both].abs().max()) if both.any() else 0.0,
                           mutual_reason=m["reason"])
            else:
                rec.update(mutual=False, identical=0.0, max_abs_diff=None, mutual_reason="no outputs to compare")
            ok = rec["tbe"] == rec["ascendc"] == "pass" and rec["mutual"]
            differ += not ok
            records.append(rec)
            if not ok:
                log(f"  DIFFER {spec.snake}[{case.id}]: tbe {rec['tbe']} {rec['tbe_reason'][:120]} | ascendc "
                    f"{rec['ascendc']} {rec['ascendc_reason'][:120]} | tbe vs ascendc: {rec['mutual_reason'][:160]}")
            got_t.clear()
            got_a.clear()
            if (i + 1) % 20 == 0:
                log(f"  {spec.snake}: {i + 1}/{len(cases)} cases")
        mine = [r for r in records if r["op"] == spec.snake]
        ident = sum(r["identical"] for r in mine) / max(1, len(mine))
        worst = max((r["max_abs_diff"] or 0.0 for r in mine), default=0.0)
        log(f"{spec.snake}: {len(cases)} cases, TBE and AscendC agree on {len(cases) - differ} "
            f"(both pass the golden and each other); {ident:.1%} of elements bit-identical on average, "
            f"largest |tbe - ascendc| {worst:.3g}")
        bad += differ
    if report_json:
        Path(report_json).write_text(json.dumps(records, indent=1))
    log("verdict: " + ("AGREE" if not bad else f"DIFFER ({bad} cases)"))
    return 1 if bad else 0
