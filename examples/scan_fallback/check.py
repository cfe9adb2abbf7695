"""The last step of the loop, on the CPU: with the written hypot kernel loaded as aten::hypot's PrivateUse1
kernel (opkit.load(override_aten=True)), the scan no longer lists hypot, and the kernel (the emulator standing
in for the NPU) matches torch.hypot on the model's own activations."""
import sys

import torch
from torch._C import DispatchKey

import opkit
from model import make

opkit.load(ops=["hypot_fp32"], bundled=False, override_aten=True)
model = make()
inputs = [torch.randn(1, 3, 64, 64), torch.randn(2, 3, 48, 80)]
report = opkit.scan(model, inputs)
left = sorted(r.entry for r in report.fallbacks)
print("fallbacks left:", ", ".join(left))
hypot = [r for r in report.records if r.entry == "aten::hypot"]
print("aten::hypot now:", hypot[0].status, "-", hypot[0].reason)

with torch.inference_mode():
    y = model.norm(model.conv(inputs[0]).permute(0, 2, 3, 1))
    a, b = torch.lgamma(y.abs() + 1), torch.logcumsumexp(y, dim=-1)
    for dt in (torch.float32, torch.float16):
        got = torch.ops.aten.hypot.default._op_dk(DispatchKey.PrivateUse1, a.to(dt), b.to(dt))
        want = torch.hypot(a.to(dt).double(), b.to(dt).double())     # same (rounded) inputs, FP64
        err = ((got.double() - want).abs() / want.abs().clamp_min(1e-6)).max().item()
        print(f"PrivateUse1 aten::hypot ({dt}) vs torch.hypot in FP64: max rel err {err:.2e}")
        if err > (2.0 ** -10 if dt == torch.float16 else 1e-6):     # the dtype's rounding, not more
            sys.exit("the override's result is off")
if "aten::hypot" in left or left != ["aten::lgamma", "aten::logcumsumexp"]:
    sys.exit(f"expected lgamma and logcumsumexp only, got {left}")
print("OK: the model no longer falls back on hypot")
