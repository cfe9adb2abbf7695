"""``tbe.dsl`` scheduling and building on the CPU: ``auto_schedule`` keeps the outputs, ``build`` hands the
tensor list to the runner, and the dynamic-shape helpers (``compute``, ``classify``) see one concrete case."""
from __future__ import annotations

import contextlib

from .graph import Tensor, TbeError, state


class Schedule:
    """``auto_schedule(res)``: on the CPU only the outputs matter."""

    def __init__(self, outs):
        self.outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]


def auto_schedule(outs, option=None):
    for o in (outs if isinstance(outs, (list, tuple)) else [outs]):
        if not isinstance(o, Tensor):
            raise TbeError(f"tbe.dsl.auto_schedule: output must be a tensor, got {type(o).__name__} {o!r}")
    return Schedule(outs)


def build(sch, config_map=None):
    """``tbe.dsl.build(sch, {"name": ..., "tensor_list": [...]})``: record the kernel for the runner."""
    config = dict(config_map or {})
    name = str(config.get("name", ""))
    if not name or not (name[0].isalpha() or name[0] == "_") or not name.replace("_", "a").isalnum() \
            or len(name) > 200:
        raise TbeError(f"tbe.dsl.build: kernel name {name!r} must be 1-200 letters, digits or '_', not starting "
                       "with a digit")
    tensors = config.get("tensor_list")
    if not tensors:
        raise TbeError("tbe.dsl.build: config has no tensor_list (inputs then outputs)")
    if isinstance(tensors[0], (list, tuple)):        # dynamic style: one list per classified case
        tensors = tensors[0]
    if state.trace is not None:
        state.trace.append((name, list(tensors)))


@contextlib.contextmanager
def compute(*_a, **_k):
    """``with tbe.dsl.compute():`` of the dynamic style: one case at a time on the CPU."""
    yield


def var(name, bound=None, dtype="int32", addition=None):
    raise TbeError(f"tbe.dsl.var({name!r}): symbolic dims are not emulated; shapes are concrete on the CPU")


def classify(ins, mode, extra_params=None):
    """Dynamic-shape classification: on the CPU every call has concrete shapes, so there is one case.
    Reduce mode pairs the input dict with its axes (from the axes dict's ``value``)."""
    mode = str(mode)
    if mode == "reduce":
        x, axes = ins[0], ins[1]
        value = axes.get("value") if isinstance(axes, dict) else axes
        value = [value] if isinstance(value, int) else list(value or [])
        return [[x, value]]
    return [list(ins)]


def shape_to_list(shape):
    return [int(getattr(s, "value", s)) for s in shape]

