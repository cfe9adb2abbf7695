"""The part of ``tbe.tvm`` / ``te.tvm`` TBE ops call outside compute lambdas: placeholders, consts,
the ``cce`` target scope. ``tvm.compute`` lambdas (hand-written index expressions) are not emulated."""
from __future__ import annotations

import contextlib

from .graph import Const, TbeError, compute_dtype, placeholder as _placeholder


def placeholder(shape, dtype="float32", name="placeholder", attrs=None):
    return _placeholder(shape, dtype, name)


def const(value, dtype="float32"):
    return Const(value, compute_dtype(dtype))


def compute(*_a, **_k):
    raise TbeError("tvm.compute (a hand-written compute lambda) is not emulated by opkit: express the op "
                   "with the tbe.dsl APIs (docs/tbe.md lists them)")


def var(name="tindex", dtype="int32"):
    raise TbeError(f"tvm.var({name!r}): symbolic dims are not emulated; shapes are concrete on the CPU")


class _Target:
    @staticmethod
    @contextlib.contextmanager
    def cce(*_a, **_k):
        yield


target = _Target()


class _Expr:
    IntImm = int
    FloatImm = float


expr = _Expr()
