"""Small deterministic models for the `opkit quant` tests (no training: labels are the FP32 model's own top-1, so
FP32 scores 100% by construction).

``mixed_scale()``: input planes 0-2 ~ N(0, 1), plane 3 a constant raw value of 400. One per-tensor INT8 scale on
conv1's input must span [-4, 400]: planes 0-2 collapse to a few codes, a real INT8 drop that conv1 in float fixes.
``with_dead_channel()``: the same, with conv1 filter 0 reading only the constant plane and bn1 statistics measured
on the data: running_var 0 and a large mean, so folding bn1 into conv1 overflows fp16.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

RAW = 400.0


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 8, 3)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, 6)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def inputs(n: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, 10, 10, generator=g)
    x[:, 3] = RAW
    return x


def _measure_bn(m: nn.Module, x: torch.Tensor) -> None:
    with torch.no_grad():
        for bn in (m.bn1, m.bn2):
            bn.reset_running_stats()
            bn.momentum = None
        m.train()
        m(x)
        m.eval()


def mixed_scale() -> nn.Module:
    torch.manual_seed(0)
    m = Tiny()
    with torch.no_grad():
        m.conv1.weight[:, 3] *= 0.02               # the constant plane acts as a modest bias
    _measure_bn(m, inputs(256, 99))
    return m.eval()


def with_dead_channel() -> nn.Module:
    torch.manual_seed(0)
    m = Tiny()
    with torch.no_grad():
        m.conv1.weight[:, 3] *= 0.02
        m.conv1.weight[0, :3] = 0.0                # filter 0 sees only the constant plane
        m.conv1.weight[0, 3] = 0.1                 # its output: 400 * 0.9 + bias, the same everywhere
    _measure_bn(m, inputs(256, 99))
    return m.eval()


def labelled(model: nn.Module, n: int, seed: int):
    x = inputs(n, seed)
    with torch.no_grad():
        y = model(x).argmax(1)
    return x, y
