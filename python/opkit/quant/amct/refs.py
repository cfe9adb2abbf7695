"""AMCT's results on the zoo, recorded (``<model>.amct.json`` next to the zoo's weights) so that CI, which has no
AMCT, checks opkit against them: per config scenario the AMCT config JSON, AMCT's record (scale_d, offset_d,
scale_w per layer) and the top-1 class of every test sample from AMCT's fake-quant ONNX model (onnxruntime)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..records import LayerRecord
from .zoo import HERE


REJECTIONS = HERE / "rejected_configs.amct.json"     # configs AMCT rejects, with its error messages


def ref_path(model: str) -> Path:
    return HERE / f"{model}.amct.json"


@dataclass
class ScenarioRef:
    config: dict
    records: dict[str, LayerRecord]
    predictions: list[int]
    amct_top1: float


@dataclass
class ModelRef:
    model: str
    amct_commit: str
    calib: dict                      # {"n": .., "seed": ..}
    test: dict
    scenarios: dict[str, ScenarioRef]
    # "float64": both calibrations with the model's CPU-dependent forward ops (portable.FORWARD) in float64,
    # compared bit for bit on any CPU; "native": the recording CPU's own kernels (older files: equal only on a
    # CPU whose kernels round the same)
    arithmetic: str = "native"
    cpu: str = ""                    # what it was recorded on (portable.cpu_description)


def _f32(v: float) -> float:
    # float32 values written as the shortest decimal that reads back to the same float32
    return float(np.format_float_positional(np.float32(v), unique=True))


def _record_json(r: LayerRecord) -> dict:
    out = {"scale_d": _f32(r.scale_d), "offset_d": r.offset_d, "scale_w": [_f32(s) for s in r.scale_w]}
    if r.scale_h is not None:            # an LSTM/GRU (quant/rnn.py)
        out |= {"scale_h": _f32(r.scale_h), "offset_h": r.offset_h, "scale_r": [_f32(s) for s in r.scale_r]}
    return out


def write_ref(ref: ModelRef) -> Path:
    data = {"model": ref.model, "amct_commit": ref.amct_commit, "calib": ref.calib, "test": ref.test,
            "arithmetic": ref.arithmetic, "cpu": ref.cpu,
            "scenarios": {k: {"config": s.config, "amct_top1": s.amct_top1,
                              "records": {n: _record_json(r) for n, r in s.records.items()},
                              "predictions": "".join(str(p) for p in s.predictions)}
                          for k, s in ref.scenarios.items()}}
    p = ref_path(ref.model)
    p.write_text(json.dumps(data, indent=1) + "\n")
    return p


def read_ref(model: str) -> ModelRef:
    data = json.loads(ref_path(model).read_text())
    scen = {}
    for k, s in data["scenarios"].items():
        recs = {n: LayerRecord(r["scale_d"], r["offset_d"], list(r["scale_w"]), [0] * len(r["scale_w"]),
                               algo="record", scale_h=r.get("scale_h"), offset_h=r.get("offset_h"),
                               scale_r=r.get("scale_r")) for n, r in s["records"].items()}
        scen[k] = ScenarioRef(s["config"], recs, [int(c) for c in s["predictions"]], s["amct_top1"])
    return ModelRef(data["model"], data["amct_commit"], data["calib"], data["test"], scen,
                    data.get("arithmetic", "native"), data.get("cpu", ""))


REJECTED_RECORDS = HERE / "rejected_records.amct.json"   # record files AMCT refuses, with its messages


def same_message(amct: str, ours: str) -> bool:
    """AMCT's message is in opkit's, up to the file paths AMCT names (opkit names its own file and the model)."""
    import re
    parts = [f.strip(" .") for f in re.split(r"\{?/[^\s{}]*\}?", amct.strip())]
    return bool(amct.strip()) and all(f in ours for f in parts if f)


def refuse_record(model, text: str, amct_error: str, work: Path) -> tuple[bool, str]:
    """opkit's reader on a record text AMCT refused with ``amct_error``: (same message, opkit's message)."""
    from ...errors import OpkitError
    from ..records import check_against, read_record
    p = work / "record.txt"
    p.write_text(text)
    try:
        check_against(model, read_record(p), str(p))
        ours = "(accepted)"
    except OpkitError as e:
        ours = str(e)
    return same_message(amct_error, ours), ours
