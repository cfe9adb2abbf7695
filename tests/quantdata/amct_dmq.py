"""AMCT's DMQ balancer (classic flow) and opkit's on a small CNN; records AMCT's results.

    OPKIT_AMCT=/path/to/amct python tests/quantdata/amct_dmq.py     # rewrite tests/quantdata/amct_dmq/

The AMCT checkout must have its classic flow's *_pb2.py generated (protoc, as classic/graph_based/CMakeLists.txt
does) and onnx, onnxruntime, transformers installed. AMCT runs with ``torch.onnx.export(dynamo=False)``.
"""
from __future__ import annotations

import contextlib
import copy
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn

REFS = Path(__file__).with_name("amct_dmq")
LAYERS = ("conv1", "dw", "pw", "fc")
STRENGTH = {"conv1": 0.5, "dw": 0.3, "pw": 0.8, "fc": 0.5}


class Net(nn.Module):
    """conv + BN, depthwise conv + BN (grouped weights), 1x1 conv, Linear head; input channel 1 five times
    larger than the others (the outlier DMQ moves into the weights)."""

    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8)
        self.dw, self.bn2 = nn.Conv2d(8, 8, 3, groups=8), nn.BatchNorm2d(8)
        self.pw, self.fc = nn.Conv2d(8, 16, 1), nn.Linear(16, 5)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.bn2(self.dw(x)))
        return self.fc(torch.relu(self.pw(x)).mean((2, 3)))


def net() -> Net:
    torch.manual_seed(0)
    m = Net().eval()
    with torch.no_grad():
        for bn in (m.bn1, m.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2)
            bn.weight.uniform_(0.5, 1.5)
    return m


class Net2(nn.Module):
    """ConvTranspose2d (input-channel axis 0 of its weight), a grouped Conv2d (groups 3), a Conv1d."""

    def __init__(self):
        super().__init__()
        self.ct = nn.ConvTranspose2d(3, 6, 3, stride=2)
        self.g, self.c1 = nn.Conv2d(6, 6, 3, groups=3), nn.Conv1d(6, 4, 3)

    def forward(self, x):
        return self.c1(torch.relu(self.g(torch.relu(self.ct(x)))).mean(2))


def net2() -> Net2:
    torch.manual_seed(0)
    return Net2().eval()


def calib2() -> torch.Tensor:
    g = torch.Generator().manual_seed(6)
    x = torch.randn(4, 3, 6, 6, generator=g)
    x[:, 2] *= 4
    return x


def arithmetic(portable: bool):
    """The calibration forwards' arithmetic: portable (opkit.quant.amct.portable, the same bits on every CPU) for
    what is recorded, the CPU's own kernels otherwise. Only the forwards: AMCT's ONNX export does not run under
    a dispatch mode. The portable set adds the vector-math ops (VECTOR_MATH): the balance factor is a power, and
    ATen's float32 sqrt is MKL's, whose bits depend on the CPU's vendor."""
    from opkit.quant.amct.portable import FORWARD, VECTOR_MATH, Float64Arithmetic
    return Float64Arithmetic(only=FORWARD | VECTOR_MATH) if portable else contextlib.nullcontext()


def run_amct_factors(root: str, portable: bool = False) -> dict[str, np.ndarray]:
    """Net2's balance factors (strength 0.5) from AMCT's quantize_preprocess and one forward."""
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):
        return _run_amct_factors(root, Path(tmp), portable)


def _run_amct_factors(root: str, tmp: Path, portable: bool = False) -> dict[str, np.ndarray]:
    sys.path.insert(0, str(root))
    import amct_pytorch.classic.graph_based.amct_pytorch as amct
    from amct_pytorch.classic.graph_based.amct_pytorch.proto import scale_offset_record_pytorch_pb2 as pb
    from google.protobuf import text_format
    export = torch.onnx.export
    m, x = net2(), calib2()
    torch.onnx.export = lambda *a, **k: export(*a, **{"dynamo": False, **k})
    try:
        amct.create_quant_config(str(tmp / "cfg.json"), m, x)
        cfg = json.loads((tmp / "cfg.json").read_text())
        for name in ("ct", "g", "c1"):
            cfg[name]["dmq_balancer_param"] = 0.5
        (tmp / "cfg.json").write_text(json.dumps(cfg))
        pre = amct.quantize_preprocess(str(tmp / "cfg.json"), str(tmp / "rec.txt"), m, x)
        with torch.no_grad(), arithmetic(portable):
            pre(x)
    finally:
        torch.onnx.export = export
    rec = pb.ScaleOffsetRecord()
    text_format.Parse((tmp / "rec.txt").read_text(), rec)
    return {f"{r.key}:factor": np.array(r.value.tensor_balance_factor, np.float32) for r in rec.record}


