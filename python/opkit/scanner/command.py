"""What `opkit scan TARGET --input ...` does, apart from click: load the model, make inputs, scan, report."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import torch

from ..errors import OpkitError

EXIT_FALLBACK = 3


def load_target(target: str):
    """``pkg.module:factory`` -> (model, inputs or None). The factory returns a model or (model, inputs)."""
    mod_name, sep, attr = target.partition(":")
    if not sep or not mod_name or not attr:
        raise OpkitError(f"opkit scan {target}: expected pkg.module:factory (a callable returning a model "
                         "or (model, inputs))")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as e:
        raise OpkitError(f"opkit scan {target}: cannot import {mod_name}: {e}") from None
    factory = mod
    for part in attr.split("."):
        factory = getattr(factory, part, None)
        if factory is None:
            raise OpkitError(f"opkit scan {target}: {mod_name} has no attribute {attr}")
    if not callable(factory):
        raise OpkitError(f"opkit scan {target}: {attr} is not callable")
    made = factory()
    if isinstance(made, tuple) and len(made) == 2 and callable(made[0]):
        return made[0], list(made[1])
    if not callable(made):
        raise OpkitError(f"opkit scan {target}: {attr}() returned {type(made).__name__}, not a model "
                         "or (model, inputs)")
    return made, None


def parse_input(text: str, dtype: torch.dtype) -> tuple:
    """``1x3x640x640`` -> (tensor,); ``2x16,2x16`` -> two arguments. Values N(0, 1), seed 0."""
    gen = torch.Generator().manual_seed(0)
    args = []
    for part in text.split(","):
        try:
            shape = [int(d) for d in part.strip().lower().split("x")]
        except ValueError:
            raise OpkitError(f"--input {text}: expected a shape like 1x3x640x640 (several arguments: "
                             "comma-separated)") from None
        if any(d < 0 for d in shape):
            raise OpkitError(f"--input {text}: negative dim")
        args.append(torch.randn(shape, generator=gen).to(dtype))
    return tuple(args)


def dtype_of(name: str | None) -> torch.dtype | None:
    if name is None:
        return None
    dt = getattr(torch, name, None)
    if not isinstance(dt, torch.dtype) or not dt.is_floating_point:
        raise OpkitError(f"--dtype {name}: expected a floating dtype (float16, bfloat16, float32)")
    return dt


def run(target: str, input_texts: list[str], *, dtype: str | None, amp: str | None, backward: bool,
        json_path: Path | None, html_path: Path | None, op_list: Path | None, torch_npu: str, all_ops: bool,
        scaffold: bool, out, err, fake: bool = False) -> int:
    from . import scan
    from .report import print_console

    model, inputs = load_target(target)
    dt = dtype_of(dtype)
    if dt is not None and isinstance(model, torch.nn.Module):
        model = model.to(dt)
    if input_texts:
        inputs = [parse_input(t, dt or torch.float32) for t in input_texts]
    elif inputs is None:
        raise OpkitError(f"opkit scan {target}: give --input SHAPE (the factory returned no inputs)")
    if isinstance(model, torch.nn.Module):
        model.eval()
    with err.status("scanning ...") as status:
        try:
            report = scan(model, inputs, torch_npu=torch_npu, amp=amp, backward=backward, op_list=op_list,
                          fake=fake, progress=lambda m: status.update(m))
        except (RuntimeError, ValueError, TypeError, IndexError) as e:
            raise OpkitError(f"opkit scan {target}: the model failed while being traced on the CPU "
                             f"({type(e).__name__}: {e})") from None
    print_console(report, out, all_ops=all_ops)
    if json_path:
        out.print(f"json: {report.write_json(json_path)}", markup=False)
    if html_path:
        out.print(f"html: {report.write_html(html_path)}", markup=False)
    if scaffold:
        from .scaffold_aten import scaffold_report
        for s in scaffold_report(report):
            out.print(f"scaffolded {s.op_dir} from {s.source}", markup=False)
        if report.fallbacks:
            out.print("next: write each kernel.cpp, then opkit build && opkit test; "
                      "opkit.load(override_aten=True) makes the model use them", markup=False)
    return EXIT_FALLBACK if report.fallbacks else 0
