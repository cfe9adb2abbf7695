"""Run a TBE op folder's ``kernel.py`` on the CPU.

The op function is called as the device's op compiler calls it (input dicts, output dicts, attrs,
``kernel_name``) under the shim modules; its ``tbe.build`` hands over the tensor list (inputs then
outputs), whose graph is then evaluated on the call's tensors. One trace per shape/dtype/attr signature.
"""
from __future__ import annotations

import importlib.util
import inspect
import os
from pathlib import Path
from types import ModuleType

import torch

from ..errors import OpkitError
from ..opspec import OpSpec
from . import graph, shims
from .graph import TbeError, Tensor, state
from .platform import normalize_soc

DEFAULT_SOC = "Ascend910B"


def kernel_path(spec: OpSpec) -> Path:
    return spec.dir / "kernel.py"


def soc_of(spec: OpSpec) -> str:
    return normalize_soc(os.environ.get("OPKIT_TBE_SOC") or spec.tbe.get("soc") or DEFAULT_SOC)


def load_module(path: Path, name: str | None = None) -> ModuleType:
    """Import a TBE implementation under the shims; unsupported APIs fail here, naming file:line."""
    path = Path(path)
    problems = shims.scan(path)
    if problems:
        raise OpkitError(f"{path}: uses TBE APIs opkit does not emulate:\n  " + "\n  ".join(problems))
    modname = name or f"opkit_tbe_{path.parent.name}_{abs(hash(str(path))) & 0xffffff:x}"
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    with shims.installed():
        try:
            spec.loader.exec_module(module)
        except OpkitError:
            raise
        except Exception as e:  # noqa: BLE001 - any import error of the user's file, with its cause
            raise OpkitError(f"{path}: importing the TBE implementation failed: {type(e).__name__}: {e}") from e
    return module