def calib(n: int = 8) -> torch.Tensor:
    g = torch.Generator().manual_seed(5)
    x = torch.randn(n, 3, 12, 12, generator=g)
    x[:, 1] *= 5
    return x


PB2 = "amct_pytorch/classic/graph_based/amct_pytorch/proto/scale_offset_record_pytorch_pb2.py"


def classic_missing(root: str) -> str | None:
    """Why AMCT's classic flow cannot run from ``root`` (None: it can)."""
    if not (Path(root) / PB2).is_file():
        return (f"{root}: AMCT's classic *_pb2.py are not generated (protoc, with the arguments of "
                "classic/graph_based/CMakeLists.txt)")
    for mod in ("onnx", "onnxruntime", "transformers", "google.protobuf"):
        try:
            __import__(mod)
        except ImportError:
            return f"AMCT's classic flow needs {mod}"
    return None


def folded(m: nn.Module) -> nn.Module:
    """BatchNorm folded as AMCT's ConvBnFusionPass does (torch.ao.quantization.fuse_modules)."""
    return torch.ao.quantization.fuse_modules(copy.deepcopy(m), [["conv1", "bn1"], ["dw", "bn2"]])


def run_amct(root: str, portable: bool = False) -> dict[str, np.ndarray]:
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):
        return _run_amct(root, Path(tmp), portable)


def _run_amct(root: str, tmp: Path, portable: bool = False) -> dict[str, np.ndarray]:
    sys.path.insert(0, str(root))
    import amct_pytorch.classic.graph_based.amct_pytorch as amct
    from amct_pytorch.classic.graph_based.amct_pytorch.proto import scale_offset_record_pytorch_pb2 as pb
    from google.protobuf import text_format
    export = torch.onnx.export

    def torchscript(*a, **k):
        k.setdefault("dynamo", False)
        return export(*a, **k)
    m, x = net(), calib()
    torch.onnx.export = torchscript
    try:
        amct.create_quant_config(str(tmp / "cfg.json"), m, x)
        cfg = json.loads((tmp / "cfg.json").read_text())
        for name in LAYERS:
            cfg[name]["dmq_balancer_param"] = STRENGTH[name]
        (tmp / "cfg.json").write_text(json.dumps(cfg))
        pre = amct.quantize_preprocess(str(tmp / "cfg.json"), str(tmp / "rec.txt"), m, x)
        with torch.no_grad(), arithmetic(portable):
            pre(x)
        qm = amct.quantize_model(str(tmp / "cfg.json"), str(tmp / "m.onnx"), str(tmp / "rec.txt"), m, x)
        with torch.no_grad(), arithmetic(portable):
            qm(x)
    finally:
        torch.onnx.export = export
    rec = pb.ScaleOffsetRecord()
    text_format.Parse((tmp / "rec.txt").read_text(), rec)
    out = {}
    for r in rec.record:
        v = r.value
        out.update({f"{r.key}:factor": np.array(v.tensor_balance_factor, np.float32),
                    f"{r.key}:scale_d": np.array([v.scale_d], np.float32),
                    f"{r.key}:offset_d": np.array([v.offset_d], np.int32),
                    f"{r.key}:scale_w": np.array(v.scale_w, np.float32)})
    return out


def record(source: str) -> None:
    from opkit.quant.amct.setup import prepare
    checkout = prepare(source)               # a copy with the *_pb2.py generated (opkit.quant.amct.setup)
    root = str(checkout.prepared)
    REFS.mkdir(exist_ok=True)
    np.savez_compressed(REFS / "dmq_net.npz", **run_amct(root, portable=True))
    np.savez_compressed(REFS / "dmq_net2.npz", **run_amct_factors(root, portable=True))
    commit = checkout.commit
    from opkit.quant.amct.portable import cpu_description
    meta = {"amct_commit": commit, "torch": torch.__version__, "strengths": STRENGTH, "arithmetic": "float64",
            "cpu": cpu_description(),
            "how": "OPKIT_AMCT=<checkout> python tests/quantdata/amct_dmq.py"}
    (REFS / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")


if __name__ == "__main__":
    record(os.environ["OPKIT_AMCT"])
