"""How an opkit op becomes a torch op: the one registration surface (docs/architecture.md "Registration").

Every op, whatever builds or runs it, is registered here and nowhere else:

* schema: ``opkit::<op>`` and ``opkit_naive::<op>`` from op.yaml (``OpSpec.schema()``);
* Meta: the op's shape rule (C++, SymInt-aware), or a Python fake for ops whose kernel runs in Python;
* Autocast (CPU and PrivateUse1): floating inputs take the lead input's dtype, then the op below autocast;
* Autograd: a C++ kernel -- no Python when no input needs a gradient -- that otherwise runs a
  ``torch.autograd.Function`` built from the op's formulas (``opkit.autograd.formulas``, handed in);
* per-dispatch-key kernels: the emulator's (C++, over the op's kernel modules, ``register_emulator``), a
  Python callable (TBE and CANN-project ops, ``register_python``), or a device library's kernel table (the
  NPU target's PrivateUse1 kernels, ``register_native``).

The C++ side is one Python extension module, ``_opkit_torch`` (python/opkit/csrc, cmake/opkit_torch.cmake),
built once per torch version into the per-user cache and shared by every op: an op's build compiles only
its kernel modules. The description it reads per op comes from ``opkit.lowering.lower(spec)``.
"""
from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import sys
import threading
from pathlib import Path
from typing import Any, Callable

from .errors import BuildError, OpkitError
from .opspec import OpSpec

NAMESPACES = ("opkit", "opkit_naive")
_lock = threading.RLock()
_rt = None
_defined: dict[str, str] = {}       # snake -> op folder it was defined from
_autograd: dict[str, str] = {}      # qualified name -> "kernel" | "reference" | "none"
_descs: dict[str, Any] = {}         # snake -> its _opkit_torch.OpDesc (the Autograd kernel reads it too)


# -- the torch-side library -------------------------------------------------------------------------

def sources() -> list[Path]:
    """What _opkit_torch is built from (its key in the cache)."""
    from .workspace import PACKAGE_DIR, cmake_dir
    files = sorted((PACKAGE_DIR / "csrc").glob("*.*")) + sorted((PACKAGE_DIR / "include" / "opkit").glob("*.h"))
    return files + [cmake_dir() / "opkit.cmake", cmake_dir() / "opkit_torch.cmake", cmake_dir() / "workspace" /
                    "CMakeLists.txt"]


def runtime_dir() -> Path:
    """``<cache>/runtime/<key>``: key = torch and Python versions and the library's sources."""
    from .toolchain.cache import cache_root
    from .toolchain.stamps import torch_version
    h = hashlib.sha256(f"torch {torch_version()} py {sys.version_info[:2]} {sys.executable}".encode())
    for p in sources():
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    return cache_root() / "runtime" / h.hexdigest()[:16]


