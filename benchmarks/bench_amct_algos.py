"""Issue 30 benchmark: opkit's implementations of AMCT's algorithms beside AMCT's own, on the tests' models, one run.

- Linear PTQ (opkit.quant.linear_ptq) on the float16 ViT-style encoder of tests/quantdata/encoder.py, the four
  AMCT presets (min-max W8A16, SmoothQuant W8A8, GPTQ W4A16, AWQ W4A16), 2 calibration batches of 8x16 patches;
  beside plain PyTorch: the float16 encoder's forward of the same batches.
- DMQ (opkit.quant.dmq + opkit's calibrate) and ADA (opkit.quant.ada_round, 60 iterations per layer, 40 samples)
  on the 4-layer CNN of tests/quantdata/amct_dmq.py; beside plain PyTorch: the CNN's forward of those samples.
AMCT's columns need OPKIT_AMCT=<checkout> (classic *_pb2.py generated; transformers, onnx installed).
CPU seconds of this process, one torch thread, best of --repeat (AMCT's classic flow exports ONNX each run).

    .venv/bin/python benchmarks/bench_amct_algos.py [--repeat 3]
"""
from __future__ import annotations

import argparse
import contextlib
import io
import logging
import os
import sys
import time

from _bench import ROOT, banner, load

import torch

sys.path.insert(0, str(ROOT / "tests"))


def cpu_best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        with contextlib.redirect_stdout(io.StringIO()):
            fn()
        best = min(best, time.process_time() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    torch.set_num_threads(1)
    logging.disable(logging.WARNING)
    from quantdata import amct_ada, amct_dmq, amct_linear
    from quantdata.encoder import encoder
    from test_ada_round import opkit_ada
    from test_dmq import opkit_dmq
    amct_root = os.environ.get("OPKIT_AMCT")
    banner("AMCT's algorithms: opkit vs AMCT vs plain PyTorch forward, CPU seconds, 1 torch thread, best of "
           f"{a.repeat}{'' if amct_root else ' (OPKIT_AMCT not set: no AMCT column)'}")
    calib, _ = amct_linear.data()
    m16 = encoder()
    with torch.no_grad():
        fwd = cpu_best(lambda: [m16(b) for b in calib], a.repeat)
    print(f"   {'what':28s} {'opkit':>8s} {'AMCT':>8s} {'PyTorch forward':>16s}")
    for name in ("minmax_w8a16", "smoothquant_w8a8", "gptq_w4", "awq_w4"):
        o = cpu_best(lambda: amct_linear.run_opkit(name), a.repeat)
        m = cpu_best(lambda: amct_linear.run_amct(amct_root, name), a.repeat) if amct_root else float("nan")
        print(f"   {'linear ' + name:28s} {o:8.2f} {m:8.2f} {fwd:16.3f}")
    x = amct_dmq.calib(amct_ada.SAMPLES)
    cnn = amct_dmq.net()
    with torch.no_grad():
        fwd = cpu_best(lambda: cnn(x), a.repeat)
    o = cpu_best(opkit_dmq, a.repeat)
    m = cpu_best(lambda: amct_dmq.run_amct(amct_root), a.repeat) if amct_root else float("nan")
    print(f"   {'DMQ + calibration (CNN)':28s} {o:8.2f} {m:8.2f} {fwd:16.3f}")
    cw = {n: n != "fc" for n in amct_dmq.LAYERS}
    o = cpu_best(lambda: opkit_ada(cw), a.repeat)
    m = cpu_best(lambda: amct_ada.run_amct(amct_root), a.repeat) if amct_root else float("nan")
    print(f"   {'ADA 4x60 iterations (CNN)':28s} {o:8.2f} {m:8.2f} {fwd:16.3f}")
    print(f"   after: {load()}")


if __name__ == "__main__":
    main()
