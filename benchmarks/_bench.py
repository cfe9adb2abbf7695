"""Shared helpers of the issue-14 benchmarks (one script per row of its table): machine load, timers,
scratch workspaces and running the real `opkit` command.

Figures on a shared machine: every script prints the load average before and after, and the ratios
it reports come from one run, side by side. Op timings are given twice:
- CPU time of the calling thread, one thread on each side (emulator blocks run inline with
  OPKIT_EMU_THREADS=1, torch.set_num_threads(1)): robust to other work on the machine;
- wall time with every core on each side (what a user sees on an idle machine).
Build timings are wall seconds plus the CPU seconds of the compilers (children): on an idle 2-core
machine the wall time is about CPU / 2 when two compiles can run side by side.
"""
from __future__ import annotations

import contextlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))


def import_opkit(tree: str | os.PathLike | None):
    """opkit from ``tree`` (another checkout's python/, put first: a ``--before`` side) or, None, this one's; exits
    when it came from elsewhere -- else the side would measure this tree twice and report a speed-up of ~1.0x."""
    if tree is not None:
        sys.path.insert(0, str(tree))
    import opkit
    if tree is not None and not Path(opkit.__file__).resolve().is_relative_to(Path(tree).resolve()):
        sys.exit(f"--before: the side imported opkit from {opkit.__file__}, not from {tree} (no python/opkit there?)")
    return opkit


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} CPUs"


def banner(what: str) -> None:
    print(f"== {what}")
    print(f"   before: {load()}")


def done(rows: list[tuple[str, float, float, str]]) -> None:
    """rows: (what, figure, goal, unit) -> 'met' / 'missed by x'. Prints the load after, too."""
    print(f"   after:  {load()}")
    for what, fig, goal, unit in rows:
        verdict = "met" if fig <= goal else f"missed by {fig / goal:.2f}x"
        print(f"   {what}: {fig:.2f}{unit} (goal <= {goal:g}{unit}) -> {verdict}")


def cpu_min(fn, repeat: int = 9, inner: int = 1) -> float:
    """Best-of-`repeat` CPU seconds of this thread per call (warm-up call first)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t = time.thread_time()
        for _ in range(inner):
            fn()
        best = min(best, (time.thread_time() - t) / inner)
    return best


def wall_median(fn, repeat: int = 9, inner: int = 1) -> float:
    fn()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        ts.append((time.perf_counter() - t) / inner)
    return statistics.median(ts)


def run(cmd: list[str], cwd: Path, env: dict | None = None, check: bool = True) -> tuple[float, float, str]:
    """Run a command; (wall seconds, CPU seconds of it and its children, output)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if check and p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout[-3000:]}{p.stderr[-3000:]}")
    return wall, cpu, p.stdout + p.stderr


def opkit_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "opkit", *args]


@contextlib.contextmanager
def scratch_workspace(ops: list[str], keep: bool = False):
    """A temporary workspace holding copies of these bundled ops (`opkit new <Name>`)."""
    ws = Path(tempfile.mkdtemp(prefix="opkit-bench-"))
    try:
        for name in ops:
            run(opkit_cmd("new", name), cwd=ws)
        yield ws
    finally:
        if keep:
            print(f"   kept {ws}")
        else:
            shutil.rmtree(ws, ignore_errors=True)


def touch(path: Path, note: str) -> None:
    time.sleep(0.01)
    path.write_text(path.read_text() + f"\n// {note} {time.time()}\n")


def edit_build(ws: Path, op: str, file: str, extra: tuple[str, ...] = ()) -> tuple[float, float]:
    """Append a comment to ops/<op>/<file>, then `opkit build <op> [extra]`: (wall, CPU seconds)."""
    touch(ws / "ops" / op / file, "edited by benchmarks")
    wall, cpu, _ = run(opkit_cmd("build", op, *extra), cwd=ws)
    return wall, cpu


