"""AMCT's Linear PTQ (current API) and opkit's, side by side on the tiny encoder; records AMCT's results.

    OPKIT_AMCT=/path/to/amct python tests/quantdata/amct_linear.py     # rewrite tests/quantdata/amct_linear_ptq/

AMCT runs under tests/arith.py's Float64Arithmetic (every op exact, rounded once): float16/bfloat16 matmuls give
other bits on other CPUs, and a recording compared bit for bit on any CPU must not depend on this one's kernels.

AMCT runs on a CPU with two stand-ins for what a CPU lacks (it changes no arithmetic): a ``torch_npu`` module
whose only member is ``npu.is_available() -> False`` (quant_util.py:344 imports torch_npu unconditionally, and
gptq_module.py:146-149 asks it whether to empty the NPU cache), and ``transformers`` installed.
"""
from __future__ import annotations

import contextlib
import copy
import json
import os
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from arith import Float64Arithmetic, cpu_description  # noqa: E402
from quantdata.encoder import encoder, patches  # noqa: E402

from opkit.quant.linear_ptq import LinearPTQConfig, quantize_linears  # noqa: E402

REFS = Path(__file__).with_name("amct_linear_ptq")
CALIB_SEEDS, EVAL_SEED, BATCH = (11, 12), 13, 8
_W8 = {"type": "int8", "symmetric": True, "strategy": "channel"}
_W4 = {"type": "int4", "symmetric": True, "strategy": "channel"}
_A8 = {"type": "int8", "symmetric": True, "strategy": "tensor"}
# AMCT's presets (amct_pytorch/common/config/config.py:19-73) and variations of them that AMCT accepts
CONFIGS = {
    "minmax_w8a16": {"batch_num": 1, "quant_cfg": {"weights": _W8}, "algorithm": {"minmax"}},
    "minmax_w8a8": {"batch_num": 2, "quant_cfg": {"weights": _W8, "inputs": _A8}, "algorithm": {"minmax"}},
    "minmax_w8a8_asym_tensor": {"batch_num": 2, "algorithm": {"minmax"}, "quant_cfg": {
        "weights": {**_W8, "strategy": "tensor"}, "inputs": {**_A8, "symmetric": False}}},
    "smoothquant_w8a8": {"batch_num": 2, "quant_cfg": {"weights": _W8, "inputs": _A8},
                         "algorithm": {"smoothquant": {"smooth_strength": 0.5}}},
    "smoothquant_w8a8_a07": {"batch_num": 1, "quant_cfg": {"weights": _W8, "inputs": _A8},
                             "algorithm": {"smoothquant": {"smooth_strength": 0.7}}},
    "gptq_w4": {"batch_num": 2, "quant_cfg": {"weights": _W4}, "algorithm": {"gptq"}},
    "gptq_w8_asym_group32": {"batch_num": 1, "algorithm": {"gptq"}, "quant_cfg": {
        "weights": {"type": "int8", "symmetric": False, "strategy": "group", "group_size": 32}}},
    "awq_w4": {"batch_num": 1, "quant_cfg": {"weights": _W4}, "algorithm": {"awq": {"grids_num": 20}}},
    "awq_w4_group32": {"batch_num": 1, "algorithm": {"awq": {"grids_num": 10}}, "quant_cfg": {
        "weights": {**_W4, "strategy": "group", "group_size": 32}}},
    # the same encoder in bfloat16 (AMCT's INT8 configs take bfloat16 or float16 weights)
    "smoothquant_w8a8_bf16": {"batch_num": 2, "quant_cfg": {"weights": _W8, "inputs": _A8}, "dtype": "bfloat16",
                              "algorithm": {"smoothquant": {"smooth_strength": 0.5}}},
    "gptq_w4_bf16": {"batch_num": 1, "quant_cfg": {"weights": _W4}, "algorithm": {"gptq"}, "dtype": "bfloat16"},
    "awq_w8_bf16": {"batch_num": 1, "quant_cfg": {"weights": _W8}, "algorithm": {"awq": {"grids_num": 20}},
                    "dtype": "bfloat16"},
}


def data(dtype: str = "float16"):
    t = getattr(torch, dtype)
    return [patches(BATCH, s).to(t) for s in CALIB_SEEDS], patches(BATCH, EVAL_SEED).to(t)


