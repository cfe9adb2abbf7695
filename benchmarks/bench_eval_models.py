"""Issue 31: each simulated variant's forward against a plain PyTorch FP32 forward of the same model, side by side
in one run: ResNet-18/50- and ConvNeXt-T/B-style classifiers (benchmarks/_models.py, random init, 1000 classes),
224x224 inputs, batch 16; ``hf_convnext_t`` / ``hf_resnet18``: the issue's held-out transformers models (random
init, seeded; needs transformers).

    python benchmarks/bench_eval_models.py [--models resnet18,resnet50,convnext_t,convnext_b,hf_convnext_t,hf_resnet18]
        [--batches 1]
        [--variants cann-force-fp16,cann-allow-mix-precision,torch-npu-autocast,int8,patch]
        [--save preds.json] [--compare preds.json]

Per model: ``--batches`` batches of 16 random N(0,1) images (seeded; 16 images by default, sized for a 2-core
machine; ConvNeXt-B costs about 4x ConvNeXt-T). Each variant is prepared once (kernels loaded, INT8
calibrated on one batch of 16 other images: ``opkit quant``'s default config, ARQ + IFMR), warmed on the first
batch, then timed over every batch with the same torch threads as the plain forward; plain and variant are timed
back to back, batch by batch, and the ratio is wall(variant) / wall(plain) summed over the batches (CPU seconds
of the process are printed too). ``int8``: AMCT's default config under cann-force-fp16 (``opkit quant``'s
int8-default row); ``patch``: opkit.patch under cann-force-fp16 (``opkit eval --patch``).
``--buffers both`` times every variant twice back to back, every cast into fresh memory (before) and into the
engine's reused buffers (after), and says whether the logits are bit-identical. ``--save`` writes every
variant's top-1 per image; ``--compare`` reads such a file (written by another version
of opkit) and prints how many images' top-1 differ -- the "same predictions as before" check of the issue.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import warnings

from _bench import ROOT, banner, load

import torch

sys.path.insert(0, str(ROOT / "benchmarks"))
import _models  # noqa: E402

GOAL = 1.5


class HFLogits(torch.nn.Module):
    """A transformers image classifier as opkit eval scores it: pixel_values in, logits out."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(pixel_values=x).logits


def hf_model(name: str) -> torch.nn.Module:
    """The issue's held-out models: transformers ConvNeXt-T / ResNet-18 (their default configs, random init, seeded,
    1000 classes); needs `pip install transformers`."""
    import transformers as T
    torch.manual_seed(0)
    cfg = {"hf_convnext_t": lambda: T.ConvNextForImageClassification(T.ConvNextConfig(num_labels=1000)),
           "hf_resnet18": lambda: T.ResNetForImageClassification(T.ResNetConfig(
               layer_type="basic", depths=[2, 2, 2, 2], hidden_sizes=[64, 128, 256, 512], num_labels=1000))}[name]
    return HFLogits(cfg()).eval()


