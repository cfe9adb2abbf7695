"""The `opkit quant` command (docs/quant.md): AMCT INT8 + ATC simulated on the CPU, with the fix."""
from __future__ import annotations

import sys

import click

from ..errors import OpkitError
from ..toolchain.user_code import MODEL_SPELLINGS, load_model
from .app import cli, err, out


@cli.command()
@click.argument("model")
@click.option("--calib", required=True, help="calibration inputs: .pt/.npz with x (and y), or a folder ROOT/<class>/<file>")
@click.option("--data", "data", required=True,
              help="labelled evaluation set: .pt/.npz with x and y, or a folder ROOT/<class>/<file>")
@click.option("--config", "config", type=click.Path(exists=True, dir_okay=False), default=None,
              help="AMCT quantization config JSON (default: AMCT's create_quant_config defaults)")
@click.option("--policy", default="cann-force-fp16", show_default=True,
              help="precision policy around the quantized layers (built-in name or a policy .yaml)")
@click.option("--target-drop", type=float, default=0.5, show_default=True, help="allowed top-1 drop, in points")
@click.option("--fusion-result", type=click.Path(exists=True, dir_okay=False), default=None,
              help="ATC's fusion_result.json: which fusions took effect")
@click.option("--chip", type=click.Choice(["ascend910b", "ascend310p"]), default="ascend910b", show_default=True,
              help="chip profile of the modelled latency (an estimate)")
@click.option("--batch-size", type=int, default=64, show_default=True, help="evaluation batch size")
@click.option("--transform", default=None, help="pkg.module:fn applied to folder samples (as opkit eval)")
@click.option("--no-search", is_flag=True, help="skip the searches (strategy table, table, fusions, overflow only)")
@click.option("--quant-matmul", is_flag=True,
              help="what-if: also quantize function-level matmuls (a @ b) in every INT8 row (AMCT's PyTorch flow "
                   "quantizes modules only)")
@click.option("--json", "json_out", type=click.Path(dir_okay=False), default=None, help="write the report as JSON")
@click.option("--html", "html_out", type=click.Path(dir_okay=False), default=None,
              help="write the report as HTML (weight and activation plots)")
@click.option("--amct-config-out", type=click.Path(dir_okay=False), default=None,
              help="write the recommended AMCT config JSON (AMCT's format)")
@click.option("--record-out", type=click.Path(dir_okay=False), default=None,
              help="write the recommended config's calibration as an AMCT record file")
@click.option("--fusion-switch-out", type=click.Path(dir_okay=False), default=None,
              help="write fusion_switch.cfg with PassName:off for the fusions that hurt")
@click.option("--fail-on-miss", is_flag=True, help="exit 1 when nothing meets --target-drop")
def quant(model, calib, data, config, policy, target_drop, fusion_result, chip, batch_size, transform, no_search,
          quant_matmul, json_out, html_out, amct_config_out, record_out, fusion_switch_out, fail_on_miss):
    """What AMCT post-training quantization and ATC conversion make of MODEL, simulated on the CPU: labelled
    top-1 of FP32, fp16 and INT8 variants, per-layer table, sensitivity and the smallest fix that meets
    --target-drop (verified by a rerun), strategy table, fusions, fp16 overflow.

    MODEL: pkg.module:factory or path/to/file.py:factory (a function returning an nn.Module)."""
    import torch

    from ..data import load_dataset
    from ..quant.run import quantize

    for path, what in ((json_out, "--json"), (html_out, "--html"), (amct_config_out, "--amct-config-out"),
                       (record_out, "--record-out"), (fusion_switch_out, "--fusion-switch-out")):
        for other, name in ((calib, "--calib"), (data, "--data"), (config, "--config"), (fusion_result, "--fusion-result")):
            if path and other and str(path) == str(other):
                raise click.UsageError(f"{what} {path} would overwrite {name}: give another path")
    m = load_model(model)[0]
    if not isinstance(m, torch.nn.Module):
        raise OpkitError(f"model {model!r}: gave a {type(m).__name__}; opkit quant needs a torch.nn.Module "
                         f"({MODEL_SPELLINGS})")
    ds = load_dataset(data, transform)
    with err.status("opkit quant ...") as status:
        rep = quantize(m, calib, ds, transform=transform, config=config, policy=policy, target_drop=target_drop, fusion_result=fusion_result,
                       chip=chip, batch_size=batch_size, search=not no_search, quant_matmul=quant_matmul,
                       log=status.update)
    out.print(str(rep), markup=False, soft_wrap=True)
    if amct_config_out:
        out.print(f"amct config: {rep.write_amct_config(amct_config_out)}", markup=False)
    if record_out:
        out.print(f"amct record: {rep.write_record(record_out)}", markup=False)
    if fusion_switch_out:
        p = rep.write_fusion_switch(fusion_switch_out)
        lines = p.read_text().split()
        out.print(f"fusion switch: {p} ({', '.join(lines) or 'nothing to switch off'})", markup=False)
        for n in rep.switch_notes:
            out.print(f"  note: {n}", markup=False)
    if json_out:
        out.print(f"json: {rep.write_json(json_out)}", markup=False)
    if html_out:
        out.print(f"html: {rep.write_html(html_out)}", markup=False)
    sys.exit(1 if fail_on_miss and not rep.recommend.meets_target else 0)

