"""Run `opkit import-tbe` on a checkout's TBE implementations, unchanged, and count what imports, what runs
on the emulation, and (for ops with an obvious PyTorch equivalent) what passes its quick test matrix.

    python scripts/tbe_survey.py IMPL_DIR OPS_INFO.json [--out survey.json] [--limit N]

IMPL_DIR: a tbe/impl folder (e.g. op_impl/built-in/ai_core/tbe/impl of a CANN op package checkout);
OPS_INFO: its aic-<soc>-ops-info.json. Nothing is written outside a temporary workspace.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

# stem -> reference over the op's inputs ({0}, {1}: first, second input by position)
TORCH = {
    "exp": "torch.exp({0})", "log": "torch.log({0})", "abs": "torch.abs({0})", "relu": "torch.relu({0})",
    "sigmoid": "torch.sigmoid({0})", "tanh": "torch.tanh({0})", "sqrt": "torch.sqrt({0})",
    "rsqrt": "torch.rsqrt({0})", "reciprocal": "torch.reciprocal({0})", "neg": "torch.neg({0})",
    "square": "{0} * {0}", "add": "{0} + {1}", "sub": "{0} - {1}", "mul": "{0} * {1}",
    "real_div": "{0} / {1}", "div": "{0} / {1}", "maximum": "torch.maximum({0}, {1})",
    "minimum": "torch.minimum({0}, {1})", "softplus": "F.softplus({0})", "erf": "torch.erf({0})",
    "squared_difference": "({0} - {1}) ** 2", "sign": "torch.sign({0})", "relu6": "F.relu6({0})",
    "exp_d": "torch.exp({0})", "elu": "F.elu({0})", "selu": "F.selu({0})", "softsign": "F.softsign({0})",
    "log1p": "torch.log1p({0})", "expm1": "torch.expm1({0})", "sin": "torch.sin({0})", "cos": "torch.cos({0})",
    "atan": "torch.atan({0})", "sinh": "torch.sinh({0})", "cosh": "torch.cosh({0})",
    "leaky_relu": "F.leaky_relu({0}, negative_slope)", "add_n": None,
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("impl_dir", type=Path)
    ap.add_argument("ops_info", type=Path)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--soc", default="Ascend910")
    a = ap.parse_args()

    from opkit.errors import OpkitError
    from opkit.harness.cases import build_matrix
    from opkit.harness.execute import OpHandle, run_case
    from opkit.harness.golden import load_reference
    from opkit.spec import load_spec
    from opkit.tbe import build, importer, ini, runner

    infos = ini.read(a.ops_info)
    files = sorted(p for p in a.impl_dir.glob("*.py") if p.name != "__init__.py")
    files = files[: a.limit] if a.limit else files
    rows, t0 = [], time.perf_counter()
    ws = Path(tempfile.mkdtemp(prefix="tbe-survey-"))
    for i, impl in enumerate(files, 1):
        row = {"file": impl.name, "stage": "import", "reason": ""}
        rows.append(row)
        info = ini.pick(infos, impl, None)
        ref_expr = TORCH.get(impl.stem)
        try:
            if info is None:     # no op-info section: import-tbe reads the check_op_params decorator
                row["no_op_info"] = True
                names = [p.name for p in importer.plan(impl, None, None, None)[0].inputs]
            else:
                names = [p.name for p in info.inputs]
            need = len(set(re.findall(r"\{(\d)\}", ref_expr or "")))
            expr = ref_expr.format(*names) if ref_expr and len(names) >= need else None
            got = importer.import_tbe(impl, ini=a.ops_info if info else None, op_type=info.op_type if info
                                      else None, reference=expr, soc=a.soc, cwd=ws)
            row["stage"] = "run"
            spec = load_spec(got.op_dir / "op.yaml")
            build.check(spec)
            row["stage"] = "runs"
            if expr:
                op, ref = runner._ops[str(spec.dir)], load_reference(spec.reference_file)
                attrs = [x.name for x in spec.attrs]
                recs = [run_case(spec, c, OpHandle(fn=lambda *x, **k: op(list(x), {n: k[n] for n in attrs
                                                                                   if n in k})[0]), ref)
                        for c in build_matrix(spec, "quick")]
                bad = [r for r in recs if r["verdict"] != "pass"]
                row["cases"], row["failed"] = len(recs), len(bad)
                row["stage"] = "passes" if not bad else "fails"
                row["reason"] = bad[0]["reason"][:200] if bad else ""
        except (OpkitError, Exception) as e:  # noqa: BLE001 - a survey: record and go on
            row["reason"] = str(e).strip().splitlines()[-1][:300] if str(e).strip() else type(e).__name__
        if i % 25 == 0:
            print(f"[{i}/{len(files)}] {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    count = {s: sum(r["stage"] == s for r in rows) for s in ("import", "run", "runs", "passes", "fails")}
    summary = {"files": len(rows), "imported": len(rows) - count["import"],
               "run_on_emulation": count["runs"] + count["passes"] + count["fails"],
               "with_reference": count["passes"] + count["fails"], "pass_quick_matrix": count["passes"],
               "seconds": round(time.perf_counter() - t0, 1)}
    print(json.dumps(summary, indent=1))
    if a.out:
        a.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