def setup(name: str):
    """(AMCT config, model, calibration batches, evaluation batch) of a config name."""
    cfg = copy.deepcopy(CONFIGS[name])
    dtype = cfg.pop("dtype", "float16")
    return (cfg, encoder().to(getattr(torch, dtype)), *data(dtype))


def _outputs(model, calib, cfg, run):
    with torch.no_grad():
        outs = [run(model, b) for b in calib[:cfg["batch_num"]]]
    return outs[-1]


def run_opkit(name: str) -> dict[str, np.ndarray]:
    cfg, model, calib, ev = setup(name)
    outs = []
    res = quantize_linears(model, LinearPTQConfig.from_amct(cfg), calib,
                           forward=lambda m, b: outs.append(m(b)))
    got = {"out:calib": outs[-1], "out:eval": model(ev)}
    for n, p in res.layers.items():
        got.update({f"{n}:scale_w": p.scale_w, f"{n}:offset_w": p.offset_w, f"{n}:scale_d": p.scale_d,
                    f"{n}:offset_d": p.offset_d, f"{n}:act_divisor": p.act_divisor,
                    f"{n}:act_multiplier": p.act_multiplier, f"{n}:codes": p.weight_codes()})
    return _numpy(got)


def _numpy(d):
    # bfloat16 has no numpy type: stored as float32, which holds every bfloat16 value exactly
    return {k: (v.float() if v.dtype == torch.bfloat16 else v).detach().numpy() for k, v in d.items() if v is not None}


def import_amct(root: str):
    if "torch_npu" not in sys.modules:
        stub = types.ModuleType("torch_npu")
        stub.npu = types.SimpleNamespace(is_available=lambda: False)
        sys.modules["torch_npu"] = stub
    sys.path.insert(0, str(root))
    import amct_pytorch
    from amct_pytorch.common.utils.quant_util import quant_weight
    return amct_pytorch, quant_weight


def run_amct(root: str, name: str) -> dict[str, np.ndarray]:
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):      # AMCT writes ./amct_log
        return _run_amct(root, name)


def _run_amct(root: str, name: str) -> dict[str, np.ndarray]:
    amct, quant_weight = import_amct(root)
    cfg, model, calib, ev = setup(name)
    amct.quantize(model, cfg)
    with torch.no_grad():
        got = {"out:calib": _outputs(model, calib, cfg, lambda m, b: m(b)), "out:eval": model(ev)}
        for n, m in model.named_modules():
            kind = type(m).__name__
            if kind not in ("MinMaxQuant", "SmoothQuant", "GPTQuant", "LinearAWQuant"):
                continue
            w = {"MinMaxQuant": lambda: m.weight, "GPTQuant": lambda: m.weight,
                 "SmoothQuant": lambda: m.weight * m.scale.to(m.weight.dtype),
                 "LinearAWQuant": lambda: m.ori_module.weight}[kind]().data
            got.update({f"{n}:scale_w": m.scale_w, f"{n}:offset_w": m.offset_w, f"{n}:scale_d": m.scale_d,
                        f"{n}:offset_d": m.offset_d,
                        f"{n}:act_divisor": m.scale if kind == "SmoothQuant" else None,
                        f"{n}:act_multiplier": m.scale if kind == "LinearAWQuant" else None,
                        f"{n}:codes": quant_weight(w, cfg["quant_cfg"]["weights"]["type"], m.scale_w, m.offset_w,
                                                   m.group_size).to(torch.int32)})
    return _numpy(got)


def record(root: str) -> None:
    REFS.mkdir(exist_ok=True)
    commit = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    for name in CONFIGS:
        with Float64Arithmetic():
            ref = run_amct(root, name)
        np.savez_compressed(REFS / f"{name}.npz", **ref)
        print(f"{name}: {len(ref)} arrays")
    meta = {"amct_commit": commit, "torch": torch.__version__, "configs": sorted(CONFIGS),
            "arithmetic": "tests/arith.py Float64Arithmetic (the same on every CPU)", "cpu": cpu_description(),
            "how": "OPKIT_AMCT=<checkout> python tests/quantdata/amct_linear.py"}
    (REFS / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")


if __name__ == "__main__":
    record(os.environ["OPKIT_AMCT"])
