"""Eval throughput (images/s) of `opkit eval`'s runners: in process, local worker processes (the default: one
per core) and a local Ray instance with 2 CPUs (2 workers), side by side in one run with plain PyTorch FP32
inference of the same model.

    python benchmarks/bench_eval.py [--n 96] [--size 64] [--policy cann-force-fp16] [--model convnext-example]
    python benchmarks/bench_eval.py --model resnet18 --size 224 --n 64      # issue 38: --workers 2 >= 1.8x --workers 1

Model: the ConvNeXt example with its head fitted to the generated labelled set (examples/convnext/labelled.py,
written to a temporary folder), or one of benchmarks/_models.py (resnet18, resnet50, convnext_t, convnext_b: the
published layer shapes, seeded random init) on random images labelled with its own FP32 top-1. Every runner evaluates FP32 and the policy variant per image (two model runs,
the second through the simulation engine), so "images/s" counts labelled images fully evaluated. Wall time
includes starting the workers (spawning processes, importing torch, loading the model and opkit's kernels
from the cache; Ray: starting the instance too), as a user sees it. The machine's core count and load are
printed: on a shared machine the figures move with the load.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import _models  # noqa: E402  (the benchmark models, also what the workers import by spec)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=96)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--policy", default="cann-force-fp16")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--model", default="convnext-example", choices=["convnext-example", *_models.MODELS])
    a = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="opkit-bench-eval-"))
    os.environ["CONVNEXT_DATA"] = str(tmp)          # read by the model factory, in every worker too
    sys.path.insert(0, str(ROOT / "examples" / "convnext"))
    import labelled
    import torch

    from opkit.data import load_dataset
    from opkit.evaluate import SimVariant, evaluate

    if a.model == "convnext-example":
        made = labelled.make(tmp, n_val=a.n, size=a.size)
        spec, model = f"{ROOT / 'examples' / 'convnext' / 'labelled.py'}:classifier", labelled.classifier()
    else:
        model = _models.MODELS[a.model]()
        x = torch.cat(_models.images(1, a.n, a.size)[0])
        with torch.no_grad():
            torch.save({"x": x, "y": model(x).argmax(-1)}, tmp / "val.pt")
        made, spec = {"fp32_top1": 100.0}, f"{ROOT / 'benchmarks' / '_models.py'}:{a.model}"
    data = load_dataset(tmp / "val.pt")
    variant = SimVariant(a.policy, policy=a.policy)
    variant.warm()                                    # kernels built before any timing
    print(f"== eval throughput: {a.model}, {a.n} labelled images {a.size}x{a.size}, FP32 + {a.policy} per "
          f"image, batch {a.batch_size}; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"   FP32 top-1 on this draw (labels: the fitted head's set, or the model's own top-1): {made['fp32_top1']:.1f}%")
    x, _ = data.batch(range(a.n))
    with torch.no_grad():
        model(x[:a.batch_size])
        t0 = time.perf_counter()
        for s in range(0, a.n, a.batch_size):
            model(x[s:s + a.batch_size])
        torch_s = time.perf_counter() - t0
    print(f"   {'plain PyTorch FP32 forward (reference, no simulation)':<58}{a.n / torch_s:8.1f} images/s")

    rows = [("in process (--workers 1)", {"workers": 1}),
            (f"local processes (--workers {os.cpu_count()}, the default)", {"workers": os.cpu_count()}),
            ("local Ray instance, 2 CPUs (--ray auto)", {"ray": "auto"})]
    ref, rate = None, {}
    for what, kw in rows:
        t0 = time.perf_counter()
        res = evaluate(spec, data, [variant], batch_size=a.batch_size, **kw)
        dt = time.perf_counter() - t0
        same = "" if ref is None else ("  same predictions" if all(
            (res.predictions[k] == ref.predictions[k]).all() for k in ref.predictions) else "  PREDICTIONS DIFFER")
        ref = ref or res
        rate[what] = a.n / dt
        print(f"   {what:<58}{a.n / dt:8.1f} images/s  ({dt:.1f} s wall, {res.backend}, {res.shards} shards; "
              f"top-1 fp32 {res.topk('fp32'):.1f}%, {a.policy} {res.topk(variant.name):.1f}%){same}")
    one, many = rate[rows[0][0]], rate[rows[1][0]]
    print(f"   --workers {os.cpu_count()} / --workers 1: {many / one:.2f}x (goal >= 1.8x on 2 cores)")
    print(f"   after: load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
