"""`opkit test --ttk FILE.csv [OP]`: a TTK kernel-mode CSV (ttk.py) against a workspace op of lang cann -- its own
TilingFunc on the CPU, its A2 kernel on the emulator, reference.py as the golden, TTK's comparison methods."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..errors import OpkitError
from ..opspec import OpSpec
from ..toolchain.user_code import load_reference
from ..workspace import build_dir, require_workspace, workspace_specs
from . import register, ttk


def pick_spec(specs: list[OpSpec], cases: list[ttk.Case], csv_path: Path) -> OpSpec:
    """The cann op the CSV's op_name names (op type or snake name, compared as TTK writes it: `mvnv2`)."""
    names = {c.op_name for c in cases}
    for spec in specs:
        keys = {ttk.op_key(spec.snake), ttk.op_key(register.op_type(spec))}
        if spec.lang == "cann" and all(ttk.op_key(n) in keys for n in names):
            return spec
    known = ", ".join(f"{s.snake} ({register.op_type(s)})" for s in specs if s.lang == "cann") or "none"
    raise OpkitError(f"{csv_path}: op_name {', '.join(sorted(names))} names no CANN op of this workspace (cann ops: "
                     f"{known}); import it first: opkit import-cann <op folder> --reference ...")


def run(csv_path: str | Path, ops: list[str] | None, method: str | None, seed: int,
        log: Callable[[str], None]) -> int:
    """0 when every enabled case passes, 1 otherwise."""
    csv_path = Path(csv_path)
    if ttk.is_arch35(csv_path):
        raise OpkitError(f"{csv_path}: an arch35 CSV (Ascend 950 kernels); opkit runs the A2 (arch22) kernel -- use "
                         "the op's tests/st/ttk_kernel_*.csv outside arch35/")
    if method is not None and method not in ttk.METHODS:
        raise OpkitError(f"--ttk-compare {method}: expected one of {', '.join(ttk.METHODS)}")
    cases = ttk.read_csv(csv_path)
    ws = require_workspace()
    spec = pick_spec(workspace_specs(ws, ops or ()), cases, csv_path)
    if register.project_of(spec).a2_supported(register.op_type(spec)) is False:
        raise OpkitError(f"{csv_path}: op {register.op_type(spec)}'s OpDef adds no ascend910b config (an Ascend 950 "
                         "op): its TTK cases are for a kernel the emulator does not run (A2 is arch22)")
    op = register.get(spec, build_dir(ws, "cpu"))
    reference = load_reference(spec.dir / "reference.py").reference
    passed = failed = skipped = 0
    for case in cases:
        if not case.enabled:
            skipped += 1
            continue
        try:
            r = ttk.run_case(op, reference, case, method, seed)
        except OpkitError as e:
            failed += 1
            log(f"FAIL {case.name} ({case.where}): {str(e).splitlines()[0]}")
            continue
        if r["pass"]:
            passed += 1
        else:
            failed += 1
            log(f"FAIL {case.name} ({case.where}): " + "; ".join(
                f"output {o['output']} {o['standard']}: " + ", ".join(f"{k}={v}" for k, v in o.items()
                                                                     if k not in ("output", "pass", "standard"))
                for o in r["outputs"] if not o["pass"]))
    log(f"opkit test --ttk {csv_path.name}: {spec.snake}: {passed + failed} cases, {passed} passed, {failed} failed"
        + (f", {skipped} disabled (is_enabled 0)" if skipped else "")
        + f"; comparison {method or 'TTK default (stat_rel_err for floats, binary_equal for integers)'}")
    return 0 if failed == 0 and passed > 0 else 1
