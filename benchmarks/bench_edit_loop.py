"""Issue 38 item 3: edit one kernel.cpp of a fresh LayerNormFP32 workspace -> a module the process can load
(goal <= 5 s), with the rebuild broken down by phase.

    nice -n 10 python benchmarks/bench_edit_loop.py [--rounds 3] [--before DIR] [--keep]

A scratch workspace (`opkit new LayerNormFP32`), one first `opkit build` (not timed), then per round: change a
constant in kernel.cpp (a new line `static constexpr int opkit_bench_edit = N;`: every compile must run) and
run the real command as a subprocess, once as a full `opkit build` (3 dtypes x 2 variants) and once as the edit
loop `opkit build layer_norm_fp32 --dtype float32`; then a comment-only edit (appended) and undoing every edit,
each with a full `opkit build` (with ccache on PATH these are cache hits). Wall and CPU seconds (the command
and its children). ``--before DIR``: the same rows with the opkit of DIR (DIR/python, DIR/cmake: e.g.
`git archive main cmake python ops templates | tar -x -C DIR`), both sides in one run. The breakdown of each rebuild comes from Ninja's own log (.ninja_log: start
and end of every edge it ran, in ms): each g++ of a translation unit, each link, the build.json copy; what
is left of the wall time is opkit's own (python start + imports, the configure check, the stamps and the
checks after Ninja), and python start + imports is measured alone with `python -c "import opkit.cli"`.
One g++ of the kernel TU is also run by hand with -ftime-report: parse vs. optimise+generate.
"""
from __future__ import annotations

import argparse
import os
import shlex
import statistics
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _bench

OP = "layer_norm_fp32"


def ninja_edges(cmk: Path, since_ms_line: int) -> list[tuple[int, int, str]]:
    """Edges Ninja ran in the last build: .ninja_log lines after ``since_ms_line`` (start ms, end ms, output)."""
    lines = (cmk / ".ninja_log").read_text().splitlines()[since_ms_line:]
    out = []
    for ln in lines:
        if ln.startswith("#"):
            continue
        start, end, _mtime, path, _hash = ln.split("\t")
        out.append((int(start), int(end), path))
    return out


def _label(path: str) -> str:
    if path.endswith(".o"):
        tgt = path.split("CMakeFiles/", 1)[1].split(".dir/", 1)[0]
        return f"g++ {tgt} ({Path(path).name[:-2]})"
    if path.endswith(".so"):
        return f"link {Path(path).name}"
    if path.endswith(".gch"):
        return f"precompiled header {path.split('CMakeFiles/', 1)[1].split('.dir/', 1)[0]}"
    return Path(path).name


_EDITS = [0]


def edit(ws: Path, how: str) -> None:
    """'constant': a new constant line (the compiler sees new code); 'comment': a comment appended (the
    preprocessed source is unchanged)."""
    k = ws / "ops" / OP / "kernel.cpp"
    time.sleep(0.01)
    _EDITS[0] += 1
    line = (f"static constexpr int opkit_bench_edit_{_EDITS[0]} = {_EDITS[0]};" if how == "constant"
            else f"// edited by bench_edit_loop {time.time()}")
    k.write_text(k.read_text() + line + "\n")


def round_trip(ws: Path, extra: tuple[str, ...], env: dict | None, how: str = "constant") -> dict:
    """Edit kernel.cpp (or undo every edit: how='undo'), run `opkit build [extra]`; wall/CPU and Ninja's edges."""
    cmk = ws / "build" / "opkit" / "cpu" / "_cmake"
    n_before = len((cmk / ".ninja_log").read_text().splitlines())
    if how == "undo":
        k = ws / "ops" / OP / "kernel.cpp"
        k.write_text(k.read_text().split("static constexpr int opkit_bench_edit_", 1)[0])
    else:
        edit(ws, how)
    wall, cpu, _ = _bench.run(_bench.opkit_cmd("build", *extra), cwd=ws, env=env)
    edges = ninja_edges(cmk, n_before)
    span = (max(e for _, e, _ in edges) - min(s for s, _, _ in edges)) / 1e3 if edges else 0.0
    return {"wall": wall, "cpu": cpu, "edges": edges, "ninja": span}


def startup_seconds(env: dict | None, repeat: int = 5) -> float:
    """python start + the imports on `opkit build`'s path (opkit.cli), median wall."""
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import opkit.cli"], check=True, env=env)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def time_report(ws: Path) -> str:
    """-ftime-report of the fp32 kernel TU's own g++ command (Ninja's): where a compile's seconds go."""
    cmk = ws / "build" / "opkit" / "cpu" / "_cmake"
    cmds = subprocess.run([_bench_ninja(), "-C", str(cmk), "-t", "commands", f"{OP}__kernel_fp32"],
                          capture_output=True, text=True, check=True).stdout.splitlines()
    cmd = next(c for c in cmds if "kernel_module.cpp.o" in c and " -c " in c)
    argv = shlex.split(cmd)
    argv[argv.index("-o") + 1] = "/dev/null"
    r = subprocess.run(argv + ["-ftime-report"], cwd=cmk, capture_output=True, text=True)
    keep = ("phase parsing", "phase lang. deferred", "template instantiation", "phase opt and generate", "TOTAL")
    return "\n".join("      " + ln.strip() for ln in r.stderr.splitlines() if ln.strip().startswith(keep))


