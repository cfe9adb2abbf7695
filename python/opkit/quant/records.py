"""AMCT's calibration record file (protobuf text format, ``ScaleOffsetRecord``), read and written.

Schema (hicann/amct amct_pytorch/classic/graph_based/amct_pytorch/proto/scale_offset_record_pytorch.proto, doc
docs/zh/context/record.md)::

    record {
      key: "layer1.0.conv1"
      value {
        scale_d: 0.00392156886        # activation scale (one per layer)
        offset_d: -128                # activation offset
        scale_w: 0.00106807391        # weight scale, one per output channel when channel_wise
        scale_w: 0.00104224426
        offset_w: 0
        offset_w: 0
      }
    }

The text format is parsed by a small reader for the subset these files use (messages, scalars, strings,
repeated fields), not by protobuf: opkit does not depend on AMCT's generated classes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import OpkitError

@dataclass
class LayerRecord:
    """One layer's calibration result: AMCT's record fields, plus what opkit reports about it."""
    scale_d: float
    offset_d: int
    scale_w: list[float]
    offset_w: list[int]
    act_bits: int = 8
    wts_bits: int = 8
    algo: str = "ifmr"
    clip_min: float = 0.0          # the real range the activation codes cover
    clip_max: float = 0.0
    init_min: float = 0.0          # percentile bounds (IFMR) / data range (HFMG) the search started from
    init_max: float = 0.0
    data_min: float = 0.0          # the calibration data's range
    data_max: float = 0.0
    clipped: float = 0.0           # share of calibration activations outside [clip_min, clip_max]
    balance_factor: list[float] | None = None   # DMQ's per-input-channel factor (tensor_balance_factor)
    # ADA's learned (soft-rounded) weight: not a record field -- AMCT keeps it in the model quantize_model exports
    ada_weight: object = None
    ada_scale: list[float] | None = None     # ADA's KL weight scale (what becomes scale_w)
    # an LSTM/GRU (quant/rnn.py): the initial hidden state's factors and weight_hh's scales (ONNX gate order)
    scale_h: float | None = None
    offset_h: int | None = None
    scale_r: list[float] | None = None

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("ada_weight", "ada_scale")}



_TOKEN = re.compile(r'\s*(?:(#[^\n]*)|([A-Za-z_][A-Za-z0-9_]*)\s*:?\s*(\{)|([A-Za-z_][A-Za-z0-9_]*)\s*:\s*'
                    r'("(?:[^"\\]|\\.)*"|[^\s{}]+)|(\}))')


def parse_textproto(text: str, src: str = "record") -> dict:
    """Protobuf text format -> dict; every field maps to a list of values (messages are dicts)."""
    root: dict = {}
    stack = [root]
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            rest = text[pos:].strip()
            if not rest:
                break
            raise OpkitError(f"{src}:{text[:pos].count(chr(10)) + 1}: cannot read "
                             f"{rest.splitlines()[0][:60]!r} (protobuf text format expected)")
        pos = m.end()
        if m.group(1):
            continue
        if m.group(3):
            child: dict = {}
            stack[-1].setdefault(m.group(2), []).append(child)
            stack.append(child)
        elif m.group(6):
            if len(stack) == 1:
                raise OpkitError(f"{src}: unbalanced '}}' near character {pos}")
            stack.pop()
        else:
            raw = m.group(5)
            if raw.startswith('"'):
                val: object = bytes(raw[1:-1], "utf-8").decode("unicode_escape")
            elif raw in ("true", "false"):
                val = raw == "true"
            else:
                try:
                    val = int(raw)
                except ValueError:
                    try:
                        val = float(raw)
                    except ValueError:
                        val = raw                         # an enum name
            stack[-1].setdefault(m.group(4), []).append(val)
    if len(stack) != 1:
        raise OpkitError(f"{src}: a message is not closed (missing '}}')")
    return root


def _f(v: float) -> str:
    return f"{v:.9g}"          # 9 significant digits round-trip a float32


def write_record(records: dict[str, LayerRecord], path: str | Path) -> Path:
    lines = []
    for name in records:
        r = records[name]
        lines += ["record {", f'  key: "{name}"', "  value {", f"    scale_d: {_f(r.scale_d)}", f"    offset_d: {r.offset_d}"]
        lines += [f"    scale_w: {_f(s)}" for s in r.scale_w]
        lines += [f"    offset_w: {o}" for o in r.offset_w]
        lines += [f"    tensor_balance_factor: {_f(v)}" for v in (r.balance_factor or [])]
        if r.scale_h is not None:
            lines += [f"    scale_h: {_f(r.scale_h)}", f"    offset_h: {r.offset_h}"]
            lines += [f"    scale_r: {_f(s)}" for s in r.scale_r]
            lines += ["    offset_r: 0" for _ in r.scale_r]
        if r.act_bits != 8:
            lines.append(f'    act_type: "INT{r.act_bits}"')
        if r.wts_bits != 8:
            lines.append(f'    wts_type: "INT{r.wts_bits}"')
        lines += ["  }", "}"]
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(lines) + "\n")
    return p


# AMCT's record reader (hicann/amct 2be20daf, amct_pytorch/classic/graph_based/common/utils/parse_record_file.py,
# RecordFileParser / RecordManager; the schema proto/scale_offset_record_pytorch.proto): what it refuses, opkit
# refuses with its message, prefixed with the file, the record and the field
VALUE_FIELDS = {"scale_d": float, "offset_d": int, "scale_w": float, "offset_w": int, "shift_bit": int,
                "tensor_balance_factor": float, "skip_fusion": bool, "dst_type": str, "act_type": str,
                "wts_type": str, "fakequant_precision_mode": str, "scale_h": float, "offset_h": int,
                "scale_r": float, "offset_r": int, "op_data_type": str}
REPEATED = {"scale_w", "offset_w", "shift_bit", "tensor_balance_factor", "scale_r", "offset_r"}
ACT_TYPES, WTS_TYPES, DST_TYPES = ("INT4", "INT8", "INT16"), ("INT4", "INT6", "INT7", "INT8"), ("INT8", "INT4")
FLT_EPSILON = 1.192092896e-7


def _unparsable(p: Path, why: str) -> OpkitError:
    # parse_record_file.py:103-114: a text_format.ParseError, wrapped
    return OpkitError(f"{p}: {why}: the record_file{{{p}}} cannot be parsered, please ensure it matches with "
                      "scale_offset_record.proto!")


def _typed(p: Path, key: str, field: str, vals: list) -> list:
    want = VALUE_FIELDS[field]
    for v in vals:
        ok = (isinstance(v, bool) if want is bool else isinstance(v, str) if want is str
              else isinstance(v, int) and not isinstance(v, bool) if want is int
              else isinstance(v, (int, float)) and not isinstance(v, bool))
        if not ok:
            raise _unparsable(p, f"record {key!r}.{field}: {v!r} is not a {want.__name__}")
    if field not in REPEATED and len(vals) > 1:
        del vals[:-1]           # text_format.Merge (parse_record_file.py:109): a repeated optional field, last wins
    return vals


def _finite_positive(vals) -> bool:
    return all(v == v and 0.0 < v < float("inf") for v in vals)


def _check_value(p: Path, key: str, value: dict) -> None:
    """RecordManager's checks on one record's value (parse_record_file.py:495-567, 602-705, 315-427)."""
    where = f"{p}: record {key!r}"
    for field, vals in value.items():
        if field not in VALUE_FIELDS:
            raise _unparsable(p, f"record {key!r}: no field named {field!r} in SingleLayerRecord")
        _typed(p, key, field, vals)
    if not any(value.get(f) for f in ("scale_d", "offset_d", "scale_w", "offset_w", "shift_bit", "scale_h",
                                      "offset_h", "scale_r", "offset_r")):
        return                                   # an empty value: AMCT skips the layer (check_quant_value_empty)
    for f in ("scale_d", "offset_d"):
        if f not in value:
            raise OpkitError(f"{where}.{f}: cannot find {f} of layer {key} in record_file, please check data "
                             "calibration process!")
    for f in ("dst_type", "act_type", "wts_type"):
        allowed = {"dst_type": DST_TYPES, "act_type": ACT_TYPES, "wts_type": WTS_TYPES}[f]
        if f in value and value[f][0] not in allowed:
            raise OpkitError(f"{where}.{f}: Do not support {f} {value[f][0]} in record file")
    if "op_data_type" in value and value["op_data_type"][0] not in ("FLOAT32", "FLOAT16"):
        raise OpkitError(f"{where}.op_data_type: Do not support op_data_type {value['op_data_type'][0]}")
    for f in ("scale_w", "offset_w"):
        if not value.get(f):
            raise OpkitError(f"{where}.{f}: cannot find {f} of layer {key} in record_file")
    if len(value["scale_w"]) != len(value["offset_w"]):
        raise OpkitError(f"{where}.scale_w: scale_w's length, offset_w's length should be equal in layer {key}.")
    lo, hi = (-32768, 32767) if value.get("act_type", ["INT8"])[0] == "INT16" else (-128, 127)
    if not lo <= value["offset_d"][0] <= hi:
        raise OpkitError(f"{where}.offset_d: offset_d's value should be in [{lo}, {hi}] in layer {key}.")
    if any(v != 0 for v in value["offset_w"]):
        raise OpkitError(f"{where}.offset_w: offset_w's value should be 0 in layer {key}.")
    if not _finite_positive(value["scale_d"]):
        raise OpkitError(f"{where}.scale_d: scale_d's value shoule be in positivate range of float32 in layer {key}.")
    if not _finite_positive(value["scale_w"]):
        raise OpkitError(f"{where}.scale_w: scale_w's value shoule be in positivate range of float32 in layer {key}")
    bf = value.get("tensor_balance_factor")
    if bf and not all(FLT_EPSILON <= v <= 1 / FLT_EPSILON for v in bf):
        raise OpkitError(f"{where}.tensor_balance_factor: tensor_balance_factor's value shoule be in "
                         f"range[FLT_EPSILON, 1/FLT_EPSILON] of float32 in layer {key}")


def _check_rnn_value(p: Path, key: str, value: dict) -> None:
    """parse_quant_value_rnn / check_rnn_layer_params_range (parse_record_file.py:467-494, 315-359)."""
    where = f"{p}: record {key!r}"
    for f in ("scale_h", "offset_h"):
        if f not in value:
            raise OpkitError(f"{where}.{f}: cannot find {f} of layer {key} in record_file, please check data "
                             "calibration process!")
    for f in ("scale_r", "offset_r"):
        if not value.get(f):
            raise OpkitError(f"{where}.{f}: cannot find {f} of layer {key} in record_file")
    if len(value["scale_r"]) != len(value["offset_r"]):
        raise OpkitError(f"{where}.scale_r: scale_w's length, offset_w's length should be equal in layer {key}.")
    lo, hi = (-32768, 32767) if value.get("act_type", ["INT8"])[0] == "INT16" else (-128, 127)
    if not lo <= value["offset_h"][0] <= hi:
        raise OpkitError(f"{where}.offset_h: offset_h's value should be in [{lo}, {hi}] in layer {key}.")
    if any(v != 0 for v in value["offset_r"]):
        raise OpkitError(f"{where}.offset_r: offset_r's value should be 0 in layer {key}.")
    if not _finite_positive(value["scale_h"]):
        raise OpkitError(f"{where}.scale_h: scale_h's value shoule be in positivate range of float32 in layer {key}.")
    if not _finite_positive(value["scale_r"]):
        raise OpkitError(f"{where}.scale_r: scale_r's value shoule be in positivate range of float32 in layer {key}")


def read_record(path: str | Path) -> dict[str, LayerRecord]:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise OpkitError(f"--record {p}: cannot read the AMCT record file: {e}") from None
    data = parse_textproto(text, str(p))
    extra = sorted(set(data) - {"record", "prune_record"})
    if extra:
        raise _unparsable(p, f"unknown top-level field(s) {', '.join(extra)} (an AMCT ScaleOffsetRecord holds "
                             "'record' entries)")
    out: dict[str, LayerRecord] = {}
    for i, entry in enumerate(data.get("record", [])):
        if not isinstance(entry, dict):
            raise _unparsable(p, f"record #{i + 1} is not a message")
        bad = sorted(set(entry) - {"key", "value", "kv_cache_value"})
        if bad:
            raise _unparsable(p, f"record #{i + 1}: no field named {bad[0]!r} in MapFiledEntry")
        key = (entry.get("key") or [None])[0]
        value = (entry.get("value") or [None])[0]
        if not isinstance(key, str):
            raise OpkitError(f"{p}: record #{i + 1}.key: Cannot find \"key\" in record file.")
        if not isinstance(value, dict):
            raise OpkitError(f"{p}: record {key!r}.value: cannot find 'value' in {key} in record_file.")
        _check_value(p, key, value)
        if "scale_d" not in value:
            continue                              # empty: nothing to quantize (AMCT skips it too)
        if any(f in value for f in ("scale_h", "offset_h", "scale_r", "offset_r")):
            _check_rnn_value(p, key, value)
        bits = {k: int(str(value.get(k, ["INT8"])[0]).upper().replace("INT", "") or 8) for k in ("act_type", "wts_type")}
        scale_w = [float(v) for v in value["scale_w"]]
        out[key] = LayerRecord(scale_d=float(value["scale_d"][0]), offset_d=int(value["offset_d"][0]),
                               scale_w=scale_w, offset_w=[int(v) for v in value["offset_w"]],
                               act_bits=bits["act_type"], wts_bits=bits["wts_type"], algo="record",
                               balance_factor=[float(v) for v in value["tensor_balance_factor"]]
                               if "tensor_balance_factor" in value else None,
                               scale_h=float(value["scale_h"][0]) if "scale_h" in value else None,
                               offset_h=int(value["offset_h"][0]) if "offset_h" in value else None,
                               scale_r=[float(v) for v in value["scale_r"]] if "scale_r" in value else None)
    return out


def check_against(model, records: dict[str, LayerRecord], src: str = "record") -> None:
    """The checks of AMCT's record reader that need the model (parse_record_file.py:180-276, 785-843): every key
    names a layer, the layer is quantizable, and scale_w has one value per output channel or one."""
    from .config import quantizable_layers
    mods = dict(model.named_modules())
    quant = quantizable_layers(model)
    for key, r in records.items():
        if key.startswith("matmul#"):
            continue                              # opkit's what-if matmuls (--quant-matmul), not AMCT's
        if key not in mods:
            raise OpkitError(f"{src}: record {key!r}.key: find {key} failure in the model. Please match the model "
                             "and the record file.")
        if key not in quant:
            raise OpkitError(f"{src}: record {key!r}: layer {key} cannot be quantized ")
        m = mods[key]
        kind = quant[key]
        if kind == "AvgPool2d":
            expect = 1
        elif kind in ("LSTM", "GRU"):
            expect = m.weight_ih_l0.shape[0]
        else:
            expect = m.weight.shape[1] * m.groups if kind.startswith("ConvTranspose") else m.weight.shape[0]
        gates = {"LSTM": 4, "GRU": 3}.get(kind)
        for f, vals in (("scale_w", r.scale_w), ("scale_r", r.scale_r)):
            # one scale (per layer), one per output channel, or for an RNN one per gate (RNN_TENSOR_NUM)
            if vals is None or len(vals) in (1, expect, gates):
                continue
            raise OpkitError(f"{src}: record {key!r}.{f}: scale_w's length, offset_w's length({len(vals)}) should be "
                             f"equal to the {expect} when channel_wise be True. Cannot support to quantize {key}")
