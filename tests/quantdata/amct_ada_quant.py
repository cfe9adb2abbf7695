"""AMCT's classic flow with ADA (and ADA + DMQ) end to end, as `opkit quant --config` simulates it: the record
(scale_d, offset_d, scale_w) after the calibration forward and the integer weights of AMCT's fake-quant ONNX
model (save_model); records AMCT's results for CI.

    OPKIT_AMCT=/path/to/prepared/amct python tests/quantdata/amct_ada_quant.py  # rewrite amct_ada/ada_quant*.npz

Same set-up as amct_ada.py (the DMQ test CNN, 40 samples, 60 iterations per layer, torch seeded with SEED right
before quantize_model); the calibration forward runs the same 40 samples (batch_num 1).
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from quantdata.amct_ada import ITERATIONS, REFS, SAMPLES, SEED  # noqa: E402
from quantdata.amct_dmq import LAYERS, STRENGTH, calib, net  # noqa: E402


def config(default: dict, dmq: bool) -> dict:
    """AMCT's default config with ADA (60 iterations, the other ADA parameters AMCT's defaults) on every layer."""
    cfg = json.loads(json.dumps(default))
    for n in LAYERS:
        cw = cfg[n]["weight_quant_params"].get("channel_wise", True)
        cfg[n]["weight_quant_params"] = {"wts_algo": "ada_quantize", "num_iteration": ITERATIONS, "channel_wise": cw}
        if dmq:
            cfg[n]["dmq_balancer_param"] = STRENGTH[n]
    return cfg


def run_amct(root: str, dmq: bool = False, portable: bool = False) -> dict[str, np.ndarray]:
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):
        return _run(root, Path(tmp), dmq, portable)


def _run(root: str, tmp: Path, dmq: bool, portable: bool = False) -> dict[str, np.ndarray]:
    """``portable``: the DMQ forward, AdaRound's training and the calibration forward under the portable
    arithmetic (amct_ada.arithmetic), as recorded."""
    sys.path.insert(0, str(root))
    import amct_pytorch.classic.graph_based.amct_pytorch as amct
    from amct_pytorch.classic.graph_based.amct_pytorch import quantize_tool

    from quantdata.amct_ada import arithmetic
    optimize_alpha = quantize_tool.optimize_alpha

    def portable_optimize(*a, **k):
        with arithmetic(portable):
            return optimize_alpha(*a, **k)
    import onnx
    from onnx import numpy_helper

    from opkit.quant.records import read_record
    export = torch.onnx.export
    m, x = net(), calib(SAMPLES)
    torch.onnx.export = lambda *a, **k: export(*a, **{"dynamo": False, **k})
    quantize_tool.optimize_alpha = portable_optimize
    try:
        amct.create_quant_config(str(tmp / "cfg.json"), m, x)
        cfg = config(json.loads((tmp / "cfg.json").read_text()), dmq)
        (tmp / "cfg.json").write_text(json.dumps(cfg))
        if dmq:
            pre = amct.quantize_preprocess(str(tmp / "cfg.json"), str(tmp / "rec.txt"), m, x)
            with torch.no_grad(), arithmetic(portable):
                pre(x)
        torch.manual_seed(SEED)
        qm = amct.quantize_model(str(tmp / "cfg.json"), str(tmp / "m.onnx"), str(tmp / "rec.txt"), m, x)
        with torch.no_grad(), arithmetic(portable):
            qm(x)
        amct.save_model(str(tmp / "m.onnx"), str(tmp / "rec.txt"), str(tmp / "out"))
    finally:
        torch.onnx.export = export
        quantize_tool.optimize_alpha = optimize_alpha
    rec = read_record(tmp / "rec.txt")
    inits = {i.name: numpy_helper.to_array(i) for i in onnx.load(str(tmp / "out_fake_quant_model.onnx")).graph.initializer}
    out = {}
    for n in LAYERS:
        codes = inits[f"{n}.sub_module.weight"]
        out.update({f"{n}:scale_d": np.array([rec[n].scale_d], np.float32),
                    f"{n}:offset_d": np.array([rec[n].offset_d], np.int32),
                    f"{n}:scale_w": np.array(rec[n].scale_w, np.float32),
                    f"{n}:codes": codes.T if n == "fc" else codes})      # a Linear is exported as MatMul (W^T)
    return out


def record(source: str) -> None:
    from opkit.quant.amct.setup import prepare
    root = str(prepare(source).prepared)       # a copy with the *_pb2.py generated (opkit.quant.amct.setup)
    np.savez_compressed(REFS / "ada_quant.npz", **run_amct(root, portable=True))
    np.savez_compressed(REFS / "ada_dmq_quant.npz", **run_amct(root, dmq=True, portable=True))


if __name__ == "__main__":
    record(os.environ["OPKIT_AMCT"])
