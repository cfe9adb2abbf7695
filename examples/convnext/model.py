"""A small ConvNeXt-style classifier, written for opkit's patch example.

Layout follows the ConvNeXt paper (Liu et al., 2022, "A ConvNet for the 2020s"): a 4x4/4 patchify stem
with a channels-first LayerNorm, stages of blocks (7x7 depthwise conv -> channels-last LayerNorm ->
Linear 4x -> GELU -> Linear -> layer scale -> residual), downsampling by a channels-first LayerNorm
followed by a 2x2/2 conv, and a head. The head pools with attention (a learned query, softmax over the
spatial positions) instead of a plain average, so the model also exercises nn.Softmax on a row whose
length changes with the input size.
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class LayerNorm(nn.Module):
    """LayerNorm as ConvNeXt code writes it: "channels_last" normalises the last dim, "channels_first"
    normalises dim 1 of an NCHW tensor (computed by hand with mean/var, as in the original code)."""

    def __init__(self, channels: int, eps: float = 1e-6, data_format: str = "channels_last"):
        super().__init__()
        if data_format not in ("channels_last", "channels_first"):
            raise ValueError(f"data_format must be channels_last or channels_first; got {data_format!r}")
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))
        self.eps = eps
        self.data_format = data_format
        self.normalized_shape = (channels,)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.data_format == "channels_last":
            return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        mean = x.mean(1, keepdim=True)
        var = (x - mean).pow(2).mean(1, keepdim=True)
        x = (x - mean) / torch.sqrt(var + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class Block(nn.Module):
    def __init__(self, dim: int, layer_scale: float = 1e-6):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(torch.full((dim,), layer_scale))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dwconv(x).permute(0, 2, 3, 1)             # NCHW -> NHWC
        y = self.pwconv2(self.act(self.pwconv1(self.norm(y))))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


class AttentionPool(nn.Module):
    """Softmax-weighted average over positions with a learned query per head."""

    def __init__(self, dim: int, heads: int = 4):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5                # a constant: no float maths on traced sizes
        self.query = nn.Parameter(torch.randn(heads, dim // heads))
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:    # x: N, H*W, C
        n, l, c = x.shape
        h = self.heads
        tokens = x.reshape(n, l, h, c // h).transpose(1, 2)             # N, h, L, C/h
        scores = (tokens @ self.query[:, :, None]).squeeze(-1) * self.scale      # N, h, L
        weights = self.softmax(scores)
        return (weights[..., None] * tokens).sum(2).reshape(n, c)


class ConvNeXt(nn.Module):
    def __init__(self, in_chans: int = 3, num_classes: int = 100, depths=(1, 1, 2, 1), dims=(24, 48, 96, 192)):
        super().__init__()
        self.downsample = nn.ModuleList([nn.Sequential(
            nn.Conv2d(in_chans, dims[0], kernel_size=4, stride=4),
            LayerNorm(dims[0], data_format="channels_first"))])
        for i in range(3):
            self.downsample.append(nn.Sequential(
                LayerNorm(dims[i], data_format="channels_first"),
                nn.Conv2d(dims[i], dims[i + 1], kernel_size=2, stride=2)))
        self.stages = nn.ModuleList([nn.Sequential(*[Block(d) for _ in range(n)]) for d, n in zip(dims, depths)])
        self.norm = nn.LayerNorm(dims[-1], eps=1e-6)
        self.pool = AttentionPool(dims[-1])
        self.head = nn.Linear(dims[-1], num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for down, stage in zip(self.downsample, self.stages):
            x = stage(down(x))
        x = self.norm(x.flatten(2).transpose(1, 2))        # N, H*W, C
        return self.head(self.pool(x))


@torch.no_grad()
def realistic_init(model: ConvNeXt, seed: int = 0, offset: float = 300.0) -> None:
    """Weights that give activations of the size trained ConvNeXts show in late stages.

    Trained ConvNeXts carry large per-channel offsets in the residual stream (LayerNorm inputs with
    |x| in the hundreds; cf. the "massive activations" reported for large vision models). Random init
    does not, so: layer scales of order 1 instead of 1e-6, and every conv that feeds a residual stream
    gets a per-channel bias drawn from N(0, offset), so each LayerNorm sees rows whose mean dwarfs
    their spread -- the case where a variance computed in fp16 falls apart.
    """
    g = torch.Generator().manual_seed(seed)

    def normal(t, std):
        t.copy_(torch.randn(t.shape, generator=g) * std)

    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            fan_in = m.weight[0].numel()
            normal(m.weight, fan_in ** -0.5)
            if m.bias is not None:
                normal(m.bias, 0.1)
        elif isinstance(m, (LayerNorm, nn.LayerNorm)):
            m.weight.copy_(1 + 0.1 * torch.randn(m.weight.shape, generator=g))
            m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=g))
        elif isinstance(m, Block):
            m.gamma.copy_(0.5 + 0.5 * torch.rand(m.gamma.shape, generator=g))
        elif isinstance(m, AttentionPool):
            normal(m.query, 1.0)
    for down in model.downsample:
        conv = down[0] if isinstance(down[0], nn.Conv2d) else down[1]
        normal(conv.bias, offset)


def convnext_realistic(seed: int = 0, offset: float = 300.0, num_classes: int = 100) -> ConvNeXt:
    """The example model with realistic_init, in eval mode: the factory for `opkit diagnose` / `opkit dump`
    (``opkit diagnose examples/convnext/model.py:convnext_realistic --input 2x3x64x64``)."""
    torch.manual_seed(seed)
    model = ConvNeXt(num_classes=num_classes).eval()
    realistic_init(model, seed=seed, offset=offset)
    return model
