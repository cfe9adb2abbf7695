"""Importing the user's Python: an op's ``reference.py`` (the harness's golden, the TBE emulation's output
shapes) and a model factory (every command that takes MODEL: scan, diagnose, dump, and the model-level
tools after them). One function each, so every command accepts the same spellings and says the same thing
when one is wrong."""
from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
import traceback
from pathlib import Path
from types import ModuleType

from ..errors import OpkitError

MODEL_SPELLINGS = "pkg.module:factory, path/to/file.py:factory or ./file.py:factory"


def import_file(path: Path, name: str) -> ModuleType:
    """Execute the file ``path`` as module ``name``. It is in sys.modules while it runs (dataclasses and
    pickling look their module up there) and stays there only if it imported."""
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return mod


def _where(e: BaseException) -> str:
    """`` (at file:line)`` of the innermost frame, where the user's code failed."""
    frames = traceback.extract_tb(e.__traceback__)
    return f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""


# -- an op's reference.py --------------------------------------------------------------------------

class ReferenceError_(Exception):
    """reference.py is missing, broken or returned something unusable (message names file and function)."""


def load_reference(path: Path) -> ModuleType:
    """Import an op's reference.py under a unique module name (ops may share file names)."""
    path = Path(path)
    if not path.is_file():
        raise ReferenceError_(f"{path}: missing; expected a reference.py defining reference(*inputs, **attrs)")
    try:
        mod = import_file(path, f"opkit_reference_{abs(hash(str(path.resolve())))}")
    except Exception as e:  # the user's file: report where, do not crash the run
        raise ReferenceError_(f"{path}: import failed: {type(e).__name__}: {e}") from e
    if not callable(getattr(mod, "reference", None)):
        raise ReferenceError_(f"{path}: no function reference(*inputs, **attrs)")
    return mod


# -- a model factory ---------------------------------------------------------------------------------

def load_model(text: str) -> tuple:
    """MODEL on the command line -> ``(model, inputs or None)``.

    ``text`` is ``pkg.module:factory`` (imported with the current folder on sys.path, as ``python -m``
    would), or ``path/to/file.py:factory`` / ``./file.py:factory`` / ``file.py:factory`` (the file run as a
    module, its folder on sys.path so its own imports resolve). ``factory`` may be dotted (``Models.vit``).
    It is a callable returning the model or ``(model, example inputs)``, or an nn.Module itself."""
    import torch

    source, sep, attr = text.rpartition(":")
    if not sep or not source or not attr:
        raise OpkitError(f"model {text!r}: expected {MODEL_SPELLINGS} (a callable returning the model "
                         "or (model, inputs))")
    if source.endswith(".py") or "/" in source or os.sep in source:
        path = Path(source).expanduser().resolve()
        if not path.is_file():
            raise OpkitError(f"model {text!r}: no file {path}")
        if str(path.parent) not in sys.path:
            sys.path.insert(0, str(path.parent))       # the file's own imports (sibling modules) resolve
        try:
            module = import_file(path, f"opkit_user_{re.sub(r'[^0-9a-zA-Z_]', '_', str(path))}")
        except Exception as e:
            raise OpkitError(f"model {text!r}: importing {path} raised {type(e).__name__}: {e}{_where(e)}") from None
    else:
        if os.getcwd() not in sys.path:          # `model:make` in the current folder, as `python -m` would
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(source)
        except ImportError as e:
            raise OpkitError(f"model {text!r}: cannot import {source}: {e}") from None
        except Exception as e:
            raise OpkitError(f"model {text!r}: importing {source} raised {type(e).__name__}: {e}{_where(e)}") from None
    factory = module
    for part in attr.split("."):
        factory = getattr(factory, part, None)
        if factory is None:
            raise OpkitError(f"model {text!r}: {source} has no attribute {attr}")
    if isinstance(factory, torch.nn.Module):
        return factory, None
    if not callable(factory):
        raise OpkitError(f"model {text!r}: {attr} is not callable")
    try:
        made = factory()
    except Exception as e:
        raise OpkitError(f"model {text!r}: {attr}() raised {type(e).__name__}: {e}{_where(e)}") from None
    if isinstance(made, tuple) and len(made) == 2 and callable(made[0]):
        return made[0], list(made[1])
    if not callable(made):
        raise OpkitError(f"model {text!r}: {attr}() returned {type(made).__name__}, not a model or (model, inputs)")
    return made, None


# -- a reference.py written for an imported op ---------------------------------------------------------

def reference_py(op_type: str, data: dict, torch_fn: str | None, command: str) -> str:
    """The reference.py an import command writes: ``torch_fn`` (a torch function name or an expression over
    the inputs and attrs of ``data``, op.yaml as a dict) as the golden, else a stub that fails until filled in."""
    ins = [i["name"] for i in data["inputs"]]
    params = ", ".join(ins + [f"{a['name']}={a['default']!r}" if "default" in a else a["name"] for a in data["attrs"]])
    head = f'"""Golden for {op_type} (written by {command}).'
    if torch_fn:
        is_name = re.fullmatch(r"[A-Za-z_][\w.]*", torch_fn) and torch_fn not in ins
        expr = f"{torch_fn}({', '.join(ins)})" if is_name else torch_fn
        return (f"{head}"
                f"\n\nThe reference the harness compares the kernel with: {expr}. Attrs the expression does not "
                f"use are accepted and ignored: add them if they change the result.\n\"\"\"\nimport torch  # noqa: F401\n"
                f"import torch.nn.functional as F  # noqa: F401\n\n\ndef reference({params}):\n    return {expr}\n")
    return (f"{head} Fill in reference() with the PyTorch computation of the op;\n"
            "`opkit test` fails with this message until then.\"\"\"\n\n\n"
            f"def reference({params}):\n"
            f"    raise NotImplementedError(\"ops/{data['op']}: write reference() in reference.py (or re-import with "
            f"--reference torch.<fn>)\")\n")
