"""Baseline gates: keep accuracy from quietly getting worse once it is fixed.

Op level (``opkit test --update-baseline FILE`` / ``--baseline FILE``): per case, the verdict and the
gating error metrics (MERE, MARE, max rel) of every output. A check fails when a case that passed now
fails, or when a metric grows beyond ``tolerance`` x its stored value (default 2x; op.yaml
``accuracy.baseline_tolerance`` sets it per op). The harness's seeds are fixed, so a rerun of the same
build gives the same values and always passes.

Model level (``opkit diagnose --update-baseline FILE`` / ``--baseline FILE``): per layer, the cosine of the
policy run against FP32, and the output's top-1 agreement. A check fails when a layer that was above the
threshold falls below it, when a layer's distance from a perfect cosine (1 - cos) grows beyond
``tolerance`` x its stored value, or when top-1 agreement drops.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from ..errors import OpkitError
from ..harness import metrics as _metrics
from ..toolchain.files import write_json

DEFAULT_TOLERANCE = 2.0
# the error metrics the gate keeps from growing: those the harness's metric registry marks for it
METRICS = tuple(m.key for m in _metrics.METRICS if m.baseline)
FLOOR = 1e-12          # a metric this small counts as zero (a stored 0 may become 1e-300 on a rerun)


def _num(v) -> float | None:
    if v is None:
        return None
    try:
        return float(v)           # report.json writes non-finite values as "inf" / "nan"
    except (TypeError, ValueError):
        return None


def _read(path: str | Path, kind: str) -> dict:
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except OSError as e:
        raise OpkitError(f"--baseline {p}: cannot read it ({e.strerror}); create it with --update-baseline") from None
    except ValueError as e:
        raise OpkitError(f"--baseline {p}: not valid JSON: {e}") from None
    if not isinstance(data, dict) or data.get("opkit_baseline") != 1 or data.get("kind") != kind:
        raise OpkitError(f"--baseline {p}: not an opkit {kind} baseline (written by "
                         f"`opkit {'test' if kind == 'test' else 'diagnose'} --update-baseline`)")
    return data


def _write(path: str | Path, data: dict) -> Path:
    return write_json(path, data, sort_keys=True)       # atomic: never a half-written baseline


def _grew(now: float | None, base: float | None, tol: float) -> bool:
    if base is None or now is None:
        return now is None and base is not None
    if math.isnan(now):
        return not math.isnan(base)
    return now > max(tol * base, FLOOR) and now > base


# -- op level ----------------------------------------------------------------------------------------

def case_key(rec: dict) -> str:
    if rec.get("kind") == "opcheck":
        return f"{rec.get('op')}[opcheck-{rec.get('dtype')}]"
    return f"{rec.get('op')}[{rec.get('id')}]"


def case_metrics(rec: dict) -> dict[str, float | None]:
    outs = rec.get("outputs") or [{"name": "out", "metrics": rec.get("metrics") or {}}]
    res = {}
    for j, o in enumerate(outs):
        prefix = "" if len(outs) == 1 else f"{o.get('name', j)}."
        for m in METRICS:
            res[prefix + m] = _num((o.get("metrics") or {}).get(m))
    return res


def test_snapshot(report: dict, tolerances: dict[str, float]) -> dict:
    cases = {}
    for rec in list(report.get("cases", [])) + list(report.get("opcheck", [])):
        cases[case_key(rec)] = {"verdict": rec.get("verdict"), "metrics": case_metrics(rec)}
    return {"opkit_baseline": 1, "kind": "test", "mode": report.get("mode"), "seed": report.get("seed"),
            "tolerance": {op: t for op, t in sorted(tolerances.items())}, "cases": cases}


def update_test(path: str | Path, report: dict, tolerances: dict[str, float]) -> Path:
    return _write(path, test_snapshot(report, tolerances))


def check_test(path: str | Path, report: dict, tolerances: dict[str, float]) -> tuple[list[str], list[str]]:
    """(failures, notes) of this run against the baseline at ``path``."""
    base = _read(path, "test")
    if base.get("mode") != report.get("mode") or base.get("seed") != report.get("seed"):
        raise OpkitError(f"--baseline {path}: stored for mode {base.get('mode')} seed {base.get('seed')}, this run is "
                         f"mode {report.get('mode')} seed {report.get('seed')}: the cases differ; rerun with the "
                         "same --quick/--full/--seed or --update-baseline")
    now = test_snapshot(report, tolerances)["cases"]
    fails, notes = [], []
    for key, b in sorted(base["cases"].items()):
        n = now.get(key)
        if n is None:
            continue
        op = key.split("[", 1)[0]
        tol = tolerances.get(op, DEFAULT_TOLERANCE)
        if b.get("verdict") == "pass" and n.get("verdict") != "pass":
            fails.append(f"{key}: passed in the baseline, fails now")
            continue
        grown = [f"{m} {b['metrics'].get(m):.3g} -> {n['metrics'].get(m):.3g}"
                 for m in b.get("metrics", {}) if _grew(n["metrics"].get(m), b["metrics"].get(m), tol)
                 and n["metrics"].get(m) is not None and b["metrics"].get(m) is not None]
        if grown:
            fails.append(f"{key}: grew beyond {tol:g}x the baseline: {', '.join(grown)}")
    ran_ops = {k.split("[", 1)[0] for k in now}
    gone = [k for k in base["cases"] if k not in now and k.split("[", 1)[0] in ran_ops]
    new = [k for k in now if k not in base["cases"]]
    if gone:
        notes.append(f"{len(gone)} baseline case(s) not run now (e.g. {gone[0]}); -k or a changed op.yaml?")
    if new:
        notes.append(f"{len(new)} case(s) not in the baseline (e.g. {new[0]}); --update-baseline records them")
    return fails, notes


# -- model level -------------------------------------------------------------------------------------

def diagnose_snapshot(report, tolerance: float = DEFAULT_TOLERANCE) -> dict:
    d = report.to_dict() if hasattr(report, "to_dict") else report
    return {"opkit_baseline": 1, "kind": "diagnose", "policy": d["policy"]["name"], "threshold": d["threshold"],
            "input_hash": d["input_hash"], "tolerance": tolerance, "top1": d["result"].get("top1"),
            "layers": {r["name"]: {"cosine": r["cosine"], "below": r["below"]} for r in d["layers"]}}


def update_diagnose(path: str | Path, report, tolerance: float = DEFAULT_TOLERANCE) -> Path:
    return _write(path, diagnose_snapshot(report, tolerance))


def check_diagnose(path: str | Path, report, tolerance: float | None = None) -> tuple[list[str], list[str]]:
    base = _read(path, "diagnose")
    now = diagnose_snapshot(report)
    tol = float(tolerance if tolerance is not None else base.get("tolerance", DEFAULT_TOLERANCE))
    fails, notes = [], []
    for key in ("policy", "input_hash"):
        if base.get(key) != now.get(key):
            raise OpkitError(f"--baseline {path}: stored for {key} {base.get(key)}, this run has {now.get(key)}; "
                             "rerun with the same policy and input, or --update-baseline")
    for name, b in base["layers"].items():
        n = now["layers"].get(name)
        if n is None:
            notes.append(f"layer {name or '(model)'} of the baseline did not run")
            continue
        if not b["below"] and n["below"]:
            fails.append(f"layer {name or '(model)'}: was above the cosine threshold ({b['cosine']:.6f}), now below "
                         f"({'non-finite' if n['cosine'] is None else format(n['cosine'], '.6f')})")
            continue
        bd = None if b["cosine"] is None else 1.0 - b["cosine"]
        nd = None if n["cosine"] is None else 1.0 - n["cosine"]
        if bd is not None and nd is not None and nd > max(tol * bd, 1e-9) and nd > bd:
            fails.append(f"layer {name or '(model)'}: 1-cos grew beyond {tol:g}x: {bd:.3g} -> {nd:.3g}")
    if base.get("top1") is not None and now.get("top1") is not None and now["top1"] < base["top1"]:
        fails.append(f"top-1 agreement dropped: {base['top1']:.1%} -> {now['top1']:.1%}")
    return fails, notes


def tolerance_of(spec) -> float:
    return float(getattr(spec.accuracy, "baseline_tolerance", None) or DEFAULT_TOLERANCE)


def run_test(ops: list[str] | None = None, *, baseline: str | Path | None = None,
             update_baseline: str | Path | None = None, report_json: str | Path | None = None, target: str = "cpu",
             workspace: str | Path | None = None, **options) -> int:
    """`opkit test [--baseline FILE] [--update-baseline FILE]`: the harness run (opkit.harness.runner.run),
    then the gate on its per-case report; returns the exit code."""
    from ..harness import runner
    if not (baseline or update_baseline):
        return runner.run(ops, report_json=report_json, target=target, workspace=workspace, **options)
    from ..workspace import build_dir, require_workspace, workspace_specs
    ws = Path(workspace).resolve() if workspace else require_workspace()
    if not report_json:
        report_json = build_dir(ws, target).parent / "reports" / "baseline-run.json"
    code = runner.run(ops, report_json=report_json, target=target, workspace=ws, **options)
    if code == 5:       # nothing ran: nothing to gate
        return code
    return gate_test_run(Path(report_json), workspace_specs(ws, list(ops or ())), code, baseline=baseline,
                         update=update_baseline)


def gate_test_run(report_json: Path, specs, code: int, *, baseline=None, update=None) -> int:
    """After `opkit test`: store and/or check the baseline; returns the exit code (non-zero on a regression)."""
    try:
        report = json.loads(Path(report_json).read_text())
    except (OSError, ValueError) as e:
        print(f"opkit test: no report to compare with the baseline ({report_json}: {e})", file=sys.stderr)
        return code or 1
    tolerances = {s.snake: tolerance_of(s) for s in specs}
    if baseline:
        fails, notes = check_test(baseline, report, tolerances)
        for n in notes:
            print(f"baseline: note: {n}")
        if fails:
            print(f"baseline {baseline}: {len(fails)} regression(s):")
            for f in fails:
                print(f"  {f}")
            code = code or 1
        else:
            print(f"baseline {baseline}: no regression ({len(report.get('cases', []))} cases checked)")
    if update:
        _write(update, test_snapshot(report, tolerances))
        bad = report.get("summary", {}).get("failed", 0)
        print(f"baseline written: {update} ({len(report.get('cases', []))} cases"
              + (f"; {bad} failing case(s) recorded as failing" if bad else "") + ")")
    return code
