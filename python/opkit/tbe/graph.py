"""The emulated TVM tensor: a node of the compute graph a TBE op builds, and its evaluation on the CPU.

Each DSL call makes one node in one dtype (CANN maps each to one vector instruction; docs/tbe.md
"Result typing"), so evaluation computes every node with torch in that dtype: an fp16 node's result is
rounded to fp16 before the next node reads it. Graphs are built once per shape signature and evaluated
per call.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

import torch

DTYPES = {"float16": torch.float16, "float32": torch.float32, "bfloat16": torch.bfloat16,
          "int8": torch.int8, "uint8": torch.uint8, "int16": torch.int16, "int32": torch.int32,
          "int64": torch.int64, "bool": torch.bool, "uint16": torch.int32, "uint32": torch.int64,
          "uint64": torch.int64}
FLOATS = ("float16", "float32", "bfloat16")


class TbeError(RuntimeError):
    """What the device's op build would raise (E90003 unsupported dtype, shape mismatch ...)."""


class IntImm(int):
    """A static dim: an int that also answers ``.value`` like tvm's IntImm."""

    @property
    def value(self) -> int:
        return int(self)


def dtype_name(d: Any) -> str:
    d = str(d).lower()
    if d not in DTYPES:
        raise TbeError(f"dtype {d!r} is not a TBE dtype the emulation knows ({', '.join(DTYPES)})")
    return d


class _State(threading.local):
    naive: str | None = None        # naive variant: "float32" compute becomes this I/O dtype
    soc: str = "Ascend910B"
    trace: list | None = None       # tbe.build calls recorded while an op function runs


state = _State()


def compute_dtype(d: str) -> str:
    """The dtype a compute in ``d`` uses: ``d``, or the I/O dtype in the naive variant (float32 only)."""
    d = dtype_name(d)
    return state.naive if state.naive and d == "float32" else d


class _Op:
    """What tvm exposes as ``tensor.op``: a name and a tag (real schedules read them)."""

    def __init__(self, name: str, tag: str):
        self.name, self.tag, self.attrs = name, tag, {}


class Tensor:
    """One node: shape (static ints), dtype, the API that made it, and how to compute it."""

    _count = 0

    def __init__(self, shape: Sequence[int], dtype: str, api: str, fn: Callable | None = None,
                 args: Sequence["Tensor"] = (), name: str | None = None):
        Tensor._count += 1
        self._shape = tuple(int(s) for s in shape)
        self.dtype = dtype_name(dtype)
        self.api, self.fn, self.args = api, fn, tuple(args)
        self.name = name or f"{api.rsplit('.', 1)[-1]}_{Tensor._count}"
        self.op = _Op(self.name, api)

    @property
    def shape(self) -> list[IntImm]:
        return [IntImm(s) for s in self._shape]

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def __repr__(self) -> str:
        return f"Tensor({self.name}, shape={list(self._shape)}, dtype={self.dtype}, by {self.api})"

    def __call__(self, *idx):
        raise TbeError(f"indexing a tensor ({self.name}[...]) belongs to tvm.compute lambdas, which opkit's "
                       "TBE emulation does not run; use the tbe.dsl APIs")

    def astype(self, dtype: str):
        raise TbeError(f"{self.name}.astype({dtype!r}): use tbe.dsl.cast_to (tensor.astype is a tvm expression)")


class Const:
    """``tvm.const(value, dtype)``: a scalar already rounded to its dtype."""

    def __init__(self, value: float | int, dtype: str):
        self.dtype = dtype_name(dtype)
        t = torch.tensor(value, dtype=torch.float64).to(DTYPES[self.dtype])
        self.value = t.item()

    def __repr__(self) -> str:
        return f"const({self.value}, {self.dtype})"

    def __float__(self) -> float:
        return float(self.value)


def placeholder(shape: Sequence[int], dtype: str, name: str) -> Tensor:
    shape = tuple(int(getattr(s, "value", s)) for s in shape)
    for s in shape:
        if s <= 0:
            raise TbeError(f"tvm.placeholder {name!r}: shape {list(shape)} has a dim <= 0 (the device build "
                           "requires positive static dims)")
    return Tensor(shape, dtype, "placeholder", name=name)


def evaluate(outputs: Sequence[Tensor], feeds: dict[Tensor, torch.Tensor]) -> list[torch.Tensor]:
    """Compute ``outputs`` from placeholder values; nodes in topological order, each once."""
    order: list[Tensor] = []
    seen: set[int] = set(id(t) for t in feeds)
    stack: list[tuple[Tensor, bool]] = [(t, False) for t in outputs]
    while stack:
        node, ready = stack.pop()
        if ready:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.fn is None:
            raise TbeError(f"placeholder {node.name!r} is not in the build's tensor_list inputs")
        stack.append((node, True))
        stack.extend((a, False) for a in node.args if isinstance(a, Tensor))
    values: dict[int, torch.Tensor] = {id(t): v for t, v in feeds.items()}
    for node in order:
        out = node.fn(*[values[id(a)] for a in node.args])
        values[id(node)] = out.to(DTYPES[node.dtype]).reshape(node._shape)
    return [values[id(t)] for t in outputs]
