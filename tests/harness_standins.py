"""Plain-torch stand-ins for LayerNormFP32 used by the harness's unit tests (no build needed).

``layer_norm_fp32_compute`` computes in FP32 whatever the I/O dtype (what the real op does);
``layer_norm_naive`` computes mean, variance and normalisation in the I/O dtype with low-precision
reductions (what an FP16-computing device kernel does). PyTorch's own fp16 CPU layer_norm accumulates in
FP32, so it cannot serve as the naive op.
"""
import torch
import torch.nn.functional as F

OP_YAML = """\
op: LayerNormFP32
family: norm
summary: LayerNorm over the last dim (harness test stand-in).
inputs:
  - name: x
    dtypes: [float16, bfloat16, float32]
    shape: [..., C]
  - name: weight
    shape: [C]
    values: weight
  - name: bias
    shape: [C]
    values: bias
outputs:
  - name: y
    dtype: x
    shape: x
attrs:
  - name: eps
    type: float
    default: 1.0e-5
compute_dtype: float32
tests:
  dims: {"...": [1, 4096], C: [1, 16384]}
  max_numel: 4000000
  shapes: [[64, 1000]]
  distributions: [normal, offset, scale, tiny, mixed, special]
accuracy:
  standard: mere_mare
  overrides: {}
"""

REFERENCE = """\
import torch.nn.functional as F


def reference(x, weight, bias, eps=1e-5):
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)
"""


def layer_norm_fp32_compute(x, weight, bias, eps=1e-5):
    return F.layer_norm(x.float(), (x.shape[-1],), weight.float(), bias.float(), eps).to(x.dtype)


def layer_norm_naive(x, weight, bias, eps=1e-5):
    n = x.shape[-1]
    mean = x.sum(-1, keepdim=True, dtype=x.dtype) / n
    d = x - mean
    var = (d * d).sum(-1, keepdim=True, dtype=x.dtype) / n
    return (d * torch.rsqrt(var + eps) * weight.to(x.dtype) + bias.to(x.dtype)).to(x.dtype)


def write_op(root, name="layer_norm_fp32", reference=REFERENCE, op_yaml=OP_YAML):
    """ops/<name>/{op.yaml, reference.py} under ``root``; returns the op folder."""
    from pathlib import Path
    d = Path(root) / "ops" / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "op.yaml").write_text(op_yaml)
    (d / "reference.py").write_text(reference)
    return d
