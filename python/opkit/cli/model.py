"""The model-level commands: `opkit scan`, `opkit diagnose`, `opkit dump`, `opkit compare` (docs/scan.md,
docs/diagnose.md). MODEL is loaded by one function for all of them (opkit/toolchain/user_code.py)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..errors import OpkitError
from ..toolchain.user_code import MODEL_SPELLINGS, load_model
from .app import cli, err, out

EXIT_FALLBACK = 3       # `opkit scan`: some op falls back to the CPU


@cli.command()
@click.argument("target")
@click.option("--input", "inputs", multiple=True, metavar="SHAPE",
              help="an example input, e.g. 1x3x640x640 (repeat for several sizes; a,b for several arguments)")
@click.option("--dtype", default=None, help="cast the model and inputs to this dtype (float16, bfloat16)")
@click.option("--amp", type=click.Choice(["npu-o1"]), default=None,
              help="apply torch_npu's autocast table and mark precision-sensitive ops")
@click.option("--backward", is_flag=True, help="also trace the backward pass")
@click.option("--fake", is_flag=True, help="trace with FakeTensors: shapes only, no compute (forward only)")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="write the report as JSON")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="write the report as HTML")
@click.option("--op-list", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="torch_npu's op list from a file (wheel, npu_native_functions*.yaml or text) instead of "
                   "downloading the wheel")
@click.option("--torch-npu", "torch_npu", default="2.13.0", show_default=True, help="torch-npu version")
@click.option("--all", "all_ops", is_flag=True, help="list supported ops too")
@click.option("--scaffold", is_flag=True, help="scaffold one op folder per fallback op (opkit new --from-aten)")
def scan(target: str, inputs: tuple[str, ...], dtype: str | None, amp: str | None, backward: bool, fake: bool,
         json_path: Path | None, html_path: Path | None, op_list: Path | None, torch_npu: str, all_ops: bool,
         scaffold: bool) -> None:
    """Which ops of the model TARGET fall back to the CPU under torch_npu. Exit 0: none; 3: some do.

    TARGET: pkg.module:factory, path/to/file.py:factory or ./file.py:factory (a function returning a model,
    or (model, inputs))."""
    import torch

    from ..scanner import scan as run
    from ..scanner.report import print_console

    model, examples = load_model(target)
    dt = _dtype_of(dtype)
    if dt is not None and isinstance(model, torch.nn.Module):
        model = model.to(dt)
    if inputs:
        examples = [_shape_input(t, dt or torch.float32) for t in inputs]
    elif examples is None:
        raise OpkitError(f"opkit scan {target}: give --input SHAPE (the factory returned no inputs)")
    if isinstance(model, torch.nn.Module):
        model.eval()
    with err.status("scanning ...") as status:
        try:
            report = run(model, examples, torch_npu=torch_npu, amp=amp, backward=backward, op_list=op_list,
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
        from ..scanner.scaffold_aten import scaffold_report
        for s in scaffold_report(report):
            out.print(f"scaffolded {s.op_dir} from {s.source}", markup=False)
        if report.fallbacks:
            out.print("next: write each kernel.cpp, then opkit build && opkit test; "
                      "opkit.load(override_aten=True) makes the model use them", markup=False)
    sys.exit(EXIT_FALLBACK if report.fallbacks else 0)


def _shape_input(text: str, dtype) -> tuple:
    """`opkit scan --input`: ``1x3x640x640`` -> (tensor,); ``2x16,2x16`` -> two arguments. Values N(0, 1), seed 0."""
    import torch
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


def _dtype_of(name: str | None):
    import torch
    if name is None:
        return None
    dt = getattr(torch, name, None)
    if not isinstance(dt, torch.dtype) or not dt.is_floating_point:
        raise OpkitError(f"--dtype {name}: expected a floating dtype (float16, bfloat16, float32)")
    return dt


def _module_and_args(model: str, inputs: tuple[str, ...], seed: int) -> tuple:
    """diagnose / dump: the nn.Module MODEL names and its positional inputs (--input, else the first example
    input its factory returned)."""
    import torch

    from ..accuracy.dump import make_inputs
    m, examples = load_model(model)
    if not isinstance(m, torch.nn.Module):
        raise OpkitError(f"model {model!r}: gave a {type(m).__name__}; this command needs a torch.nn.Module "
                         f"({MODEL_SPELLINGS})")
    if inputs or not examples:
        return m, make_inputs(list(inputs), seed)
    first = examples[0]
    return m, tuple(first) if isinstance(first, (tuple, list)) else (first,)




@cli.command()
@click.argument("model")
@click.option("--input", "inputs", multiple=True, help="input shape (2x3x224x224, seeded normal values) or a "
              ".pt/.npy file; repeat for several positional inputs")
@click.option("--policy", default="cann-force-fp16", show_default=True,
              help="built-in policy name or a policy .yaml (built in: fp16-compute, torch-npu-autocast, "
                   "cann-force-fp16, cann-allow-fp32-to-fp16, cann-allow-mix-precision)")
@click.option("--mixlist", type=click.Path(exists=True, dir_okay=False), default=None,
              help="CANN modify_mixlist JSON applied to cann-allow-mix-precision")
@click.option("--threshold", type=float, default=0.999, show_default=True, help="per-layer cosine threshold")
@click.option("--data", type=click.Path(exists=True, file_okay=False), default=None,
              help="folder of .pt/.npy input batches for top-1 agreement")
@click.option("--samples", type=int, default=None, help="use at most this many samples of --data")
@click.option("--scan", "scan_json", type=click.Path(exists=True, dir_okay=False), default=None,
              help="an `opkit scan` JSON report: adds the fallback column")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of random --input values")
@click.option("--no-rescue", is_flag=True, help="skip the rescue ablation and the recommendation")
@click.option("--no-patch", is_flag=True, help="skip the run with opkit.patch applied")
@click.option("--json", "json_out", type=click.Path(dir_okay=False), default=None, help="write the report as JSON")
@click.option("--html", "html_out", type=click.Path(dir_okay=False), default=None,
              help="write the report as HTML (per-layer cosine plot)")
@click.option("--baseline", type=click.Path(dir_okay=False), default=None,
              help="fail when a layer's cosine or the top-1 agreement got worse than this stored baseline")
@click.option("--update-baseline", type=click.Path(dir_okay=False), default=None,
              help="store this run's per-layer cosines as the baseline")
@click.option("--fail-on-divergence", is_flag=True, help="exit 1 when any layer is below the threshold")
def diagnose(model, inputs, policy, mixlist, threshold, data, samples, scan_json, seed, no_rescue, no_patch,
             json_out, html_out, baseline, update_baseline, fail_on_divergence):
    """Per-layer accuracy of MODEL under a device precision POLICY, simulated on the CPU, vs FP32:
    first divergence, rescue table per op type, recommendation, and the same run with opkit.patch.

    MODEL: pkg.module:factory or path/to/file.py:factory (a function returning an nn.Module)."""
    from ..accuracy import baseline as B
    from ..accuracy.diagnose import diagnose as run

    m, x = _module_and_args(model, inputs, seed)
    with err.status("diagnose ...") as status:
        rep = run(m, x, policy=policy, threshold=threshold, data=data, samples=samples, mixlist=mixlist,
                  rescue=not no_rescue, patch=not no_patch, scan=scan_json, log=status.update)
    out.print(str(rep), markup=False, soft_wrap=True)
    if json_out:
        out.print(f"json: {rep.write_json(json_out)}", markup=False)
    if html_out:
        out.print(f"html: {rep.write_html(html_out)}", markup=False)
    code = 1 if fail_on_divergence and rep.diverged else 0
    if baseline:
        fails, notes = B.check_diagnose(baseline, rep)
        for n in notes:
            out.print(f"baseline: note: {n}", markup=False)
        if fails:
            out.print(f"baseline {baseline}: {len(fails)} regression(s):", markup=False)
            for f in fails:
                out.print(f"  {f}", markup=False)
            code = 1
        else:
            out.print(f"baseline {baseline}: no regression ({len(rep.layers)} layers checked)", markup=False)
    if update_baseline:
        out.print(f"baseline written: {B.update_diagnose(update_baseline, rep)}", markup=False)
    sys.exit(code)


@cli.command()
@click.argument("model")
@click.option("--input", "inputs", multiple=True, help="input shape (seeded normal values) or a .pt/.npy file")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="dump folder")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of random --input values")
def dump(model, inputs, out_dir, seed):
    """Write every layer's output of MODEL for a fixed input (.npy files + index.json), on the device the
    model's parameters are on. The input is saved too: dump the same run elsewhere with
    --input DIR/input_0.npy, then `opkit compare`.

    MODEL: pkg.module:factory or path/to/file.py:factory (a function returning an nn.Module)."""
    from ..accuracy.dump import dump as run

    m, x = _module_and_args(model, inputs, seed)
    folder = run(m, x, out_dir, model_spec=model)
    n = len(json.loads((Path(folder) / "index.json").read_text())["layers"])
    out.print(f"dumped {n} layer outputs to {folder}", markup=False)


@cli.command()
@click.argument("golden", type=click.Path(exists=True, file_okay=False))
@click.argument("other", type=click.Path(exists=True, file_okay=False))
@click.option("--threshold", type=float, default=0.999, show_default=True, help="per-layer cosine threshold")
@click.option("--json", "json_out", type=click.Path(dir_okay=False), default=None, help="write the table as JSON")
@click.option("--fail-on-divergence", is_flag=True, help="exit 1 when any layer is below the threshold")
def compare(golden, other, threshold, json_out, fail_on_divergence):
    """Per-layer table and first divergence of dump OTHER against dump GOLDEN (opkit dump folders or
    msprobe PyTorch dumps)."""
    from ..accuracy.dump import compare as run, compare_text

    res = run(golden, other, threshold)
    if not res["layers"]:
        raise OpkitError(f"opkit compare: no layer names in common between {golden} and {other}")
    out.print(compare_text(res), markup=False, soft_wrap=True)
    if json_out:
        Path(json_out).write_text(json.dumps(res, indent=1) + "\n")
        out.print(f"json: {json_out}", markup=False)
    sys.exit(1 if fail_on_divergence and res["first_divergence"] else 0)
