"""Precision policies: data files saying, per op type, the dtype an op is called with and what it computes in.

A policy file (YAML; built-ins in ``policies/``, users write their own) looks like::

    policy: fp16-compute
    summary: one line
    default: {io: float16, compute: io}      # ops the file does not list
    ops:
      - {types: [conv2d, linear, matmul], io: float16, compute: float32, why: "cube: FP32 accumulation"}
      - {types: [layer_norm], io: float32, compute: float32}
    mix:                                      # optional: a CANN mixed-precision list (allow_mix_precision)
      white: [MatMulV2, Conv2D]               # GE op types: fp32 may drop to fp16
      black: [ReduceSum]                      # GE op types: stay fp32
      ge_types: {linear: [MatMulV2, MatMulV3]} # op type -> GE op types (modify_mixlist speaks GE names)
    sources: [...]
    uncertain: [...]                          # facts the simulation rests on that are not established

``io``: float16 | bfloat16 | float32 | keep (the op takes the dtype its inputs arrive in, promoted).
``compute``: float32 (internals in FP32; the cube's FP32 accumulation for matmul/conv) | io (internals in the
I/O dtype: a kernel without FP32 accumulation) | hf32 (FP32 inputs rounded to 10 mantissa bits, FP32 sums).
With ``mix``, an op type listed white is called in fp16, black in fp32, gray (neither) keeps its input dtype;
``compute`` still comes from ``ops``/``default``. ``modify_mixlist`` (CANN's JSON) edits the lists.
``quant`` (for ``opkit quant``): ``device`` (default: AscendQuant's fp16 arithmetic, ATC's fusions) or
``amct-fake-quant`` (INT8 layers exactly as AMCT's fake-quant ONNX model computes them; docs/quant.md).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from ..errors import OpkitError

IO_VALUES = ("float16", "bfloat16", "float32", "keep")
COMPUTE_VALUES = ("float32", "io", "hf32")
QUANT_VALUES = ("device", "amct-fake-quant")
BUILTIN_DIR = Path(__file__).resolve().parent / "policies"


@dataclass(frozen=True)
class Entry:
    io: str                  # one of IO_VALUES
    compute: str             # one of COMPUTE_VALUES
    why: str = ""
    source: str = ""         # "ops", "default", "mix:white", "override" ...


KEEP_FP32 = Entry("float32", "float32", "kept in FP32", "override")   # an op kept in FP32 (opkit.evaluate.FP32 is the FP32 variant)


@dataclass
class Policy:
    name: str
    summary: str
    default: Entry
    ops: dict[str, Entry]
    sources: list[str] = field(default_factory=list)
    uncertain: list[str] = field(default_factory=list)
    white: set[str] = field(default_factory=set)      # GE op types (mix policies only)
    black: set[str] = field(default_factory=set)
    ge_types: dict[str, list[str]] = field(default_factory=dict)
    mixed: bool = False
    path: str = ""
    quant: str = "device"     # INT8 layers: "device" (AscendQuant in fp16, ATC fusions) | "amct-fake-quant"

    @property
    def fake_quant(self) -> bool:
        """INT8 layers as AMCT's fake-quant ONNX model computes them (FP32, no ATC fusion), not as deployed."""
        return self.quant == "amct-fake-quant"

    def entry(self, op_type: str) -> Entry:
        e = self.ops.get(op_type, self.default)
        if not self.mixed:
            return e
        names = self.ge_types.get(op_type, [])
        # black wins over white: a user's black-list to-add must keep the op in FP32 whatever the defaults say
        for lst, io, kind in ((self.black, "float32", "black"), (self.white, "float16", "white")):
            hit = [g for g in names if g in lst]
            if hit:
                return replace(e, io=io, source=f"mix:{kind}", why=f"{hit[0]} on the {kind} list")
        return replace(e, io="keep", source="mix:gray", why=f"{'/'.join(names) or op_type} gray: follows its input")

    def with_mixlist(self, path: str | Path) -> "Policy":
        """This policy with CANN's ``--modify_mixlist`` JSON applied (mix policies only)."""
        if not self.mixed:
            raise OpkitError(f"--mixlist {path}: policy {self.name} has no mixed-precision lists "
                             "(use cann-allow-mix-precision)")
        p = Path(path)
        try:
            data = json.loads(p.read_text())
        except (OSError, ValueError) as e:
            raise OpkitError(f"{p}: cannot read the modify_mixlist JSON: {e}") from None
        white, black = set(self.white), set(self.black)
        lists = {"white-list": white, "black-list": black}
        if not isinstance(data, dict) or set(data) - set(lists):
            raise OpkitError(f"{p}: expected an object with keys white-list / black-list (CANN's modify_mixlist "
                             f"format); got {sorted(data) if isinstance(data, dict) else type(data).__name__}")
        for key, target in lists.items():
            node = data.get(key, {})
            if not isinstance(node, dict) or set(node) - {"to-add", "to-remove"}:
                raise OpkitError(f"{p}: {key}: expected {{\"to-add\": [...], \"to-remove\": [...]}}")
            for op in node.get("to-add", []):
                white.discard(op), black.discard(op)   # to-add moves the op into this list
                target.add(op)
            for op in node.get("to-remove", []):
                target.discard(op)                       # to-remove makes it gray
        return replace(self, white=white, black=black, name=f"{self.name}+{p.name}")

    def describe(self) -> dict:
        return {"name": self.name, "summary": self.summary, "path": self.path,
                "default": self.default.__dict__, "ops": {k: v.__dict__ for k, v in sorted(self.ops.items())},
                "mixed": self.mixed, "white": sorted(self.white), "black": sorted(self.black),
                "sources": self.sources, "uncertain": self.uncertain}


