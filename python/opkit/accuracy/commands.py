"""The `opkit diagnose`, `opkit dump` and `opkit compare` commands (registered by opkit/cli.py)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..errors import OpkitError

def _console():
    from rich.console import Console
    return Console(highlight=False), Console(stderr=True, highlight=False)


@click.command()
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
    from . import baseline as B
    from .diagnose import diagnose as run
    from .dump import load_model, make_inputs

    out, err = _console()
    m = load_model(model)
    x = make_inputs(list(inputs), seed)
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


@click.command()
@click.argument("model")
@click.option("--input", "inputs", multiple=True, help="input shape (seeded normal values) or a .pt/.npy file")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="dump folder")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of random --input values")
def dump(model, inputs, out_dir, seed):
    """Write every layer's output of MODEL for a fixed input (.npy files + index.json), on the device the
    model's parameters are on. The input is saved too: dump the same run elsewhere with
    --input DIR/input_0.npy, then `opkit compare`.

    MODEL: pkg.module:factory or path/to/file.py:factory (a function returning an nn.Module)."""
    from .dump import dump as run, load_model, make_inputs

    out, _ = _console()
    m = load_model(model)
    folder = run(m, make_inputs(list(inputs), seed), out_dir, model_spec=model)
    n = len(json.loads((Path(folder) / "index.json").read_text())["layers"])
    out.print(f"dumped {n} layer outputs to {folder}", markup=False)


@click.command()
@click.argument("golden", type=click.Path(exists=True, file_okay=False))
@click.argument("other", type=click.Path(exists=True, file_okay=False))
@click.option("--threshold", type=float, default=0.999, show_default=True, help="per-layer cosine threshold")
@click.option("--json", "json_out", type=click.Path(dir_okay=False), default=None, help="write the table as JSON")
@click.option("--fail-on-divergence", is_flag=True, help="exit 1 when any layer is below the threshold")
def compare(golden, other, threshold, json_out, fail_on_divergence):
    """Per-layer table and first divergence of dump OTHER against dump GOLDEN (opkit dump folders or
    msprobe PyTorch dumps)."""
    from .dump import compare as run, compare_text

    out, _ = _console()
    res = run(golden, other, threshold)
    if not res["layers"]:
        raise OpkitError(f"opkit compare: no layer names in common between {golden} and {other}")
    out.print(compare_text(res), markup=False, soft_wrap=True)
    if json_out:
        Path(json_out).write_text(json.dumps(res, indent=1) + "\n")
        out.print(f"json: {json_out}", markup=False)
    sys.exit(1 if fail_on_divergence and res["first_divergence"] else 0)


COMMANDS = [diagnose, dump, compare]