def op_rows(name: str, cases, repeat: int = 9) -> list[tuple[str, float, float, float, float]]:
    """cases: (label, opkit call, torch call). Returns (label, opkit cpu s, torch cpu s, opkit wall s,
    torch wall s), each pair measured back to back."""
    import torch
    out = []
    for label, ours, ref in cases:
        os.environ["OPKIT_EMU_THREADS"] = "1"
        torch.set_num_threads(1)
        c_ours, c_ref = cpu_min(ours, repeat), cpu_min(ref, repeat)
        with emulator_checks("always"):
            c_checked = cpu_min(ours, repeat)
        os.environ.pop("OPKIT_EMU_THREADS")
        torch.set_num_threads(os.cpu_count() or 1)
        w_ours, w_ref = wall_median(ours, repeat), wall_median(ref, repeat)
        out.append((label, c_ours, c_ref, w_ours, w_ref))
        print(f"   {name} {label:10s} 1 thread CPU: opkit {c_ours * 1e3:8.2f} ms  torch {c_ref * 1e3:7.2f} ms  "
              f"ratio {c_ours / c_ref:5.2f}x | all cores wall: opkit {w_ours * 1e3:8.2f} ms  torch "
              f"{w_ref * 1e3:7.2f} ms  ratio {w_ours / w_ref:5.2f}x | every launch checked: opkit {c_checked * 1e3:8.2f} "
              f"ms 1 thread CPU", flush=True)
    return out


@contextlib.contextmanager
def emulator_checks(mode: str):
    """OPKIT_EMU_CHECKS inside (docs/emulator.md "Checked once, then fast"): the default `once` checks the first
    launch of a shape and runs it fast after that, which is what the op timings above measure (warm-up first)."""
    from opkit.harness.execute import emulator_checks as checks
    with checks(mode):
        yield


def load_ops(ops: list[str], workspace: str | None) -> None:
    """The ops under test: from a built workspace, else the bundled ones (built into the cache once)."""
    import opkit
    t = time.perf_counter()
    if workspace:
        opkit.load(workspace, ops=ops, bundled=False, quiet=True)
    else:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with contextlib.chdir(tempfile.gettempdir()):
                opkit.load(ops=ops)
    print(f"   loaded {', '.join(ops)} in {time.perf_counter() - t:.1f} s")


def add_dtype_arg(ap) -> None:
    ap.add_argument("--dtype", action="append", choices=["float32", "float16", "bfloat16"],
                    help="only these I/O dtypes (default: all three; the goal is judged on float32)")


def torch_dtypes(args) -> list:
    import torch
    return [getattr(torch, d) for d in (args.dtype or ["float32", "float16", "bfloat16"])]


def op_vs_torch(doc: str, title: str, op_name: str, make_inputs, ours, theirs, goal: float) -> None:
    """The body of a one-op row (layer_norm, softmax, gelu): parse --workspace/--repeat/--dtype, load the
    bundled op, time it against PyTorch per dtype and judge the fp32 row's one-thread CPU-time ratio.
    make_inputs(dtype, generator) -> tuple of tensors; ours(op, *inputs) / theirs(*inputs) run one call."""
    import argparse

    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--workspace", default=None)
    ap.add_argument("--repeat", type=int, default=9)
    add_dtype_arg(ap)
    args = ap.parse_args()
    banner(title)
    import torch

    load_ops([op_name], args.workspace)
    op = getattr(torch.ops.opkit, op_name)
    g = torch.Generator().manual_seed(0)
    cases = []
    for dt in torch_dtypes(args):
        xs = make_inputs(dt, g)
        cases.append((str(dt).replace("torch.", ""), lambda xs=xs: ours(op, *xs), lambda xs=xs: theirs(*xs)))
    rows = op_rows(op_name.removesuffix("_fp32"), cases, args.repeat)
    done([(f"{rows[0][0]} CPU-time ratio", rows[0][1] / rows[0][2], goal, "x")])


def cmake() -> str:
    """The CMake that opkit itself uses (the `cmake` pip package, else PATH)."""
    from opkit.toolchain.tools import cmake_exe
    return cmake_exe()