def builtin_names() -> list[str]:
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.yaml"))


def load_policy(name_or_path: str | Path, mixlist: str | Path | None = None) -> Policy:
    """A built-in policy by name (``fp16-compute`` ...) or a policy YAML file by path."""
    p = Path(name_or_path)
    if not p.suffix:
        p = BUILTIN_DIR / f"{name_or_path}.yaml"
        if not p.is_file():
            hint = ("; for FP32 around the INT8 layers as AMCT's fake-quant model computes them use amct-fake-quant"
                    if str(name_or_path).lower() in ("fp32", "float32", "fake-quant", "amct") else "")
            raise OpkitError(f"unknown policy {name_or_path!r}; built in: {', '.join(builtin_names())} "
                             f"(or give a policy .yaml file){hint}")
    try:
        data = yaml.safe_load(p.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise OpkitError(f"{p}: cannot read the policy: {e}") from None
    pol = _parse(data, p)
    return pol.with_mixlist(mixlist) if mixlist else pol


def _entry(node, where: str, source: str) -> Entry:
    if not isinstance(node, dict):
        raise OpkitError(f"{where}: expected a mapping with io and compute")
    io, compute = node.get("io"), node.get("compute")
    if io not in IO_VALUES:
        raise OpkitError(f"{where}: io must be one of {', '.join(IO_VALUES)}; got {io!r}")
    if compute not in COMPUTE_VALUES:
        raise OpkitError(f"{where}: compute must be one of {', '.join(COMPUTE_VALUES)}; got {compute!r}")
    return Entry(io, compute, str(node.get("why", "")), source)


def _parse(data, p: Path) -> Policy:
    if not isinstance(data, dict):
        raise OpkitError(f"{p}: a policy file is a mapping (policy, default, ops ...)")
    known = {"policy", "summary", "default", "ops", "mix", "sources", "uncertain", "quant"}
    extra = sorted(set(data) - known)
    if extra:
        raise OpkitError(f"{p}: unknown field(s) {', '.join(extra)}; expected some of {', '.join(sorted(known))}")
    if not isinstance(data.get("policy"), str):
        raise OpkitError(f"{p}: field 'policy' (the policy's name) is missing")
    default = _entry(data.get("default"), f"{p}: default", "default")
    ops: dict[str, Entry] = {}
    for i, node in enumerate(data.get("ops") or []):
        where = f"{p}: ops[{i}]"
        types = node.get("types") if isinstance(node, dict) else None
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            raise OpkitError(f"{where}: 'types' must be a list of op type names")
        e = _entry(node, where, "ops")
        for t in types:
            ops[t] = e
    pol = Policy(name=data["policy"], summary=str(data.get("summary", "")), default=default, ops=ops,
                 sources=list(data.get("sources") or []), uncertain=list(data.get("uncertain") or []), path=str(p))
    quant = data.get("quant", "device")
    if quant not in QUANT_VALUES:
        raise OpkitError(f"{p}: quant must be one of {', '.join(QUANT_VALUES)}; got {quant!r}")
    pol.quant = quant
    mix = data.get("mix")
    if mix is not None:
        if not isinstance(mix, dict) or set(mix) - {"white", "black", "ge_types"}:
            raise OpkitError(f"{p}: mix: expected white, black, ge_types")
        pol.mixed = True
        pol.white, pol.black = set(mix.get("white") or []), set(mix.get("black") or [])
        pol.ge_types = {k: [v] if isinstance(v, str) else list(v) for k, v in (mix.get("ge_types") or {}).items()}
    return pol