def runtime(quiet: bool = False):
    """The ``_opkit_torch`` module, built on first use (once per torch version; under a file lock)."""
    global _rt
    with _lock:
        if _rt is not None:
            return _rt
        import torch  # noqa: F401  (libtorch must be loaded before the extension)
        where = runtime_dir()
        where.mkdir(parents=True, exist_ok=True)
        with open(where / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            found = sorted(where.glob("_opkit_torch*.so"))
            if not found:
                from .toolchain.cmake_project import build_torch_library
                from .toolchain.tools import first_use_progress
                if not quiet:
                    print(f"opkit: building opkit's torch-side library into {where} (once per torch version)",
                          file=sys.stderr, flush=True)
                with first_use_progress(quiet) as log:
                    build_torch_library(where, log=log)
                found = sorted(where.glob("_opkit_torch*.so"))
                if not found:
                    raise BuildError(f"opkit: the torch-side library was not built into {where}")
        spec = importlib.util.spec_from_file_location("opkit._opkit_torch", found[0])
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _rt = module
        return _rt


# -- the description of an op ------------------------------------------------------------------------

def describe(spec: OpSpec, module_dir: Path | str = "") -> dict[str, Any]:
    """What the C++ kernels read about an op (keys: python/opkit/csrc/registry.cpp parse())."""
    from .lowering import lower
    op = lower(spec)
    names = [i.name for i in op.inputs]
    attr_names = [a.name for a in op.attrs]
    slots: dict[str, int] = {}
    checks = []
    for c in op.dim_checks:
        if c.var and c.var not in slots:
            slots[c.var] = len(slots)
        checks.append({"kind": c.kind, "input": names.index(c.input), "index": int(c.index),
                       "value": int(c.value) if c.kind in ("fixed", "batch") else 0,
                       "var": slots.get(c.var, -1), "owner": names.index(c.owner) if c.owner else -1,
                       "label": str(c.value) if c.kind in ("bind", "same") else ""})
    return {
        "snake": spec.snake, "tiling_func": spec.tiling_func, "dtypes_text": ", ".join(spec.dtypes),
        "module_dir": str(module_dir), "dim_attr": attr_names.index(op.dim_attr) if op.dim_attr else -1,
        "num_vars": len(slots), "num_gm_args": len(op.inputs) + len(op.outputs) + 2,
        "inputs": [{"name": i.name, "shape": ", ".join(str(t) for t in i.shape), "ellipsis": i.ellipsis,
                    "fixed_rank": i.fixed_rank, "moves": i.moves} for i in op.inputs],
        "outputs": [{"name": o.name, "dtype": o.dtype.name if o.dtype else None,
                     "kernel_dtype": o.kernel_dtype.name if o.kernel_dtype else None, "zero": o.zero,
                     "like": names.index(o.like) if o.like else -1,
                     "reduce_src": names.index(o.reduce_src) if o.reduce_src else -1,
                     "keep_attr": attr_names.index(o.reduce_keep) if o.reduce_keep else -1} for o in op.outputs],
        "attrs": [{"name": a.name, "type": a.type.name, "is_dim": a.role == "dim",
                   "choices": list(next(s for s in spec.attrs if s.name == a.name).choices),
                   "choices_text": a.choices_text} for a in op.attrs],
        "checks": checks,
        "variants": [{"dtype": v.dtype.name, "tag": v.tag, "naive_on_demand": v.naive_on_demand}
                     for v in op.variants],
    }


# -- registration ---------------------------------------------------------------------------------------

def define(spec: OpSpec) -> bool:
    """Define ``opkit::<op>`` and ``opkit_naive::<op>``; False if this process already has the op (from the
    same folder). A second folder for the same op name is an error: a process can define an op once."""
    with _lock:
        prev = _defined.get(spec.snake)
        if prev is not None:
            if prev != str(spec.dir):
                raise OpkitError(f"opkit.load: op {spec.snake} is already registered from {prev}; a process can "
                                 f"register an op once, so {spec.dir} cannot replace it (restart Python)")
            return False
        rt = runtime()
        for ns in NAMESPACES:
            rt.define(ns, spec.schema())
        _defined[spec.snake] = str(spec.dir)
        return True


def register_emulator(spec: OpSpec, module_dir: Path) -> None:
    """An op whose kernel runs on the AscendC CPU emulator: C++ CPU kernels over the kernel modules in
    ``module_dir`` (kernel_<tag>[_naive].so), Meta from the shape rule, Autocast."""
    if not define(spec):
        return
    rt = runtime()
    desc = rt.OpDesc(describe(spec, Path(module_dir).resolve()))
    rt.impl("opkit", "CPU", "emulator", desc)
    rt.impl("opkit_naive", "CPU", "emulator_naive", desc)
    for ns in NAMESPACES:
        rt.impl(ns, "Meta", "meta", desc)
    for key in ("AutocastCPU", "AutocastPrivateUse1"):
        rt.impl("opkit", key, "autocast", desc)
    _descs[spec.snake] = desc


def set_module_builder(fn: Callable[[str, str, str], None] | None) -> None:
    """``fn(snake, module_dir, file)`` makes an on-demand kernel module current (builds it, or raises saying
    why not) before the torch-side library first loads it in this process; opkit.loader sets it."""
    runtime().set_module_builder(fn)


_py_libs: dict = {}   # torch.library.Library per namespace for Python kernels of ops with list attrs (kept alive)


def register_python(spec: OpSpec, kernel: Callable, naive_kernel: Callable, fake: Callable) -> None:
    """An op whose kernel runs in Python (TBE ops, docs/tbe.md): ``kernel(*inputs, *attrs)`` on the CPU
    (``naive_kernel`` in opkit_naive), ``fake`` on meta tensors."""
    if not define(spec):
        return
    rt = runtime()
    from .opspec.model import LIST_ATTR_TYPES
    if any(a.type in LIST_ATTR_TYPES for a in spec.attrs):
        # list attrs (CANN ops, docs/cann.md): the C++ boxed kernel passes scalars only, and the C++ op description
        # has no list type: torch.library's Python kernels instead, no autocast kernel (autocast falls through)
        import torch
        for ns, fn in (("opkit", kernel), ("opkit_naive", naive_kernel)):
            lib = _py_libs.setdefault(ns, torch.library.Library(ns, "IMPL"))
            lib.impl(spec.snake, fn, "CPU")
            lib.impl(spec.snake, fake, "Meta")
        return
    n_args, n_out = len(spec.inputs) + len(spec.attrs), len(spec.outputs)
    for ns, fn in (("opkit", kernel), ("opkit_naive", naive_kernel)):
        rt.impl_python(ns, "CPU", spec.snake, fn, n_args, n_out)
        rt.impl_python(ns, "Meta", spec.snake, fake, n_args, n_out)
    desc = rt.OpDesc(describe(spec))
    for key in ("AutocastCPU", "AutocastPrivateUse1"):
        rt.impl("opkit", key, "autocast", desc)
    _descs[spec.snake] = desc



def register_native(key: str, library: Path | str, namespace: str = "opkit") -> list[str]:
    """A device library's kernels for ``key`` (the NPU target: PrivateUse1): the library exports
    ``opkit_kernel_table`` (python/opkit/include/opkit/kernel_table.h) and does not register anything
    itself. The ops' schemas must be defined first (their host registration). Returns the ops registered."""
    with _lock:
        return list(runtime().impl_library(namespace, key, str(library)))


def register_autograd(spec: OpSpec, formulas: tuple[str, Callable, Callable], namespace: str = "opkit") -> str:
    """Autograd of a registered op from its ``formulas`` (kind, setup_context, backward: what
    ``opkit.autograd.formulas`` returns -- a backward op, the reference, or not differentiable); returns the
    kind. Once per op and process."""
    qualname = f"{namespace}::{spec.snake}"
    with _lock:
        if qualname in _autograd:
            return _autograd[qualname]
        import torch
        from .opspec.model import LIST_ATTR_TYPES
        if spec.snake not in _descs and any(a.type in LIST_ATTR_TYPES for a in spec.attrs) and \
                hasattr(getattr(torch.ops, namespace), spec.snake):
            # an op with list attrs has no C++ description (register_python): torch.library's autograd instead
            kind, setup, backward = formulas
            torch.library.register_autograd(qualname, backward, setup_context=setup)
            _autograd[qualname] = kind
            return kind
        if spec.snake not in _descs:
            raise OpkitError(f"opkit.registration.register_autograd: {qualname} is not registered; load the op "
                             "first (opkit.load())")
        kind, setup, backward = formulas
        packet = getattr(getattr(torch.ops, namespace), spec.snake)
        runtime().impl_autograd(namespace, _descs[spec.snake], _with_grad(packet.default, setup, backward))
        _autograd[qualname] = kind
        return kind


def autograd_kind(qualname: str) -> str | None:
    """How ``qualname`` (e.g. ``opkit::layer_norm_fp32``) got its autograd, or None."""
    return _autograd.get(qualname)


def _with_grad(op, setup: Callable, backward: Callable) -> Callable:
    """The op as a torch.autograd.Function: what the C++ Autograd kernel runs when an input needs a
    gradient (the forward runs the op below autograd)."""
    import torch

    class Op(torch.autograd.Function):
        @staticmethod
        def forward(*args):
            with torch._C._AutoDispatchBelowAutograd():
                return op(*args)

        @staticmethod
        def setup_context(ctx, inputs, output):
            setup(ctx, inputs, output)

        @staticmethod
        def backward(ctx, *grads):
            return backward(ctx, *grads)

    Op.__name__ = Op.__qualname__ = f"{op.name().replace('::', '_')}_autograd"
    return Op.apply


def last_launch() -> dict:
    """This thread's last emulator launch: GM bytes, vector elements and repeats, blocks, UB high water."""
    return dict(runtime().last_launch())
