"""A generated labelled set for the ConvNeXt example, and the example model fitted to classify it.

The example model (model.py) is randomly initialised, so it classifies nothing. This script makes a task it
can solve: 10 classes, each a smooth random pattern (a prototype) plus noise; the ConvNeXt (realistic_init
with per-channel offsets of N(0, 5): large enough that LayerNorm statistics computed in fp16 go wrong, small
enough that the features still depend on the input) keeps its weights, and only its head is fitted by least
squares to FP32 features of a training draw. A fresh validation draw is the labelled set.

    python examples/convnext/labelled.py                  # writes examples/convnext/data/{head.pt,val.pt}
    opkit golden-set examples/convnext/data/val.pt golden/ --per-class 10
    opkit experiment examples/convnext/labelled.py:classifier --data golden/ --input 1x3x64x64

``classifier()`` reads the fitted head from $CONVNEXT_DATA (default examples/convnext/data).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from model import convnext_realistic  # noqa: E402

CLASSES = 10
OFFSET = 5.0          # std of the per-channel offsets realistic_init gives the residual stream
AMPLITUDE = 3.0       # class pattern vs unit noise
DATA = Path(os.environ.get("CONVNEXT_DATA", Path(__file__).resolve().parent / "data"))


def draw(n: int, seed: int, size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """n samples (classes in turn): the class prototype (a random 8x8 pattern upsampled) plus N(0, 1) noise."""
    g = torch.Generator().manual_seed(1234)
    protos = torch.nn.functional.interpolate(torch.randn(CLASSES, 3, 8, 8, generator=g), size=(size, size),
                                             mode="bilinear", align_corners=False)
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(n) % CLASSES
    return protos[y] * AMPLITUDE + torch.randn(n, 3, size, size, generator=g), y


def _base():
    return convnext_realistic(num_classes=CLASSES, offset=OFFSET)


def make(out: Path = DATA, n_train: int = 200, n_val: int = 300, size: int = 64, seed: int = 0) -> dict:
    model = _base()
    feats = {}
    model.head.register_forward_hook(lambda m, a, o: feats.__setitem__("f", a[0]))
    xt, yt = draw(n_train, seed + 1, size)
    with torch.no_grad():
        model(xt)
    f = feats["f"]
    mu, sd = f.mean(0), f.std(0) + 1e-12
    a = torch.cat([(f - mu) / sd, torch.ones(len(f), 1)], 1)
    w = torch.linalg.lstsq(a, torch.nn.functional.one_hot(yt, CLASSES).float()).solution
    head = {"weight": (w[:-1] / sd[:, None]).T.contiguous(), "bias": w[-1] - (mu / sd) @ w[:-1]}
    out.mkdir(parents=True, exist_ok=True)
    torch.save(head, out / "head.pt")
    xv, yv = draw(n_val, seed + 2, size)
    torch.save({"x": xv, "y": yv, "classes": [f"pattern{c}" for c in range(CLASSES)]}, out / "val.pt")
    model.head.load_state_dict(head)
    with torch.no_grad():
        acc = float((model(xv).argmax(1) == yv).float().mean()) * 100
    return {"out": str(out), "val": n_val, "size": size, "fp32_top1": acc}


def classifier():
    """The example ConvNeXt with the head fitted by make() (an nn.Module in eval mode)."""
    p = DATA / "head.pt"
    if not p.is_file():
        raise FileNotFoundError(f"{p}: run `python examples/convnext/labelled.py` first (or set CONVNEXT_DATA)")
    model = _base()
    model.head.load_state_dict(torch.load(p, weights_only=True))
    return model.eval()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DATA)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--val", type=int, default=300)
    a = ap.parse_args()
    print(make(a.out, n_val=a.val, size=a.size))
