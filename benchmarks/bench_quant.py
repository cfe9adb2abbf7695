"""Issue 21 benchmark: `opkit quant`'s calibration and strategy table on a ResNet-18-sized model, 256 calibration
and 1,000 evaluation images, beside plain PyTorch FP32 inference of the same 1,000 images (one run, this machine).

Model: examples/resnet/model.py ResNet-18 (11.2 M parameters at 1000 classes; 100 classes here), random init with
BatchNorm statistics measured on the calibration images, inputs 3x64x64 (a CPU-sized image; the layer count and
widths are ResNet-18's). Labels are the FP32 model's own top-1, so FP32 scores 100% by construction and every
row's drop is its disagreement with FP32.

    .venv/bin/python benchmarks/bench_quant.py [--size 64] [--eval 1000] [--calib 256]
"""
from __future__ import annotations

import argparse
import sys
import time

from _bench import ROOT, banner, load

import _models

import torch

sys.path.insert(0, str(ROOT / "examples" / "resnet"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--eval", type=int, default=1000)
    ap.add_argument("--calib", type=int, default=256)
    ap.add_argument("--batch", type=int, default=50)
    a = ap.parse_args()
    from model import ResNet18

    from opkit.accuracy.policy import load_policy
    from opkit.evaluate import FP32
    from opkit.quant.calibrate import calibrate
    from opkit.quant.config import default_config
    from opkit.quant.builder import Deploy, VariantBuilder
    from opkit.quant.scoring import Run, Scorer
    from opkit.quant.strategies import fp32_bytes, latency, profile_ops

    banner(f"opkit quant: ResNet-18 (100 classes) at 3x{a.size}x{a.size}, {a.calib} calibration / {a.eval} "
           f"evaluation images, torch threads {torch.get_num_threads()}")
    torch.manual_seed(0)
    m = ResNet18(num_classes=100).eval()
    g = torch.Generator().manual_seed(1)
    xc = torch.randn(a.calib, 3, a.size, a.size, generator=g)
    xe = torch.randn(a.eval, 3, a.size, a.size, generator=g)
    _models.measure_batchnorm(m, xc)
    t = time.monotonic()
    with torch.no_grad():
        y = torch.cat([m(xe[i:i + a.batch]).argmax(1) for i in range(0, a.eval, a.batch)])
    t_torch = time.monotonic() - t
    print(f"   PyTorch FP32 inference of {a.eval} images: {t_torch:.1f} s ({a.eval / t_torch:.0f} images/s)")

    from opkit.data import TensorSet
    ds = TensorSet(xe, y)
    s = VariantBuilder(m, xc, Deploy(load_policy("cann-force-fp16")), lambda msg: None)
    scorer = Scorer(m, ds, xe[:16], Run(batch_size=a.batch, workers=1), lambda msg: None)
    cfg = default_config(m)
    t = time.monotonic()
    recs = calibrate(m, xc, cfg, s.graph)
    t_cal = time.monotonic() - t
    print(f"   calibration (ARQ + IFMR, {len(cfg.quant_layers)} layers, {a.calib} images): {t_cal:.1f} s")
    variants = {"fp16": s.float_variant(), "int8-default": s.variant(cfg, "int8-default", recs)}
    ends = cfg.quant_layers
    t = time.monotonic()
    for name, c in (("int8-per-layer", cfg.with_channel_wise(False)),
                    ("int8-first-last-float", cfg.with_float([ends[0], ends[-1]]))):
        variants[name] = s.variant(c, name)
    t_cal2 = time.monotonic() - t
    t = time.monotonic()
    scores = scorer.score([FP32] + list(variants.values()))
    t_score = time.monotonic() - t
    ops = profile_ops(m, xc[:1])
    print(f"   strategy table: {len(scores)} rows x {a.eval} images scored in {t_score:.1f} s "
          f"({len(scores) * a.eval / t_score:.0f} images/s over all rows; calibrating the two extra configs "
          f"{t_cal2:.1f} s)")
    print(f"   {'row':22s} {'top-1':>7s} {'top-5':>7s} {'weights':>10s} {'latency (910B estimate)':>24s}")
    for name, sc in scores.items():
        t1, t5 = sc.top1, sc.top5
        v = variants.get(name)
        wb = fp32_bytes(m) if v is None else v.weight_bytes(m)
        lat = latency(ops, None if v is None else v.layers, fp32=v is None)["seconds"]
        print(f"   {name:22s} {t1:6.1f}% {t5:6.1f}% {wb / 2**20:8.2f} MB {lat * 1e6:20.1f} us")
    print(f"   after:  {load()}")


if __name__ == "__main__":
    main()
