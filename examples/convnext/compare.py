"""Does opkit.patch bring FP16 accuracy back?  FP32 vs three FP16 set-ups of a small ConvNeXt.

    python examples/convnext/compare.py                 # 224x224 x16, 512x512 x2, 1024x1024 x1
    python examples/convnext/compare.py --sizes 224:4   # one quick size

Configurations, each compared with the FP32 model on the same fixed random inputs:

  (a) naive fp16   model.half(), patched with variant="naive": LayerNorm, GELU and Softmax run the opkit
                   kernels built to compute in fp16 (on the emulator), as an FP16 device kernel does.
                   PyTorch's own CPU fp16 ops accumulate in fp32 and would hide the problem.
  (b) autocast     the FP32 model under torch.autocast("cpu", dtype=torch.float16) (PyTorch's policy).
  (c) opkit fp16   model.half(), patched with opkit.patch: same fp16 I/O as (a), FP32 compute inside.
  (d) autocast+opkit  the FP32 model patched, under autocast fp16.

Weights are set by model.realistic_init so LayerNorm inputs reach |x| in the hundreds, as in trained
ConvNeXts' late stages. Exit status 1 if (c) does not match FP32 (cosine >= 0.999 and every top-1 the
same) at every size.
"""
from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from model import ConvNeXt, LayerNorm, realistic_init  # noqa: E402

import opkit  # noqa: E402

COS_OK = 0.999


def timed(fn, x, repeat: int):
    """(output of the first call, seconds per call over `repeat` calls)."""
    with torch.no_grad():
        t0 = time.perf_counter()
        out = fn(x)
        for _ in range(repeat - 1):
            fn(x)
        return out, (time.perf_counter() - t0) / repeat


def metrics(out: torch.Tensor, ref: torch.Tensor) -> dict:
    o, r = out.double(), ref.double()
    finite = bool(torch.isfinite(o).all())
    cos = torch.nn.functional.cosine_similarity(o, r, dim=1)    # per image (logits vectors)
    return {
        "cos_min": float(cos.min()) if finite else float("nan"),
        "cos_mean": float(cos.mean()) if finite else float("nan"),
        "max_abs": float((o - r).abs().max()) if finite else float("inf"),
        "top1": float((o.argmax(1) == r.argmax(1)).double().mean()) if finite else 0.0,
        "finite": finite,
    }


def layer_norm_input_sizes(model: nn.Module, x: torch.Tensor) -> list[tuple[str, float]]:
    """max |x| at every LayerNorm input of the FP32 model (to show the activations are realistic)."""
    seen: list[tuple[str, float]] = []
    hooks = [m.register_forward_pre_hook(lambda m, a, name=name: seen.append((name, float(a[0].abs().max()))))
             for name, m in model.named_modules() if isinstance(m, (LayerNorm, nn.LayerNorm))]
    with torch.no_grad():
        model(x)
    for h in hooks:
        h.remove()
    return seen


def build(args) -> dict[str, tuple[str, nn.Module, callable]]:
    torch.manual_seed(args.seed)
    fp32 = ConvNeXt(num_classes=args.classes).eval()
    realistic_init(fp32, seed=args.seed, offset=args.offset)

    naive = copy.deepcopy(fp32).half()
    rep_naive = opkit.patch(naive, variant="naive")
    ours = copy.deepcopy(fp32).half()
    rep = opkit.patch(ours)
    amp_ours = copy.deepcopy(fp32)
    opkit.patch(amp_ours)
    print(rep)
    if rep_naive.swapped_paths != rep.swapped_paths:
        raise SystemExit(f"naive and opkit patches differ:\n{rep_naive}\n{rep}")

    def autocast(model):
        def run(x):
            with torch.autocast("cpu", dtype=torch.float16):
                return model(x)
        return run

    return {
        "fp32": ("FP32 (reference)", fp32, lambda x: fp32(x)),
        "a": ("(a) naive fp16 (fp16 kernels)", naive, lambda x: naive(x.half())),
        "b": ("(b) autocast fp16 (PyTorch)", fp32, autocast(fp32)),
        "c": ("(c) fp16 + opkit.patch", ours, lambda x: ours(x.half())),
        "d": ("(d) autocast fp16 + opkit.patch", amp_ours, autocast(amp_ours)),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="224:16,512:2,1024:1",
                   help="comma-separated SIZE:BATCH pairs (square inputs); default %(default)s")
    p.add_argument("--configs", default="a,b,c,d", help="which of a,b,c,d to run; default %(default)s")
    p.add_argument("--classes", type=int, default=100)
    p.add_argument("--offset", type=float, default=300.0, help="std of the per-channel offsets (realistic_init)")
    p.add_argument("--repeat", type=int, default=1, help="timed calls per configuration")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    opkit.load()
    runs = build(args)
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    ok = True
    for item in args.sizes.split(","):
        size, batch = (int(v) for v in item.split(":"))
        x = torch.randn(batch, 3, size, size, generator=torch.Generator().manual_seed(args.seed + size))
        print(f"\n== input {batch}x3x{size}x{size}")
        if size == int(args.sizes.split(",")[0].split(":")[0]):
            sizes = layer_norm_input_sizes(runs["fp32"][1], x)
            print("max |x| at LayerNorm inputs: " + ", ".join(f"{n} {v:.0f}" for n, v in sizes))
        ref, t_ref = timed(runs["fp32"][2], x, args.repeat)
        ref = ref.float()
        print(f"{'configuration':34s} {'cos min':>9s} {'1-cos min':>10s} {'max abs err':>12s} {'top-1 =':>8s} "
              f"{'s/batch':>8s}")
        print(f"{runs['fp32'][0]:34s} {1.0:9.6f} {0.0:10.2g} {0.0:12.3g} {1.0:8.1%} {t_ref:8.2f}")
        for c in configs:
            label, _, fn = runs[c]
            out, t = timed(fn, x, args.repeat)
            m = metrics(out.float(), ref)
            print(f"{label:34s} {m['cos_min']:9.6f} {1 - m['cos_min']:10.2g} {m['max_abs']:12.3g} {m['top1']:8.1%} "
                  f"{t:8.2f}" + ("" if m["finite"] else "   (non-finite logits)"))
            if c == "c" and not (m["cos_min"] >= COS_OK and m["top1"] == 1.0):
                ok = False
    print("\nresult: " + ("(c) matches FP32 at every size (cos >= %.3f, same top-1)" % COS_OK if ok
                          else "FAIL: (c) does not match FP32"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
