"""A small CNN, trained in seconds on a labelled set this file generates, for `opkit quant` (docs/quant.md).

The data: 10 classes of oriented stripe patterns (angle and frequency by class, random phase, noise) with a
fourth plane carrying the camera's raw exposure setting, as some pipelines stack sensor metadata onto the
image: RGB normalized to about [-2.5, 2.5], the exposure plane left at its raw value (400, constant in this
dataset). FP32 does not care (conv1 learns the constant plane as a bias); a per-tensor INT8 scale on conv1's
input has to span [-2.5, 400] and crushes the RGB planes -- a real INT8 drop.

The planted defect: one conv1 filter (the one leaning most on the exposure plane) is pruned on the RGB planes
(weights zeroed, as channel pruning leaves filters that only see a constant plane) and BatchNorm statistics are
re-estimated afterwards, as after any pruning. That channel's running variance is 0 and its running mean large:
folding bn1 into conv1 makes gamma / sqrt(var + eps) ~ 316 and the folded bias ~ -400 * sum(w) * 316, past
fp16's 65504.

    python examples/quant/model.py            # writes examples/quant/work/{model.pt,calib.pt,val.pt}
    opkit quant examples/quant/model.py:trained --calib examples/quant/work/calib.pt \\
        --data examples/quant/work/val.pt --json r.json --html r.html \\
        --amct-config-out quant.json --fusion-switch-out fusion_switch.cfg
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
WORK = HERE / "work"
CLASSES = 10
SIZE = 24
EXPOSURE = 400.0


def make_data(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` images [n, 4, SIZE, SIZE] and labels: class k = stripes at angle 18k degrees, frequency
    2 + k % 3 cycles per image, random phase and colour, plus noise; plane 3 = the raw exposure, 400."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, CLASSES, (n,), generator=g)
    ang = y.float() * math.pi / CLASSES + torch.randn(n, generator=g) * 0.06
    freq = 2.0 + (y % 3).float()
    phase = torch.rand(n, generator=g) * 2 * math.pi
    c = torch.linspace(-0.5, 0.5, SIZE)
    yy, xx = torch.meshgrid(c, c, indexing="ij")
    proj = xx[None] * torch.cos(ang)[:, None, None] + yy[None] * torch.sin(ang)[:, None, None]
    wave = torch.sin(2 * math.pi * freq[:, None, None] * proj + phase[:, None, None])
    colour = 0.5 + 0.5 * torch.rand(n, 3, 1, 1, generator=g)
    rgb = wave[:, None] * colour + 1.1 * torch.randn(n, 3, SIZE, SIZE, generator=g)
    exposure = torch.full((n, 1, SIZE, SIZE), EXPOSURE)
    return torch.cat([rgb.clamp(-2.5, 2.5), exposure], 1), y


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 16, 3)             # valid: a constant plane gives a constant output
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(32)
        self.conv3 = nn.Conv2d(32, 32, 3, stride=2, padding=1, groups=8, bias=False)   # grouped
        self.bn3 = nn.BatchNorm2d(32)
        self.conv4 = nn.Conv2d(32, 64, 1, bias=False)
        self.bn4 = nn.BatchNorm2d(64)
        self.fc = nn.Linear(64, CLASSES)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = F.relu(self.bn3(self.conv3(x)))
        x = F.relu(self.bn4(self.conv4(x)))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def train(seed: int = 0, n: int = 3000, epochs: int = 3, log=print) -> SmallCNN:
    torch.manual_seed(seed)
    x, y = make_data(n, seed=1)
    m = SmallCNN()
    opt = torch.optim.Adam(m.parameters(), lr=3e-3)
    t0 = time.monotonic()
    for ep in range(epochs):
        m.train()
        perm = torch.randperm(n)
        for i in range(0, n, 100):
            idx = perm[i:i + 100]
            loss = F.cross_entropy(m(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        log(f"epoch {ep + 1}/{epochs}: loss {loss.item():.3f} ({time.monotonic() - t0:.1f} s)")
    filt = prune_filter_on_rgb(m, x)
    log(f"pruned conv1 filter {filt} on RGB; BatchNorm statistics re-estimated")
    return m.eval()


def prune_filter_on_rgb(m: SmallCNN, x: torch.Tensor) -> int:
    """Zero, on the RGB planes, the conv1 filter that leans most on the exposure plane (largest |sum of its
    weights there|) and re-estimate BatchNorm statistics on ``x``. Returns the filter."""
    with torch.no_grad():
        filt = int(m.conv1.weight[:, 3].sum((1, 2)).abs().argmax())
        m.conv1.weight[filt, :3] = 0.0
        for bn in (m.bn1, m.bn2, m.bn3, m.bn4):
            bn.reset_running_stats()
            bn.momentum = None                      # cumulative average over the re-estimation pass
        m.train()
        for i in range(0, len(x), 500):
            m(x[i:i + 500])
        m.eval()
    return filt


def write(log=print) -> None:
    WORK.mkdir(exist_ok=True)
    m = train(log=log)
    torch.save(m.state_dict(), WORK / "model.pt")
    xc, _ = make_data(256, seed=2)
    torch.save({"x": xc}, WORK / "calib.pt")
    xv, yv = make_data(1000, seed=3)
    torch.save({"x": xv, "y": yv}, WORK / "val.pt")
    with torch.no_grad():
        acc = (m(xv).argmax(1) == yv).float().mean().item()
    log(f"FP32 top-1 on val.pt: {100 * acc:.1f}%; wrote {WORK}/model.pt, calib.pt (256), val.pt (1000)")


def trained() -> SmallCNN:
    """The trained model (run this file first to train and write it)."""
    p = WORK / "model.pt"
    if not p.is_file():
        raise SystemExit(f"{p} is missing: run `python {Path(__file__)}` first")
    m = SmallCNN()
    m.load_state_dict(torch.load(p, map_location="cpu", weights_only=True))
    return m.eval()


if __name__ == "__main__":
    write(log=lambda s: print(s, file=sys.stderr))
