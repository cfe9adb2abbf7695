"""A small model with three ops torch-npu 2.13.0 has no NPU kernel for (lgamma, logcumsumexp, hypot) next to a
convolution and a LayerNorm, which it has. `opkit scan model:make --input 1x3x64x64` lists exactly the three."""
import torch
import torch.nn as nn


class FallbackNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        y = self.norm(self.conv(x).permute(0, 2, 3, 1))       # N, H, W, 16
        a = torch.lgamma(y.abs() + 1)
        b = torch.logcumsumexp(y, dim=-1)
        return torch.hypot(a, b)


def make():
    torch.manual_seed(0)
    return FallbackNet().eval()
