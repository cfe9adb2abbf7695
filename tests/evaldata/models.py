"""Tiny classifiers and labelled sets whose accuracies are known by construction (tests of opkit eval).

``scaled(C)``: logits = 100 * x (an nn.Linear with weight 100 * I, no bias), so the prediction is argmax(x)
and any |x| > 655.04 overflows fp16 (max 65504) to inf under an fp16 policy.
``known_set``: x rows whose argmax is known; labels chosen so top-1 / top-5 are exact fractions, and a chosen
number of correctly classified rows carry a value that overflows in fp16.
"""
from __future__ import annotations

import os
from pathlib import Path

import torch
import torch.nn as nn

C = 10


def scaled(classes: int = C) -> nn.Module:
    m = nn.Linear(classes, classes, bias=False)
    with torch.no_grad():
        m.weight.copy_(100.0 * torch.eye(classes))
    return m.eval()


def known_set(n: int = 200, right: int = 140, top5_extra: int = 20, overflow: int = 10, classes: int = C,
              seed: int = 0):
    """(x, y): ``right`` rows labelled with their argmax (top-1 hits), ``top5_extra`` rows labelled with their
    3rd-ranked class (top-5 hits only), the rest labelled with their last-ranked class (misses). The first
    ``overflow`` of the right rows have argmax value 700 (100 * 700 overflows fp16)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.empty(n, classes)
    y = torch.empty(n, dtype=torch.long)
    for i in range(n):
        order = torch.randperm(classes, generator=g)            # order[0] ranks first ... order[-1] last
        vals = torch.linspace(5.0, 0.5, classes)
        row = torch.empty(classes)
        row[order] = vals
        if i < overflow:
            row[order[0]] = 700.0
        x[i] = row
        y[i] = order[0] if i < right else order[2] if i < right + top5_extra else order[-1]
    return x, y


def kill_once(sample):
    """A transform that kills its process the first time it meets a sample whose value is 999 (a marker file
    in $OPKIT_TEST_KILL_DIR records that it did), else passes the sample through."""
    if float(sample.flatten()[0]) == 999.0:
        marker = Path(os.environ["OPKIT_TEST_KILL_DIR"]) / f"killed-{os.getpid()}"
        done = list(marker.parent.glob("killed-*"))
        if not done:
            marker.write_text("x")
            os._exit(17)
    return sample.float()


class OverflowNet(nn.Module):
    """logits = 1000 * per-channel mean of a 1x1 conv (channel c of the input -> class c, a 4th class scoring
    the negated sum); the class is the input channel with the largest mean. 1000 * mean overflows fp16 once a
    mean passes 65.5, so under an fp16 policy those samples' logits are inf (wrong) until `mul` runs in FP32."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1, bias=False)
        with torch.no_grad():
            w = torch.zeros(4, 3, 1, 1)
            for c in range(3):
                w[c, c] = 1.0
            w[3, :] = -1.0
            self.conv.weight.copy_(w)

    def forward(self, x):
        return self.conv(x).mean((2, 3)) * 1000.0


def overflow_net() -> nn.Module:
    return OverflowNet().eval()


def overflow_set(n: int = 40, overflow: int = 8, size: int = 8, seed: int = 0):
    """(x [n, 3, size, size], y): class = the channel with the largest mean (means 1..3); the first ``overflow``
    samples have means near 100 (fp16 overflow after * 1000)."""
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(n) % 3
    x = torch.rand(n, 3, size, size, generator=g)
    x[torch.arange(n), y] += 2.0
    x[:overflow] *= 40.0
    return x, y


def gelu_net(classes: int = 4) -> nn.Module:
    """Conv -> GELU -> LayerNorm over channels -> pool -> Linear, fixed weights: the ops whose fp16 kernel (opkit's
    naive one or PyTorch's) a device policy decides -- the same model in every command."""
    g = torch.Generator().manual_seed(7)

    class GeluNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.act = nn.GELU()
            self.norm = nn.LayerNorm(8)
            self.head = nn.Linear(8, classes)

        def forward(self, x):
            y = self.act(self.conv(x)).mean((2, 3))
            return self.head(self.norm(y))

    m = GeluNet()
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    return m.eval()
