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


def read_record(path: str | Path) -> dict[str, LayerRecord]:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise OpkitError(f"--record {p}: cannot read the AMCT record file: {e}") from None
    data = parse_textproto(text, str(p))
    extra = sorted(set(data) - {"record", "prune_record"})
    if extra:
        raise OpkitError(f"{p}: unknown top-level field(s) {', '.join(extra)} (an AMCT ScaleOffsetRecord holds "
                         "'record' entries)")
    out: dict[str, LayerRecord] = {}
    for i, entry in enumerate(data.get("record", [])):
        key = (entry.get("key") or [None])[0]
        value = (entry.get("value") or [None])[0]
        if not isinstance(key, str) or not isinstance(value, dict):
            raise OpkitError(f"{p}: record #{i + 1} needs a key and a value")
        for f in ("scale_d", "offset_d", "scale_w"):
            if f not in value:
                raise OpkitError(f"{p}: record {key!r} has no {f}")
        bits = {k: int(str(value.get(k, ["INT8"])[0]).upper().replace("INT", "") or 8) for k in ("act_type", "wts_type")}
        scale_w = [float(v) for v in value["scale_w"]]
        out[key] = LayerRecord(scale_d=float(value["scale_d"][0]), offset_d=int(value["offset_d"][0]),
                               scale_w=scale_w, offset_w=[int(v) for v in value.get("offset_w", [0] * len(scale_w))],
                               act_bits=bits["act_type"], wts_bits=bits["wts_type"], algo="record",
                               balance_factor=[float(v) for v in value["tensor_balance_factor"]]
                               if "tensor_balance_factor" in value else None,
                               scale_h=float(value["scale_h"][0]) if "scale_h" in value else None,
                               offset_h=int(value["offset_h"][0]) if "offset_h" in value else None,
                               scale_r=[float(v) for v in value["scale_r"]] if "scale_r" in value else None)
        bf = out[key].balance_factor
        if bf is not None and not all(1.192092896e-7 < v < 1 / 1.192092896e-7 for v in bf):
            # the range AMCT's DMQ requires of every factor (custom_op/utils.py:63-78)
            raise OpkitError(f"{p}: record {key!r}: tensor_balance_factor must lie in (FLT_EPSILON, 1/FLT_EPSILON)")
        if any(o != 0 for o in out[key].offset_w):
            raise OpkitError(f"{p}: record {key!r}: offset_w must be 0 (AMCT quantizes weights symmetrically)")
    return out