def variant_fn(kind: str, model, calib: torch.Tensor):
    """(fn(batch) -> logits, notes) for one variant of ``model``, prepared as `opkit eval` / `opkit quant` do."""
    from opkit.evaluate import SimVariant
    if kind == "int8":
        from opkit.quant.calibrate import calibrate
        from opkit.quant.config import default_config
        from opkit.quant.graph import read_graph
        from opkit.quant.variant import build_variant
        cfg = default_config(model)
        graph = read_graph(model, (calib[:2],))
        v = build_variant(model, cfg, calibrate(model, calib, cfg, graph), graph).as_variant()
    elif kind == "patch":
        v = SimVariant("patch", policy="cann-force-fp16", patch=True)
    else:
        v = SimVariant(kind, policy=kind)
    getattr(v, "warm", lambda: None)()
    return v.prepare(model), v.notes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="resnet18,resnet50,convnext_t,convnext_b")
    ap.add_argument("--variants", default="cann-force-fp16,cann-allow-mix-precision,torch-npu-autocast,int8,patch")
    ap.add_argument("--batches", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--save", default=None)
    ap.add_argument("--compare", default=None)
    ap.add_argument("--buffers", default="on", choices=["on", "off", "both"],
                    help="the engine's reused cast buffers (accuracy/simulate.py); both: off then on, back to back")
    a = ap.parse_args()
    from opkit.accuracy import simulate as S
    os.chdir(tempfile.gettempdir())     # not inside the checkout: opkit loads its bundled kernels from the cache
    banner(f"issue 31: simulated variants vs a plain PyTorch FP32 forward, {a.batches} x {a.batch_size} images "
           f"{a.size}x{a.size}, torch threads {torch.get_num_threads()}")
    before = json.loads(open(a.compare).read()) if a.compare and os.path.exists(a.compare) else {}
    saved: dict = {}
    rows = []
    for name in a.models.split(","):
        model = hf_model(name) if name.startswith("hf_") else _models.MODELS[name]()
        xs, calib = _models.images(a.batches, a.batch_size, a.size)
        with torch.no_grad():
            ref = [model(x).argmax(1) for x in xs]
        saved[name] = {"fp32": torch.cat(ref).tolist()}
        for kind in a.variants.split(","):
          for reuse in ((False, True) if a.buffers == "both" else (a.buffers == "on",)):
            S.REUSE_CAST_BUFFERS = reuse        # before: every cast into fresh memory; after: reused buffers
            label = f"{kind}{' +buffers' if reuse else ''}" if a.buffers == "both" else kind
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn, notes = variant_fn(kind, model, calib)
            fn(xs[0])
            t_plain = t_var = c_plain = c_var = 0.0
            preds = []
            for x in xs:
                c, t = time.process_time(), time.perf_counter()
                with torch.no_grad():
                    model(x)
                t_plain += time.perf_counter() - t
                c_plain += time.process_time() - c
                c, t = time.process_time(), time.perf_counter()
                out = fn(x)
                t_var += time.perf_counter() - t
                c_var += time.process_time() - c
                preds.append(out.float())
            logits = torch.cat(preds)
            top1 = logits.argmax(1)
            saved[name][label] = top1.tolist()
            agree = float((top1 == torch.cat(ref)).float().mean()) * 100
            diff = ""
            if name in before and kind in before[name]:
                old = torch.tensor(before[name][kind])
                diff = f"; vs --compare: {int((old != top1).sum())} of {len(top1)} top-1 differ"
            if reuse and a.buffers == "both":
                diff += f"; logits vs without buffers: {'bit-identical' if torch.equal(logits, last) else 'DIFFER'}"
            last = logits
            ratio = t_var / t_plain
            rows.append((f"{name} {label}", ratio, c_var / c_plain))
            n = a.batches * a.batch_size
            print(f"   {name:10s} {label:26s} plain {t_plain:6.2f} s ({c_plain:6.1f} CPU s, {n / t_plain:5.1f} img/s)"
                  f"  variant {t_var:6.2f} s ({c_var:6.1f} CPU s, {n / t_var:5.1f} img/s)  ratio {ratio:5.2f}x  "
                  f"top-1 = FP32 on {agree:.0f}%{diff}" + (f"  [{'; '.join(notes)[:160]}]" if notes else ""),
                  flush=True)
            if a.save:                  # after every row: a long run stopped early keeps what it measured
                with open(a.save, "w") as f:
                    json.dump(saved, f)
    print(f"   after: {load()}")
    for what, r, c in rows:
        print(f"   {what}: {r:.2f}x wall, {c:.2f}x CPU seconds (goal <= {GOAL}x) -> "
              f"{'met' if r <= GOAL else f'missed by {r / GOAL:.2f}x'} (wall)")
    if a.save:
        print(f"   top-1 per image written to {a.save}")


if __name__ == "__main__":
    main()
