"""The model-level commands: `opkit scan`, `opkit diagnose`, `opkit dump`, `opkit compare` (docs/scan.md,
docs/diagnose.md). MODEL is loaded by one function for all of them (opkit/toolchain/user_code.py)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..errors import OpkitError
from ..toolchain.user_code import MODEL_SPELLINGS, load_model
from . import options as O
from .app import cli, err, out

EXIT_FALLBACK = 3       # `opkit scan`: some op falls back to the CPU


@cli.command()
@O.model_argument
@O.inputs
@click.option("--cast", "cast", default=None, metavar="DTYPE",
              help="cast the model and inputs to this dtype (float16, bfloat16)")
@O.renamed("scan", "--dtype", "--cast", "cast")
@click.option("--amp", type=click.Choice(["npu-o1"]), default=None,
              help="apply torch_npu's autocast table and mark precision-sensitive ops")
@click.option("--backward", is_flag=True, help="also trace the backward pass")
@click.option("--fake", is_flag=True, help="trace with FakeTensors: shapes only, no compute (forward only)")
@O.json_out
@O.html_out
@click.option("--op-list", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="FILE",
              help="torch_npu's op list from a file (wheel, npu_native_functions*.yaml or text) instead of "
                   "downloading the wheel")
@click.option("--torch-npu", "torch_npu", default="2.13.0", show_default=True, metavar="VERSION",
              help="torch-npu version")
@click.option("--all", "all_ops", is_flag=True, help="list supported ops too")
@click.option("--scaffold", is_flag=True, help="scaffold one op folder per fallback op (opkit new --from-aten)")
def scan(model: str, inputs: tuple[str, ...], cast: str | None, amp: str | None, backward: bool, fake: bool,
         json_out: str | None, html_out: str | None, op_list: Path | None, torch_npu: str, all_ops: bool,
         scaffold: bool) -> None:
    """Which ops of MODEL fall back to the CPU under torch_npu. Exit 0: none; 3: some do.

    MODEL: pkg.module:factory, path/to/file.py:factory or ./file.py:factory (a function returning a model,
    or (model, inputs))."""
    import torch

    from ..scanner import scan as run
    from ..scanner.report import print_console

    m, examples = load_model(model)
    dt = _dtype_of(cast)
    if dt is not None and isinstance(m, torch.nn.Module):
        m = m.to(dt)
    if inputs:
        examples = [O.example_inputs(t, 0, dt) for t in inputs]
    elif examples is None:
        raise OpkitError(f"opkit scan {model}: give --input SPEC (the factory returned no inputs)")
    if isinstance(m, torch.nn.Module):
        m.eval()
    with err.status("scanning ...") as status, O.stdout_for_json(json_out):
        try:
            report = run(m, examples, torch_npu=torch_npu, amp=amp, backward=backward, op_list=op_list,
                         fake=fake, progress=lambda msg: status.update(msg))
        except (RuntimeError, ValueError, TypeError, IndexError) as e:
            raise OpkitError(f"opkit scan {model}: the model failed while being traced on the CPU "
                             f"({type(e).__name__}: {e})") from None
    say = O.text_console(json_out)
    print_console(report, say, all_ops=all_ops)
    if json_out:
        O.write_json(json_out, report.to_json(), say)
    if html_out:
        say.print(f"html: {report.write_html(html_out)}", markup=False)
    if scaffold:
        from ..scanner.scaffold_aten import scaffold_report
        for s in scaffold_report(report):
            say.print(f"scaffolded {s.op_dir} from {s.source}", markup=False)
        if report.fallbacks:
            say.print("next: write each kernel.cpp, then opkit build && opkit test; "
                      "opkit.load(override_aten=True) makes the model use them", markup=False)
    sys.exit(EXIT_FALLBACK if report.fallbacks else 0)


def _dtype_of(name: str | None):
    import torch
    if name is None:
        return None
    dt = getattr(torch, name, None)
    if not isinstance(dt, torch.dtype) or not dt.is_floating_point:
        raise click.BadParameter(f"{name!r}: expected a floating dtype (float16, bfloat16, float32)",
                                 param_hint="'--cast'")
    return dt


def _module_and_args(model: str, inputs: tuple[str, ...], seed: int, command: str) -> tuple:
    """diagnose / dump: the nn.Module MODEL names and its positional inputs (--input, else the first example
    input its factory returned)."""
    import torch

    m, examples = load_model(model)
    if not isinstance(m, torch.nn.Module):
        raise OpkitError(f"model {model!r}: gave a {type(m).__name__}; this command needs a torch.nn.Module "
                         f"({MODEL_SPELLINGS})")
    if inputs:
        x = O.one_input(inputs, seed, command)
        from ..accuracy.dump import model_device
        dev = model_device(m)           # as dump runs it: the inputs on the device of the model's parameters
        try:                            # one plain forward: a model that does not take --input fails here, by name
            with torch.no_grad():
                m(*(t.to(dev) for t in x))
        except (RuntimeError, TypeError, ValueError, IndexError) as e:
            shown = ",".join(inputs)
            raise OpkitError(f"opkit {command} {model}: the model does not take --input {shown} "
                             f"({type(e).__name__}: {e})") from None
        return m, x
    if not examples:
        raise click.UsageError(f"opkit {command}: give the model's input: --input 2x3x224x224 (random, seeded) or "
                               "--input file.npy/.pt (the factory returned no inputs)")
    first = examples[0]
    return m, tuple(first) if isinstance(first, (tuple, list)) else (first,)




@cli.command()
@O.model_argument
@O.inputs
@O.policy
@O.mixlist
@O.threshold
@click.option("--batches", type=click.Path(exists=True, file_okay=False), default=None, metavar="DIR",
              help="folder of .pt/.npy input batches (no labels): top-1 agreement with FP32 over them")
@O.renamed("diagnose", "--data", "--batches", "batches")
@click.option("--samples", type=click.IntRange(min=1), default=None, metavar="N",
              help="use at most this many samples of --batches")
@O.scan_report
@O.seed
@click.option("--no-rescue", is_flag=True, help="skip the rescue ablation and the recommendation")
@click.option("--no-patch", is_flag=True, help="skip the run with opkit.patch applied")
@O.json_out
@O.html_out
@O.baseline
@O.update_baseline
@O.fail_on_divergence
def diagnose(model, inputs, policy, mixlist, threshold, batches, samples, scan_json, seed, no_rescue, no_patch,
             json_out, html_out, baseline, update_baseline, fail_on_divergence):
    """Per-layer accuracy of MODEL under a device precision POLICY, simulated on the CPU, vs FP32:
    first divergence, rescue table per op type, recommendation, and the same run with opkit.patch.

    MODEL: pkg.module:factory or path/to/file.py:factory (a function returning an nn.Module)."""
    from ..accuracy import baseline as B
    from ..accuracy.diagnose import diagnose as run

    O.refuse_overwrite({"--json": json_out, "--html": html_out, "--update-baseline": update_baseline},
                       {"--baseline": baseline, "--mixlist": mixlist, "--scan": scan_json})
    m, x = _module_and_args(model, inputs, seed, "diagnose")
    with err.status("diagnose ...") as status, O.stdout_for_json(json_out):
        rep = run(m, x, policy=policy, threshold=threshold, data=batches, samples=samples, mixlist=mixlist,
                  rescue=not no_rescue, patch=not no_patch, scan=scan_json, log=status.update)
    out = O.text_console(json_out)
    out.print(str(rep), markup=False, soft_wrap=True)
    if json_out:
        O.write_json(json_out, rep.to_dict(), out)
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
@O.model_argument
@O.inputs
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="dump folder")
@O.seed
def dump(model, inputs, out_dir, seed):
    """Write every layer's output of MODEL for a fixed input (.npy files + index.json), on the device the
    model's parameters are on. The input is saved too: dump the same run elsewhere with
    --input DIR/input_0.npy, then `opkit compare`.

    MODEL: pkg.module:factory or path/to/file.py:factory (a function returning an nn.Module)."""
    from ..accuracy.dump import dump as run

    m, x = _module_and_args(model, inputs, seed, "dump")
    folder = run(m, x, out_dir, model_spec=model)
    n = len(json.loads((Path(folder) / "index.json").read_text())["layers"])
    out.print(f"dumped {n} layer outputs to {folder}", markup=False)


@cli.command()
@click.argument("golden", type=click.Path(exists=True, file_okay=False))
@click.argument("other", type=click.Path(exists=True, file_okay=False))
@O.threshold
@O.json_out
@O.fail_on_divergence
def compare(golden, other, threshold, json_out, fail_on_divergence):
    """Per-layer table and first divergence of dump OTHER against dump GOLDEN (opkit dump folders or
    msprobe PyTorch dumps)."""
    from ..accuracy.dump import compare as run, compare_text

    res = run(golden, other, threshold)
    if not res["layers"]:
        raise OpkitError(f"opkit compare: no layer names in common between {golden} and {other}")
    say = O.text_console(json_out)
    say.print(compare_text(res), markup=False, soft_wrap=True)
    if json_out:
        O.write_json(json_out, res, say)
    sys.exit(1 if fail_on_divergence and res["first_divergence"] else 0)
