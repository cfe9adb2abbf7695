"""cann_half_steps.py -- ops-nn@e5c3fa93's CeluV2, SoftPlusV2 and SeluGrad float16 kernels, step by step in half.

Each AscendC vector op on half tensors rounds its result to half; torch's CPU half ops do the same, so the kernel's
formula replayed op by op in torch gives what the device computes. Same inputs (N(0, 1), seed 0) and the same judge
(TTK's stat_rel_err) as scripts/cann_survey.py: if these fail as the emulator's run does, the error is the kernel's
arithmetic (docs/cann.md, "traced after the run"). Usage: .venv/bin/python scripts/cann_half_steps.py
"""
import torch, torch.nn.functional as F
from opkit.cannproject import ttk
h = torch.float16
H = lambda t: t.to(h)                      # one vector op's result, rounded to half
SA = 1.0507009873554805 * 1.6732632423543772
def celu(x):                               # celu_v2.h:120-129, alpha = 1 (invAlpha = 1)
    e = H(torch.exp(H(x.float() * 1.0).float()).float())
    e = H(H(e.float() - 1).float() * 1.0)
    return H(torch.clamp(x.float(), min=0) + torch.clamp(e.float(), max=0))
def softplus(x):                           # soft_plus_v2.h:94-103
    e = H(torch.exp(x.float()))
    return H(torch.log(H(e.float() + 1).float()))
def selu_grad(g, o):                       # selu_grad.h:150-155 (half, half, false)
    f = torch.where(o.float() < 0, H(o.float() + H(torch.tensor(SA)).float()).float(), H(torch.tensor(1.0507009873554805)).float())
    return H(g.float() * f)
REF = {"celu_v2": (1, celu, lambda x: F.celu(x, 1.0)), "soft_plus_v2": (1, softplus, F.softplus),
       "selu_grad": (2, selu_grad, lambda g, o: torch.where(o >= 0, g * 1.0507009873554805, g * (o + SA)))}
case = ttk.Case(name="half", op_name="", input_shapes=(), input_dtypes=(), output_shapes=None, output_dtypes=())
for name, (n, kern, ref) in REF.items():
    for shape in ((8, 2048), (3, 77)):
        gen = torch.Generator().manual_seed(0)       # as cann_survey.py inputs_for
        xs = [torch.randn(shape, generator=gen, dtype=torch.float32).to(h) for _ in range(n)]
        out = kern(*xs)
        golden = ref(*[x.double() for x in xs]).float()
        ok, m = ttk.compare(out, golden, case, 0, "stat_rel_err")
        a, g = out.double().flatten(), golden.to(h).double().flatten()
        rel = (a - g).abs() / (g.abs() + ttk.FLOOR)
        i = int(rel.argmax())
        print(f"{name} {shape}: {'right' if ok else 'wrong'} MERE {m['mere']:.3g} MARE {m['mare']:.3g} "
              f"(bound {m['threshold']:.3g} / {10*m['threshold']:.3g}); worst at inputs "
              f"{[float(x.flatten()[i]) for x in xs]}: half steps {float(a[i]):.6g}, reference {float(golden.flatten()[i]):.6g}")
