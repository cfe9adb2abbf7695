"""Both columns of ``opkit quant`` (issue 30): the INT8 model as AMCT's fake-quant ONNX model computes it (what AMCT
users first judge accuracy by) beside the deployed, device-faithful one (fp16 around, AscendQuant in fp16, ATC's
fusions), and the layers where the two part."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ...accuracy.policy import load_policy

NAME = "int8-amct-fake-quant"


@dataclass
class Parting:
    layer: str
    op_type: str
    cosine: float            # deployed vs AMCT fake-quant at this layer's output, on the report's fixed batch


def fake_quant_variant(session, config, records, name: str = NAME):
    """``config`` with ``records`` as AMCT's fake-quant model: FP32 around, no ATC fusion."""
    v = session.variant(config, name, records, conv_bn=False, requant=False)
    v.policy = load_policy("amct-fake-quant")
    return v


def _cos(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.reshape(-1).double(), b.reshape(-1).double()
    if a.shape != b.shape:
        return float("nan")
    ok = torch.isfinite(a) & torch.isfinite(b)
    if not bool(ok.all()):
        return 0.0
    d = float(a.norm() * b.norm())
    return float(a @ b / d) if d else float(torch.equal(a, b))


def parting_layers(model, x: torch.Tensor, fake_quant, deployed, limit: int = 5) -> list[Parting]:
    """Layers where the deployed model's output leaves AMCT's fake-quant one: the error (1 - cosine) jumps to more
    than ten times the largest error before it (and above 1e-5). At most ``limit``, in model order."""
    with torch.no_grad():
        _, a = fake_quant.simulator(fake_quant.policy).run(model, (x,))
        _, b = deployed.simulator(deployed.policy).run(model, (x,))
    ref = {r.name: r.tensor for r in a}
    out, worst = [], 0.0
    for r in b:
        if r.op_type == "block" or r.name not in ref:
            continue
        if getattr(deployed.layers.get(r.name), "requant_to", None) is not None:
            continue         # AscendRequant: its output is the next layer's codes after the ReLU, not comparable
        c = _cos(ref[r.name], r.tensor)
        err = 1.0 - c if c == c else 1.0
        if err > 1e-5 and err > 10 * max(worst, 1e-7):
            out.append(Parting(r.name, r.op_type, c))
        worst = max(worst, err)
    return out[:limit]
