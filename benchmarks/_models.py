"""Random-init ResNet- and ConvNeXt-style classifiers built from torch.nn alone (no torchvision/transformers), the
models of the model-level benchmarks (bench_eval_models.py). Layer shapes follow the published architectures
(ResNet: He et al. 2015, table 1; ConvNeXt: Liu et al. 2022, section 2.6): ResNet-18 [2,2,2,2] basic blocks,
ResNet-50 [3,4,6,3] bottlenecks; ConvNeXt-T depths [3,3,9,3] dims 96..768, ConvNeXt-B [3,3,27,3] dims 128..1024.
Factories take no argument (``file.py:resnet18``), so worker processes can rebuild them; the seed is fixed, so every
process builds the same weights."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, cin, c, stride=1):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(cin, c, 3, stride, 1, bias=False), nn.BatchNorm2d(c)
        self.conv2, self.bn2 = nn.Conv2d(c, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c)
        self.relu = nn.ReLU()
        self.down = None
        if stride != 1 or cin != c:
            self.down = nn.Sequential(nn.Conv2d(cin, c, 1, stride, bias=False), nn.BatchNorm2d(c))

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(y + (x if self.down is None else self.down(x)))


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, c, stride=1):
        super().__init__()
        out = c * 4
        self.conv1, self.bn1 = nn.Conv2d(cin, c, 1, bias=False), nn.BatchNorm2d(c)
        self.conv2, self.bn2 = nn.Conv2d(c, c, 3, stride, 1, bias=False), nn.BatchNorm2d(c)
        self.conv3, self.bn3 = nn.Conv2d(c, out, 1, bias=False), nn.BatchNorm2d(out)
        self.relu = nn.ReLU()
        self.down = None
        if stride != 1 or cin != out:
            self.down = nn.Sequential(nn.Conv2d(cin, out, 1, stride, bias=False), nn.BatchNorm2d(out))

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return self.relu(y + (x if self.down is None else self.down(x)))


class ResNet(nn.Module):
    def __init__(self, block, layers, classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], 64
        for i, n in enumerate(layers):
            c = 64 * 2 ** i
            for j in range(n):
                blocks.append(block(cin, c, 2 if (j == 0 and i > 0) else 1))
                cin = c * block.expansion
        self.blocks = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)
        for m in self.modules():        # BatchNorm statistics of a trained net, roughly: not identity
            if isinstance(m, nn.BatchNorm2d):
                nn.init.uniform_(m.weight, 0.2, 1.0)
                nn.init.normal_(m.bias, 0, 0.1)
                nn.init.normal_(m.running_mean, 0, 0.1)
                nn.init.uniform_(m.running_var, 0.5, 2.0)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.blocks(self.stem(x))), 1))


class LayerNorm2d(nn.Module):
    """ConvNeXt's channels-first LayerNorm (the reference implementation's LayerNorm, data_format=channels_first)."""

    def __init__(self, c, eps=1e-6):
        super().__init__()
        self.weight, self.bias, self.eps = nn.Parameter(torch.ones(c)), nn.Parameter(torch.zeros(c)), eps
        self.normalized_shape = (c,)
        self.data_format = "channels_first"

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1, self.act, self.pwconv2 = nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(torch.full((dim,), 0.5))   # layer scale (1e-6 at init; 0.5: a trained net's size)

    def forward(self, x):
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.pwconv2(self.act(self.pwconv1(self.norm(y))))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


class ConvNeXt(nn.Module):
    def __init__(self, depths, dims, classes=1000):
        super().__init__()
        self.downsample = nn.ModuleList([nn.Sequential(nn.Conv2d(3, dims[0], 4, 4), LayerNorm2d(dims[0]))])
        for i in range(3):
            self.downsample.append(nn.Sequential(LayerNorm2d(dims[i]), nn.Conv2d(dims[i], dims[i + 1], 2, 2)))
        self.stages = nn.ModuleList(nn.Sequential(*[ConvNeXtBlock(d) for _ in range(n)]) for n, d in zip(depths, dims))
        self.norm = nn.LayerNorm(dims[-1], eps=1e-6)
        self.head = nn.Linear(dims[-1], classes)

    def forward(self, x):
        for down, stage in zip(self.downsample, self.stages):
            x = stage(down(x))
        return self.head(self.norm(x.mean((-2, -1))))


def _seeded(make):
    torch.manual_seed(0)
    m = make()
    m.eval()
    return m


def resnet18():
    return _seeded(lambda: ResNet(BasicBlock, [2, 2, 2, 2]))


def resnet50():
    return _seeded(lambda: ResNet(Bottleneck, [3, 4, 6, 3]))


def convnext_t():
    return _seeded(lambda: ConvNeXt([3, 3, 9, 3], [96, 192, 384, 768]))


def convnext_b():
    return _seeded(lambda: ConvNeXt([3, 3, 27, 3], [128, 256, 512, 1024]))


def images(batches: int, batch_size: int, size: int, seed: int = 1):
    """``batches`` input batches and one calibration batch of random images (the same for every benchmark)."""
    g = torch.Generator().manual_seed(seed)
    xs = [torch.randn(batch_size, 3, size, size, generator=g) for _ in range(batches)]
    return xs, torch.randn(batch_size, 3, size, size, generator=g)


MODELS = {"resnet18": resnet18, "resnet50": resnet50, "convnext_t": convnext_t, "convnext_b": convnext_b}


def measure_batchnorm(m, x):
    """m with every BatchNorm2d's statistics measured on x (the calibration images, one pass), back in eval mode:
    a random-init net whose activations stay in range, as a trained one's do."""
    import torch
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.reset_running_stats()
                mod.momentum = None
        m.train()
        m(x)
        m.eval()
    return m


def example_resnet18(size: int, n: int):
    """(model, calibration 64, inputs n) for the quant benchmarks: examples/resnet's ResNet-18 (100 classes, seed 0)
    at 3 x size x size, its BatchNorm statistics measured on the calibration images."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "resnet"))
    from model import ResNet18
    torch.manual_seed(0)
    m = ResNet18(num_classes=100).eval()
    g = torch.Generator().manual_seed(1)
    c = torch.randn(64, 3, size, size, generator=g)
    x = torch.randn(n, 3, size, size, generator=g)
    return measure_batchnorm(m, c), c, x
