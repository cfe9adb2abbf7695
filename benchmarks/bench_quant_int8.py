"""Issue 38 item 2: an INT8 conv/linear variant against a plain PyTorch FP32 forward, before and after, one run.

"before": every quantized layer's integer accumulation per call as it was (``exact_product``: max|x| measured
each call, then one float32 conv if K*max|x|*max|w| < 2^24, else two float32 convs on 4-bit weight halves, else
float64). "after": the layer's plan chosen once when the variant is built (``plan_chunks``): one float32 conv per
chunk of input channels whose bound |x_code| * sum|w_code| stays below 2^24, chunks summed in float64.
Both paths run on the same batches back to back with the plain forward (each side ``--repeats`` times per batch,
interleaved, the fastest wall time counting; CPU seconds of the process printed too); their outputs must be equal bit for bit
(the script fails otherwise).

Models: benchmarks/_models.py (random init, 1000 classes), 224x224, batch 16 by default; the INT8 variant is
``opkit quant``'s int8-default row (AMCT's default config, ARQ + IFMR calibrated on one other batch) under
cann-force-fp16, prepared as `opkit eval` runs it.

    python benchmarks/bench_quant_int8.py [--models resnet18,resnet50] [--batches 2] [--batch-size 16]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from collections import Counter

from _bench import ROOT, banner, load

import torch

sys.path.insert(0, str(ROOT / "benchmarks"))
import _models  # noqa: E402

GOAL = 1.5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="resnet18,resnet50")
    ap.add_argument("--batches", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--repeats", type=int, default=2, help="each side timed this many times per batch, "
                    "interleaved; the fastest counts (a shared machine's load comes and goes)")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: PyTorch's default); with 1 the "
                    "CPU seconds are the calling thread's, robust to other work on a shared machine")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    clock = time.thread_time if a.threads == 1 else time.process_time
    os.chdir(tempfile.gettempdir())
    from opkit.quant.calibrate import calibrate
    from opkit.quant.config import default_config
    from opkit.quant.graph import read_graph
    from opkit.quant.modes import QuantLayer
    from opkit.quant.variant import build_variant
    banner(f"issue 38 item 2: INT8 variant vs plain FP32 forward, {a.batches} x {a.batch_size} images "
           f"{a.size}x{a.size}, torch threads {torch.get_num_threads()}, CPU capability "
           f"{torch.backends.cpu.get_cpu_capability()}")
    rows = []
    for name in a.models.split(","):
        model = _models.MODELS[name]()
        xs, calib = _models.images(a.batches, a.batch_size, a.size)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cfg = default_config(model)
            graph = read_graph(model, (calib[:2],))
            t = time.perf_counter()
            qv = build_variant(model, cfg, calibrate(model, calib, cfg, graph), graph)
            t_build = time.perf_counter() - t
            fn = qv.as_variant().prepare(model)
        plans = Counter()
        for m in qv.layers.values():
            if isinstance(m, QuantLayer):
                p = m.chunk_plan()
                plans["per-call (no plan)" if p is None else f"{len(p)} fp32 conv(s)"] += 1
        QuantLayer.planned = False
        fn(xs[0])
        QuantLayer.planned = True
        fn(xs[0])
        wall = {"plain": 0.0, "before": 0.0, "after": 0.0}
        cpu = dict(wall)

        def plain(x):
            with torch.no_grad():
                return model(x)

        def side(planned):
            def run(x):
                QuantLayer.planned = planned
                return fn(x)
            return run
        sides = {"plain": plain, "before": side(False), "after": side(True)}
        for x in xs:
            best = {k: (float("inf"), 0.0) for k in sides}
            outs = {}
            for _ in range(a.repeats):
                for k, f in sides.items():
                    c, t = clock(), time.perf_counter()
                    outs[k] = f(x)
                    w = time.perf_counter() - t
                    if w < best[k][0]:
                        best[k] = (w, clock() - c)
            for k in sides:
                wall[k] += best[k][0]
                cpu[k] += best[k][1]
            if not torch.equal(outs["before"], outs["after"]):
                raise SystemExit(f"{name}: the planned path's output differs from the per-call path's")
        QuantLayer.planned = True
        t_plain, t_before, t_after = wall["plain"], wall["before"], wall["after"]
        print(f"   {name:10s} CPU seconds: plain {cpu['plain']:.2f}, int8 before {cpu['before']:.2f} "
              f"({cpu['before'] / cpu['plain']:.2f}x), after {cpu['after']:.2f} ({cpu['after'] / cpu['plain']:.2f}x)")
        print(f"   {name:10s} plain {t_plain:6.2f} s   int8 before {t_before:6.2f} s ({t_before / t_plain:4.2f}x)   "
              f"int8 after {t_after:6.2f} s ({t_after / t_plain:4.2f}x)   outputs equal bit for bit; "
              f"variant built in {t_build:.1f} s; layers: {dict(plans)}", flush=True)
        rows.append((name, t_before / t_plain, t_after / t_plain))
    print(f"   after: {load()}")
    for name, before, after in rows:
        print(f"   {name} int8: {before:.2f}x -> {after:.2f}x a plain forward (goal <= {GOAL}x) -> "
              f"{'met' if after <= GOAL else f'missed by {after / GOAL:.2f}x'}")


if __name__ == "__main__":
    main()