def _bench_ninja() -> str:
    from opkit.toolchain.tools import ninja_exe
    return ninja_exe()


def report(label: str, runs: list[dict], startup: float, breakdown: bool = True) -> tuple[float, float]:
    wall = statistics.median(r["wall"] for r in runs)
    cpu = statistics.median(r["cpu"] for r in runs)
    print(f"   {label}: wall {wall:5.2f} s, CPU {cpu:5.2f} s (median of {len(runs)})", flush=True)
    if not breakdown:
        return wall, cpu
    mid = sorted(runs, key=lambda r: r["wall"])[len(runs) // 2]
    print(f"     breakdown of the median round (wall {mid['wall']:.2f} s):")
    print(f"       python start + imports (opkit.cli)        {startup:5.2f} s")
    print(f"       ninja, first edge start -> last edge end  {mid['ninja']:5.2f} s")
    for s, e, p in sorted(mid["edges"]):
        print(f"         {(e - s) / 1e3:5.2f} s  [{s / 1e3:6.2f} .. {e / 1e3:6.2f}]  {_label(p)}")
    rest = mid["wall"] - startup - mid["ninja"]
    print(f"       opkit's own rest (configure check, stamps, stale-module check, bundled needs) {rest:5.2f} s")
    return wall, cpu


ROWS = (("constant edit, full `opkit build` (3 dtypes x 2 variants; 5 modules since issue 38 item 3)", (), "constant",
         True),
        ("constant edit, edit loop `opkit build layer_norm_fp32 --dtype float32`", (OP, "--dtype", "float32"),
         "constant", True),
        ("comment-only edit, full `opkit build`", (), "comment", False),
        ("undo every edit, full `opkit build`", (), "undo", False))


def side(name: str, env: dict | None, rounds: int, keep: bool) -> list[tuple[str, float, float]]:
    print(f"  -- {name}", flush=True)
    rows = []
    ws = Path(tempfile.mkdtemp(prefix=f"opkit-bench-{name}-"))
    try:
        _bench.run(_bench.opkit_cmd("new", "LayerNormFP32"), cwd=ws, env=env)
        _bench.run(_bench.opkit_cmd("build"), cwd=ws, env=env)                # first build, not timed
        startup = startup_seconds(env)
        noop = [_bench.run(_bench.opkit_cmd("build", OP, "--dtype", "float32"), cwd=ws, env=env)[:2]
                for _ in range(rounds)]
        print(f"   nothing changed, --dtype float32: wall {statistics.median(w for w, _ in noop):5.2f} s, "
              f"CPU {statistics.median(c for _, c in noop):5.2f} s", flush=True)
        for label, extra, how, breakdown in ROWS:
            _bench.run(_bench.opkit_cmd("build"), cwd=ws, env=env)            # every module present again
            runs = [round_trip(ws, extra, env, how) for _ in range(rounds if how != "undo" else 1)]
            rows.append((f"{name}: {label}", *report(label, runs, startup, breakdown)))
        if name == "after":
            print("   one g++ of the fp32 kernel TU, -ftime-report (CPU s / wall s):")
            print(time_report(ws))
    finally:
        if keep:
            print(f"   kept {ws}")
        else:
            shutil.rmtree(ws, ignore_errors=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--before", type=Path, default=None, help="an opkit tree (python/, cmake/) to measure as 'before'")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    _bench.banner("edit one kernel.cpp of LayerNormFP32 -> loadable (issue 38 item 3)")
    print("   " + subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    print(f"   ccache: {shutil.which('ccache') or 'not on PATH'}"
          f"{' (OPKIT_NO_CCACHE set: not used)' if os.environ.get('OPKIT_NO_CCACHE') else ''}")
    rows = []
    if args.before:
        env = dict(os.environ, PYTHONPATH=str(args.before.resolve() / "python"))
        if env.get("OPKIT_CACHE_DIR"):   # its own bundled-op cache: one build tree configured from one source
            env["OPKIT_CACHE_DIR"] += "-before"
        rows += side("before", env, args.rounds, args.keep)
    rows += side("after", None, args.rounds, args.keep)
    print("   " + subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    _bench.done([(f"{label}, wall", wall, 5.0, " s") for label, wall, _ in rows] +
                [(f"{label}, CPU / 2 cores (idle-machine estimate)", cpu / 2, 5.0, " s") for label, _, cpu in rows])


if __name__ == "__main__":
    main()
