"""AMCT's ADA (AdaRound, classic flow) and opkit's on the DMQ test CNN; records AMCT's results.

    OPKIT_AMCT=/path/to/amct python tests/quantdata/amct_ada.py     # rewrite tests/quantdata/amct_ada/

Same prerequisites as amct_dmq.py. ADA trains with minibatches drawn by torch.randperm from the global generator:
both sides seed it with SEED right before (AMCT draws nothing else from it on the way, checked: the same
permutations), 40 calibration samples (so each minibatch is a random 32 of them), ITERATIONS per layer.
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from quantdata.amct_dmq import LAYERS, STRENGTH, calib, net  # noqa: E402

REFS = Path(__file__).with_name("amct_ada")
SEED, ITERATIONS, SAMPLES = 123, 60, 40


def _training_ops():
    from opkit.quant.amct.portable import FORWARD, VECTOR_MATH
    aten = torch.ops.aten
    # the CPU-dependent ops of a forward and its backward (oneDNN's conv/matmul kernels sum in a
    # vector-width-dependent order) and MKL's vendor-dependent sqrt / pow (DMQ's factor, Adam's denominator);
    # AMCT's numpy parts (KL search) are the same on every CPU as they are
    return FORWARD | VECTOR_MATH | {aten.convolution_backward.default}


TRAINING = _training_ops()


def arithmetic(portable: bool):
    """ADA's training (forwards, backwards, Adam: every floating op) in the portable arithmetic
    (opkit.quant.amct.portable.Float64Arithmetic, the same bits on every CPU) for what is recorded."""
    from opkit.quant.amct.portable import Float64Arithmetic
    return Float64Arithmetic(only=TRAINING) if portable else contextlib.nullcontext()


def run_amct(root: str, dmq: bool = False, portable: bool = False) -> dict[str, np.ndarray]:
    """ADA alone, or with DMQ (quantize_preprocess and one forward first, STRENGTH per layer)."""
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):
        return _run_amct(root, Path(tmp), dmq, portable)


def _run_amct(root: str, tmp: Path, dmq: bool, portable: bool = False) -> dict[str, np.ndarray]:
    sys.path.insert(0, str(root))
    import amct_pytorch.classic.graph_based.amct_pytorch as amct
    from amct_pytorch.classic.graph_based.amct_pytorch import quantize_tool
    optimize_alpha = quantize_tool.optimize_alpha

    def portable_optimize(*a, **k):
        # quantize_model runs AdaRound's training after its ONNX export, which no dispatch mode may wrap
        with arithmetic(portable):
            return optimize_alpha(*a, **k)
    from amct_pytorch.classic.graph_based.amct_pytorch.proto import scale_offset_record_pytorch_pb2 as pb
    from google.protobuf import text_format
    export = torch.onnx.export

    def torchscript(*a, **k):
        k.setdefault("dynamo", False)
        return export(*a, **k)
    m, x = net(), calib(SAMPLES)
    torch.onnx.export = torchscript
    quantize_tool.optimize_alpha = portable_optimize
    try:
        amct.create_quant_config(str(tmp / "cfg.json"), m, x)
        cfg = json.loads((tmp / "cfg.json").read_text())
        for n in LAYERS:
            cw = cfg[n]["weight_quant_params"].get("channel_wise", True)
            cfg[n]["weight_quant_params"] = {"wts_algo": "ada_quantize", "num_iteration": ITERATIONS,
                                             "reg_param": 0.01, "beta_range": [20.0, 2.0], "warm_start": 0.2,
                                             "channel_wise": cw}
            if dmq:
                cfg[n]["dmq_balancer_param"] = STRENGTH[n]
        (tmp / "cfg.json").write_text(json.dumps(cfg))
        if dmq:
            pre = amct.quantize_preprocess(str(tmp / "cfg.json"), str(tmp / "rec.txt"), m, x)
            with torch.no_grad(), arithmetic(portable):
                pre(x)
        torch.manual_seed(SEED)
        qm = amct.quantize_model(str(tmp / "cfg.json"), str(tmp / "m.onnx"), str(tmp / "rec.txt"), m, x)
        with torch.no_grad():
            qm(x)
    finally:
        torch.onnx.export = export
        quantize_tool.optimize_alpha = optimize_alpha
    rec = pb.ScaleOffsetRecord()
    text_format.Parse((tmp / "rec.txt").read_text(), rec)
    mods = dict(qm.named_modules())
    out = {}
    for r in rec.record:
        out[f"{r.key}:scale_w"] = np.array(r.value.scale_w, np.float32)
        out[f"{r.key}:channel_wise"] = np.array([len(r.value.scale_w) > 1])
        out[f"{r.key}:weight"] = next(iter(mods[r.key].children())).weight.detach().numpy()
    return out


def record(source: str) -> None:
    from opkit.quant.amct.portable import cpu_description
    from opkit.quant.amct.setup import prepare
    checkout = prepare(source)               # a copy with the *_pb2.py generated (opkit.quant.amct.setup)
    root = str(checkout.prepared)
    REFS.mkdir(exist_ok=True)
    np.savez_compressed(REFS / "ada_net.npz", **run_amct(root, portable=True))
    np.savez_compressed(REFS / "ada_dmq_net.npz", **run_amct(root, dmq=True, portable=True))
    commit = checkout.commit
    meta = {"amct_commit": commit, "torch": torch.__version__, "seed": SEED, "num_iteration": ITERATIONS,
            "arithmetic": "float64", "cpu": cpu_description(),
            "samples": SAMPLES, "how": "OPKIT_AMCT=<checkout> python tests/quantdata/amct_ada.py"}
    (REFS / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")


if __name__ == "__main__":
    record(os.environ["OPKIT_AMCT"])