class TbeOp:
    """One TBE op folder: the imported module, its op function, traced graphs per call signature."""

    def __init__(self, spec: OpSpec):
        self.spec, self.path = spec, kernel_path(spec)
        self.module = load_module(self.path, f"opkit_tbe_{spec.snake}")
        fname = spec.tbe.get("function") or spec.snake
        self.fn = getattr(self.module, fname, None)
        if not callable(self.fn):
            funcs = [n for n, v in vars(self.module).items() if inspect.isfunction(v) and v.__module__ ==
                     self.module.__name__]
            raise OpkitError(f"{self.path}: no op function {fname!r} (op.yaml tbe.function, default the snake "
                             f"name); functions there: {', '.join(funcs)}")
        self._traces: dict[tuple, tuple[list[Tensor], list[Tensor]]] = {}
        self._ref = None

    # -- tracing --------------------------------------------------------------------------------

    def _out_meta(self, inputs: list[torch.Tensor], attrs: dict) -> list[tuple[tuple[int, ...], str]]:
        """Expected output shapes (the reference run on meta tensors) and dtypes (op.yaml)."""
        from ..toolchain.user_code import load_reference

        if self._ref is None:
            self._ref = load_reference(self.spec.reference_file)
        metas = [torch.empty(t.shape, dtype=t.dtype, device="meta") for t in inputs]
        try:
            outs = self._ref.reference(*metas, **attrs)
            outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
            shapes = [tuple(o.shape) for o in outs]
        except Exception:  # noqa: BLE001 - a reference that cannot run on meta: outputs take the lead's shape
            shapes = [tuple(inputs[0].shape)] * len(self.spec.outputs)
        names = {i.name: t for i, t in zip(self.spec.inputs, inputs)}
        dtypes = [str(names[o.dtype].dtype).replace("torch.", "") if o.dtype in names else o.dtype
                  for o in self.spec.outputs]
        return list(zip(shapes, dtypes))

    def _trace(self, inputs: list[torch.Tensor], attrs: dict, naive: bool):
        outs = self._out_meta(inputs, attrs)
        key = (tuple((tuple(t.shape), t.dtype) for t in inputs), tuple(sorted(attrs.items())), naive, soc_of(self.spec))
        if key in self._traces:
            return self._traces[key], outs
        def desc(shape, dtype):
            shape = list(shape) or [1]
            return {"shape": shape, "ori_shape": list(shape), "dtype": dtype, "format": "ND", "ori_format": "ND",
                    "range": [(d, d) for d in shape]}
        in_dicts = [desc(t.shape, str(t.dtype).replace("torch.", "")) for t in inputs]
        out_dicts = [desc(s, d) for s, d in outs]
        params = inspect.signature(self.fn).parameters
        lead = str(inputs[0].dtype).replace("torch.", "")
        state.trace, state.soc = [], soc_of(self.spec)
        state.naive = lead if naive and lead in ("float16", "bfloat16") else None
        try:
            with shims.installed():
                if all(a in params for a in attrs):
                    self.fn(*in_dicts, *out_dicts, **attrs, kernel_name=self.spec.snake)
                else:
                    self.fn(*in_dicts, *out_dicts, *attrs.values(), kernel_name=self.spec.snake)
            if not state.trace:
                raise TbeError(f"{self.path}: the op function {self.fn.__name__} returned without calling "
                               "tbe.dsl.build (or te.lang.cce.cce_build_code)")
            _, tensors = state.trace[-1]
        finally:
            state.trace, state.naive = None, None
        n_in = len(self.spec.inputs)
        if len(tensors) != n_in + len(self.spec.outputs):
            raise TbeError(f"{self.path}: tensor_list has {len(tensors)} tensors; op.yaml declares {n_in} inputs and "
                           f"{len(self.spec.outputs)} outputs (inputs first, then outputs)")
        self._traces[key] = (tensors[:n_in], tensors[n_in:])
        return self._traces[key], outs

    # -- running --------------------------------------------------------------------------------

    def __call__(self, inputs: list[torch.Tensor], attrs: dict, naive: bool = False) -> list[torch.Tensor]:
        lead = inputs[0].dtype
        inputs = [t if t.dtype == lead or not t.is_floating_point() else t.to(lead) for t in inputs]
        inputs = [t.contiguous() for t in inputs]
        (phs, results), outs = self._trace(inputs, attrs, naive)
        feeds = {}
        for ph, t, i in zip(phs, inputs, self.spec.inputs):
            want = graph.DTYPES[ph.dtype]
            if want != t.dtype:
                raise TbeError(f"{self.path}: placeholder {ph.name} is {ph.dtype} but input {i.name} is "
                               f"{str(t.dtype).replace('torch.', '')}")
            if ph.api == "placeholder" and t.numel() != _numel(ph._shape):
                raise TbeError(f"{self.path}: placeholder {ph.name} has shape {list(ph._shape)} "
                               f"({_numel(ph._shape)} elements) for input {i.name} of shape {list(t.shape)}")
            feeds[ph] = t.reshape(ph._shape)
        values = graph.evaluate(results, feeds)
        out = []
        for v, node, (shape, dtype), o in zip(values, results, outs, self.spec.outputs):
            if dtype == "bool" and node.dtype in ("int8", "uint8"):
                v = v != 0                 # bool outputs are stored one byte each on the device
            elif node.dtype != dtype:
                raise TbeError(f"{self.path}: output {o.name} is computed as {node.dtype} but op.yaml says {dtype} "
                               "(a missing cast_to back to the output dtype?)")
            if v.numel() != _numel(shape):
                raise TbeError(f"{self.path}: output {o.name} has {v.numel()} elements {list(node._shape)}; "
                               f"expected shape {list(shape)}")
            v = v.reshape(shape)
            if any(v.data_ptr() == t.data_ptr() for t in inputs):
                v = v.clone()      # an op that returns its input still writes a new output buffer
            out.append(v)
        return out


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


_ops: dict[str, TbeOp] = {}


def get(spec: OpSpec) -> TbeOp:
    key = str(spec.dir)
    if key not in _ops:
        _ops[key] = TbeOp(spec)
    return _ops[key]

