"""A tiny ViT-style encoder in float16 for the Linear PTQ tests: patch embedding, two pre-norm blocks
(Linear q/k/v in one, softmax(q k^T) v by matmul, Linear projection, Linear-GELU-Linear MLP), LayerNorm, mean
pool, Linear head -- 10 nn.Linear layers. Attention is written out (not nn.MultiheadAttention, whose out_proj
AMCT does not quantize). Some channels of the block inputs are large (LayerNorm gains of 8-20, as in trained
transformers), which is what SmoothQuant and AWQ are for. fc2 has 160 inputs, more than GPTQ's 128-column block.
No training: deterministic weights from a seed, float16 (AMCT's INT8 Linear configs take float16/bfloat16 weights
only, amct_pytorch/common/utils/vars.py:84-88).
"""
import torch
import torch.nn as nn

DIM, HEADS, HIDDEN, PATCHES, PATCH_DIM, CLASSES = 32, 2, 160, 16, 48, 10


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.fc1 = nn.Linear(DIM, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, DIM)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).reshape(b, t, 3, HEADS, DIM // HEADS).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ k.transpose(-1, -2) / (DIM // HEADS) ** 0.5, dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, DIM))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(PATCH_DIM, DIM)
        self.pos = nn.Parameter(torch.randn(PATCHES, DIM) * 0.1)
        self.blocks = nn.Sequential(Block(), Block())
        self.norm = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, CLASSES)

    def forward(self, x):
        x = self.blocks(self.embed(x) + self.pos)
        return self.head(self.norm(x).mean(dim=1))


def encoder() -> Encoder:
    torch.manual_seed(0)
    m = Encoder()
    with torch.no_grad():
        for i, blk in enumerate(m.blocks):                 # outlier channels, as trained transformers have
            blk.ln1.weight[[3, 17]] = torch.tensor([12.0, -8.0]) * (1 + i)
            blk.ln2.weight[[5, 29]] = torch.tensor([20.0, 9.0])
            blk.ln2.bias[5] = 3.0
    return m.half().eval()


def patches(n: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, PATCHES, PATCH_DIM, generator=g).half()
