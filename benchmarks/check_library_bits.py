"""Bits unchanged: every case of the bundled library, run through two opkit trees' builds, gives the same bytes.

    nice -n 10 python benchmarks/check_library_bits.py --before DIR [--mode default|quick|full]
    python benchmarks/check_library_bits.py --dump OUT.pt [--mode ...]      # this process's opkit only

``--before DIR``: an opkit tree (DIR/python, DIR/cmake, DIR/ops: `git archive main cmake python ops templates |
tar -x -C DIR`). Each side runs in its own process with its own bundled-op cache (OPKIT_CACHE_DIR + "-bits-<side>",
built on first use), calls every ascendc op of the library on every case of the harness matrix (inputs from
opkit.harness.cases.make_inputs, the harness's own) through ``torch.ops.opkit`` and ``torch.ops.opkit_naive``
with the emulator's checks on, and records each output's bytes (or the error text). The two records must be
equal byte for byte, case by case; the first differences are printed and the exit status is 1.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def dump(out: Path, mode: str, only: list[str] | None = None) -> None:
    import torch

    import opkit
    from opkit.harness.cases import build_matrix, make_inputs
    from opkit.harness.execute import emulator_checks
    from opkit.opspec import load_spec
    from opkit.workspace import bundled_ops_dir

    specs = [load_spec(d) for d in sorted(bundled_ops_dir().iterdir()) if (d / "op.yaml").is_file()]
    specs = [s for s in specs if s.lang == "ascendc" and (not only or s.snake in only)]
    opkit.load(ops=[s.snake for s in specs], quiet=True, outside_workspace=True)
    rec: dict[str, object] = {}
    for spec in specs:
        for ns in ("opkit", "opkit_naive"):
            fn = getattr(getattr(torch.ops, ns), spec.snake)
            for case in build_matrix(spec, mode):
                key = f"{ns}::{spec.snake}[{case.id}]"
                inputs = make_inputs(spec, case)
                try:
                    with torch.no_grad(), emulator_checks("always"):
                        res = fn(*inputs, **case.attrs)
                    outs = res if isinstance(res, (tuple, list)) else (res,)
                    rec[key] = [(str(o.dtype), tuple(o.shape), o.contiguous().view(-1).view(torch.uint8).clone())
                                for o in outs]
                except Exception as e:  # noqa: BLE001 - an error is a result too: it must be the same text
                    rec[key] = f"{type(e).__name__}: {e}"
        print(f"   {spec.snake}: {sum(k.split('::', 1)[1].startswith(spec.snake + '[') for k in rec)} calls", flush=True)
    torch.save(rec, out)


def compare(a: Path, b: Path, only: list[str] | None = None) -> int:
    import torch

    ra, rb = torch.load(a), torch.load(b)
    if only:
        ra, rb = ({k: v for k, v in r.items() if k.split("::", 1)[1].split("[", 1)[0] in only} for r in (ra, rb))
    diffs = [f"only in {a.name}: {k}" for k in ra.keys() - rb.keys()] + \
            [f"only in {b.name}: {k}" for k in rb.keys() - ra.keys()]
    same = 0
    for k in sorted(ra.keys() & rb.keys()):
        x, y = ra[k], rb[k]
        if isinstance(x, str) or isinstance(y, str):
            ok = x == y if isinstance(x, str) and isinstance(y, str) else False
        else:
            ok = len(x) == len(y) and all(p[0] == q[0] and p[1] == q[1] and torch.equal(p[2], q[2])
                                          for p, q in zip(x, y))
        if ok:
            same += 1
        else:
            diffs.append(f"differs: {k}")
    errors = sum(isinstance(v, str) for v in ra.values())
    print(f"   {same} of {len(ra.keys() | rb.keys())} calls byte-identical ({errors} of them an error, the same text "
          f"on both sides); {len(diffs)} differ")
    for d in diffs[:20]:
        print("     " + d)
    return 1 if diffs or not same else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, help="the other opkit tree (python/, cmake/, ops/)")
    ap.add_argument("--dump", type=Path, help="only record this process's opkit to this file")
    ap.add_argument("--mode", default="default", choices=("quick", "default", "full"))
    ap.add_argument("--ops", nargs="*", help="only these ops (snake names)")
    ap.add_argument("--compare", type=Path, nargs=2, help="only compare two recorded files")
    args = ap.parse_args()
    if args.dump:
        dump(args.dump, args.mode, args.ops)
        return
    if args.compare:
        sys.exit(compare(*args.compare, args.ops))
    if not args.before:
        ap.error("--before DIR or --dump OUT")
    tmp = Path(tempfile.mkdtemp(prefix="opkit-bits-"))
    cache = os.environ.get("OPKIT_CACHE_DIR") or str(tmp / "cache")
    here = Path(__file__).resolve()
    files = {}
    for side, pythonpath in (("before", args.before.resolve() / "python"), ("after", here.parents[1] / "python")):
        env = dict(os.environ, PYTHONPATH=str(pythonpath), OPKIT_CACHE_DIR=f"{cache}-bits-{side}")
        files[side] = tmp / f"{side}.pt"
        print(f"  -- {side}: {pythonpath}", flush=True)
        subprocess.run([sys.executable, str(here), "--dump", str(files[side]), "--mode", args.mode,
                        *(["--ops", *args.ops] if args.ops else [])], env=env, check=True, cwd=tmp)
    sys.exit(compare(files["before"], files["after"], args.ops))


if __name__ == "__main__":
    main()
