"""A checked launch over a large tensor list whose kernel touches 256 bytes: the list's padding state is set up at
every checked launch (opkit_emu/gm_pad.h gm_pad_begin; docs/emulator.md "Data extent", its cost). With one table
per member's padding it costs the padding (here 8 x 64 bytes), not the list: the same launch without members (all
of the buffer data, no padding) is the baseline. --before TREE runs the same measurement with another checkout's
python/ (e.g. a tree whose table spanned the list) in a child, so both sides come from one run.

    PYTHONPATH=python python benchmarks/bench_gm_pad_list.py [--members 8 --member-mb 32 --repeat 5] [--before TREE]

Prints the median wall time per launch with and without members, and the growth of the process's peak RSS over the
launches with members (a list-sized table per launch shows as about the list's size)."""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _bench

ROOT = Path(__file__).resolve().parents[1]

KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void bench_gm_pad_list(GM_ADDR y, GM_ADDR tiling) {
  (void)tiling;
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 256);
  LocalTensor<half> t = buf.Get<half>();
  GlobalTensor<half> yg;
  yg.SetGlobalBuffer((__gm__ half*)y, 128);
  DataCopy(t, yg, 128);  // 256 bytes inside the first member's data
  PipeBarrier<PIPE_ALL>();
  DataCopy(yg, t, 128);
}
"""


def measure(tree: str | None, members: int, member_mb: int, repeat: int) -> dict:
    import numpy as np
    opkit = _bench.import_opkit(Path(tree) if tree else ROOT / "python")
    from opkit.emulator.abi import KernelModule
    from opkit.emulator.modules import compile_module
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "bench_gm_pad_list.cpp"
        src.write_text(KERNEL)
        mod = KernelModule(compile_module(src, "bench_gm_pad_list", 2, Path(d) / "modules", opt="-O1"))
        member = member_mb << 20
        y = np.zeros(members * member, np.uint8)
        lst = [(i * member, member - 64, member) for i in range(members)]  # 64 bytes of padding each
        tiling = np.zeros(8, np.uint32)
        mod.launch([y, tiling], 1)  # warm-up: the runtime object loaded, the pool up
        with_members, without = [], []
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        for _ in range(repeat):
            t = time.perf_counter()
            mod.launch([y, tiling], 1, list_members=[lst, None])
            with_members.append(time.perf_counter() - t)
            t = time.perf_counter()
            mod.launch([y, tiling], 1)
            without.append(time.perf_counter() - t)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0
    return {"opkit": opkit.__file__, "with": statistics.median(with_members), "without": statistics.median(without),
            "rss_mb": rss / 1024}


def report(name: str, r: dict) -> None:
    print(f"   {name} ({r['opkit']}): with members {r['with'] * 1e3:.2f} ms/launch, without {r['without'] * 1e3:.2f}"
          f" ms/launch, peak RSS grew {r['rss_mb']:.0f} MB over the launches")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--members", type=int, default=8)
    ap.add_argument("--member-mb", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--before", help="another checkout's python/ to measure too, in a child")
    ap.add_argument("--tree", help=argparse.SUPPRESS)  # the child's side: print JSON
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.json:
        print(json.dumps(measure(a.tree, a.members, a.member_mb, a.repeat)))
        return
    print(f"== {a.members} members of {a.member_mb} MB ({a.members * a.member_mb} MB list), 64 B padding each, "
          f"median of {a.repeat}; {_bench.load()}")
    sides = [("this tree", None)] + ([("before", a.before)] if a.before else [])
    for name, tree in sides:  # each in a child: a fresh process, its own peak RSS and opkit
        cmd = [sys.executable, __file__, "--json", "--members", str(a.members), "--member-mb", str(a.member_mb),
               "--repeat", str(a.repeat)] + (["--tree", tree] if tree else [])
        out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True).stdout  # its errors on screen
        report(name, json.loads(out.strip().splitlines()[-1]))
    print(f"   after: {_bench.load()}")


if __name__ == "__main__":
    main()
