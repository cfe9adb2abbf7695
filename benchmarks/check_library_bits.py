"""Bits unchanged: every case of the bundled library, run through two opkit trees' builds, gives the same bytes.

    nice -n 10 python benchmarks/check_library_bits.py --before DIR [--mode default|quick|full]
    python benchmarks/check_library_bits.py --dump OUT.pt [--mode ...]      # this process's opkit only

``--before DIR``: an opkit tree (DIR/python, DIR/cmake, DIR/ops: `git archive main cmake python ops templates |
tar -x -C DIR`). Each side runs in its own process with its own bundled-op cache (OPKIT_CACHE_DIR + "-bits-<side>",
built on first use), calls every ascendc op of the library on every case of the harness matrix (inputs from
opkit.harness.cases.make_inputs, the harness's own) through ``torch.ops.opkit`` and ``torch.ops.opkit_naive``
with the emulator's checks on (``--checks always fast``: also with the rules skipped, the fast path), and records
each output's bytes (or the error text). The two records must be equal byte for byte, case by case; the first
differences are printed and the exit status is 1. A case that errors counts apart: an error on one side only is a
difference, the same error on both sides fails too unless ``--allow-errors`` (nothing was compared). Each side also
records whether the kernel modules it loaded link the emulator runtime object (config.h OPKIT_EMU_RT_FLAVOUR in
their symbols); the after side must, unless ``--after-header-only``.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import re
import tempfile
from pathlib import Path

RUNTIME_KEY = "__runtime_linked__"   # (kernel modules loaded, of them linking the runtime object)


def loaded_modules_runtime() -> tuple[int, int]:
    """This process's mapped kernel modules and how many carry the runtime object's flavour symbol."""
    paths = {line.split()[-1] for line in Path("/proc/self/maps").read_text().splitlines()
             if re.search(r"/kernel_\w+\.so$", line)}
    linked = 0
    for p in paths:
        syms = subprocess.run(["nm", p], capture_output=True, text=True, check=True).stdout
        linked += "opkit_emu_runtime_flavour_" in syms
    return len(paths), linked


def dump(out: Path, mode: str, only: list[str] | None = None, checks: tuple[str, ...] = ("always",)) -> None:
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
                inputs = make_inputs(spec, case)
                for check in checks:
                    key = f"{ns}::{spec.snake}[{case.id}]" + ("" if check == "always" else f"@{check}")
                    try:
                        with torch.no_grad(), emulator_checks(check):
                            res = fn(*[i.clone() if isinstance(i, torch.Tensor) else i for i in inputs],
                                     **case.attrs)
                        outs = res if isinstance(res, (tuple, list)) else (res,)
                        rec[key] = [(str(o.dtype), tuple(o.shape), o.contiguous().view(-1).view(torch.uint8).clone())
                                    if isinstance(o, torch.Tensor) else ("value", repr(o), None) for o in outs]
                    except Exception as e:  # noqa: BLE001 - an error is a result too: it must be the same text
                        rec[key] = f"{type(e).__name__}: {e}"
        print(f"   {spec.snake}: {sum(k.split('::', 1)[1].startswith(spec.snake + '[') for k in rec)} calls", flush=True)
    rec[RUNTIME_KEY] = loaded_modules_runtime()
    torch.save(rec, out)


def first_difference(x: list, y: list) -> str:
    """Where two records of one call first differ: output, element, both values' bits (a NaN's sign shows)."""
    import torch

    for i, (p, q) in enumerate(zip(x, y)):
        if p[:2] != q[:2]:
            return f" (output {i}: {p[0]} {p[1]} against {q[0]} {q[1]})"
        if p[2] is None or q[2] is None or torch.equal(p[2], q[2]):
            continue
        size = getattr(torch, p[0].split(".")[-1]).itemsize
        j = int((p[2] != q[2]).nonzero()[0]) // size
        word = {1: "%02x", 2: "%04x", 4: "%08x", 8: "%016x"}[size]
        bits = [word % int.from_bytes(bytes(t[j * size:(j + 1) * size].tolist()), "little") for t in (p[2], q[2])]
        return f" (output {i}, element {j}: 0x{bits[0]} against 0x{bits[1]})"
    return f" ({len(x)} outputs against {len(y)})"


def compare(a: Path, b: Path, only: list[str] | None = None, allow_errors: bool = False,
            after_header_only: bool = False) -> int:
    import torch

    ra, rb = torch.load(a), torch.load(b)
    fails = []
    runtime = {name: r.pop(RUNTIME_KEY, (0, 0)) for name, r in ((a.name, ra), (b.name, rb))}
    for name, (n, linked) in runtime.items():   # a tree older than OPKIT_EMU_RT_FLAVOUR counts as not linking
        print(f"   {name}: {n} kernel modules loaded, {linked} of them link the emulator runtime object")
    n, linked = runtime[b.name]
    if not after_header_only and (n == 0 or linked != n):
        fails.append(f"{b.name}: {n - linked} of {n} kernel modules do not link the runtime object")
    if only:
        ra, rb = ({k: v for k, v in r.items() if k.split("::", 1)[1].split("[", 1)[0] in only} for r in (ra, rb))
    diffs = [f"only in {a.name}: {k}" for k in ra.keys() - rb.keys()] + \
            [f"only in {b.name}: {k}" for k in rb.keys() - ra.keys()]
    same, both_error = 0, []
    for k in sorted(ra.keys() & rb.keys()):
        x, y = ra[k], rb[k]
        if isinstance(x, str) and isinstance(y, str):
            (both_error if x == y else diffs).append(k if x == y else f"errors differ: {k}")
            continue
        if isinstance(x, str) or isinstance(y, str):
            diffs.append(f"errors on one side only: {k}: {x if isinstance(x, str) else y}")
            continue
        if len(x) == len(y) and all(p[0] == q[0] and p[1] == q[1] and (p[2] is None and q[2] is None or
                                                                        torch.equal(p[2], q[2]))
                                    for p, q in zip(x, y)):
            same += 1
        else:
            diffs.append(f"differs: {k}{first_difference(x, y)}")
    print(f"   {same} of {len(ra.keys() | rb.keys())} calls byte-identical; {len(both_error)} the same error on "
          f"both sides (not compared); {len(diffs)} differ")
    for d in diffs[:20]:
        print("     " + d)
    if both_error and not allow_errors:
        fails.append(f"{len(both_error)} calls error on both sides (--allow-errors to accept), first: "
                     f"{both_error[0]}: {ra[both_error[0]]}")
    for f in fails:
        print("   FAIL: " + f)
    return 1 if diffs or fails or not same else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, help="the other opkit tree (python/, cmake/, ops/)")
    ap.add_argument("--dump", type=Path, help="only record this process's opkit to this file")
    ap.add_argument("--mode", default="default", choices=("quick", "default", "full"))
    ap.add_argument("--ops", nargs="*", help="only these ops (snake names)")
    ap.add_argument("--compare", type=Path, nargs=2, help="only compare two recorded files")
    ap.add_argument("--checks", nargs="+", default=["always"], choices=("always", "fast"),
                    help="emulator_checks modes each case runs under (fast: the rules skipped)")
    ap.add_argument("--allow-errors", action="store_true", help="a call erroring alike on both sides passes")
    ap.add_argument("--after-header-only", action="store_true",
                    help="the after side need not link the runtime object")
    args = ap.parse_args()
    if args.dump:
        dump(args.dump, args.mode, args.ops, tuple(args.checks))
        return
    if args.compare:
        sys.exit(compare(*args.compare, args.ops, args.allow_errors, args.after_header_only))
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
                        "--checks", *args.checks, *(["--ops", *args.ops] if args.ops else [])],
                       env=env, check=True, cwd=tmp)
    sys.exit(compare(files["before"], files["after"], args.ops, args.allow_errors, args.after_header_only))


if __name__ == "__main__":
    main()
