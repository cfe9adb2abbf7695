"""The `opkit quant` command (docs/quant.md): AMCT INT8 + ATC simulated on the CPU, with the fix."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import OpkitError
from ..toolchain.user_code import MODEL_SPELLINGS, load_model
from . import options as O
from .app import cli, err


@cli.command()
@O.model_argument
@click.option("--calib", required=True, metavar="PATH",
              help="calibration inputs: .pt/.npz with x (y optional), or a folder ROOT/<class>/<file>")
@click.option("--calib-transform", default=None, metavar="PKG.MOD:FN",
              help="sample transform of a folder --calib (default: --transform's; a .pt/.npz --calib takes none)")
@O.data
@O.transform
@click.option("--config", "config", type=click.Path(exists=True, dir_okay=False), default=None, metavar="FILE",
              help="AMCT quantization config JSON (default: AMCT's create_quant_config defaults)")
@O.policy
@O.target_drop
@click.option("--fusion-result", type=click.Path(exists=True, dir_okay=False), default=None, metavar="FILE",
              help="ATC's fusion_result.json: which fusions took effect")
@click.option("--chip", type=click.Choice(["ascend910b", "ascend310p"]), default="ascend910b", show_default=True,
              help="chip profile of the modelled latency (an estimate)")
@O.batch_size
@O.workers
@O.ray
@click.option("--no-search", is_flag=True, help="skip the searches (strategy table, table, fusions, overflow only)")
@click.option("--quant-matmul", is_flag=True,
              help="what-if: also quantize function-level matmuls (a @ b) in every INT8 row (AMCT's PyTorch flow "
                   "quantizes modules only)")
@click.option("--deploy-dtype", type=click.Choice(["float16", "bfloat16"]), default=None,
              help="the dtype the model is deployed in: AMCT's current-API Linear flows (W8A8, SmoothQuant, W8A16, "
                   "GPTQ, AWQ) run on the model cast to it, as strategy rows and a per-layer search")
@click.option("--algorithms", default="dmq", show_default=True, metavar="NAMES",
              help="AMCT per-layer algorithms tried as strategy rows and search actions, comma-separated: dmq, ada "
                   "(ada trains AMCT's default 10,000 steps per layer); a --config using one is simulated anyway")
@O.json_out
@O.html_out
@click.option("--amct-config-out", type=click.Path(dir_okay=False), default=None, metavar="PATH",
              help="write the recommended AMCT config JSON (AMCT's format)")
@click.option("--record-out", type=click.Path(dir_okay=False), default=None, metavar="PATH",
              help="write the recommended config's calibration as an AMCT record file")
@click.option("--fusion-switch-out", type=click.Path(dir_okay=False), default=None, metavar="PATH",
              help="write fusion_switch.cfg with PassName:off for the fusions that hurt")
@click.option("--linear-config-out", type=click.Path(dir_okay=False), default=None, metavar="PATH",
              help="with --deploy-dtype: write the current-API plan as AMCT configs (a JSON list, one "
                   "amct_pytorch.quantize call each, in order)")
@click.option("--fail-on-miss", is_flag=True, help="exit 1 when nothing meets --target-drop")
@click.option("--prefix-mb", type=click.FloatRange(min=0), default=O.DEFAULT_PREFIX_MB, show_default=True, metavar="MB",
              help="memory for the base variant's kept activations that later search evaluations start from "
                   "(prefix reuse; 0: off); in-process evaluations only: a search's default, or --workers 1")
def quant(model, calib, calib_transform, data, transform, config, policy, target_drop, fusion_result, chip,
          batch_size, workers, ray_address, no_search, quant_matmul, deploy_dtype, algorithms, json_out, html_out, amct_config_out,
          record_out, fusion_switch_out, linear_config_out, fail_on_miss, prefix_mb):
    """What AMCT post-training quantization and ATC conversion make of MODEL, simulated on the CPU: labelled
    top-1 of FP32, fp16 and INT8 variants, per-layer table, sensitivity and the smallest fix that meets
    --target-drop (verified by a rerun), strategy table, fusions, fp16 overflow.

    MODEL: pkg.module:factory or path/to/file.py:factory (a function returning an nn.Module).

    Without --workers / --ray the labelled evaluations run in this process, where prefix reuse serves the search;
    with --no-search, --prefix-mb 0 or a base that cannot be recorded (forward hooks), one worker per core."""
    import torch
    if linear_config_out and not deploy_dtype:
        raise click.UsageError("--linear-config-out needs --deploy-dtype (the current-API plan runs on that dtype)")

    from ..data import load_dataset, load_inputs
    from ..quant.run import quantize

    O.refuse_overwrite({"--json": json_out, "--html": html_out, "--amct-config-out": amct_config_out,
                        "--record-out": record_out, "--fusion-switch-out": fusion_switch_out,
                        "--linear-config-out": linear_config_out},
                       {"--calib": calib, "--data": data, "--config": config, "--fusion-result": fusion_result})
    m = load_model(model)[0]
    if not isinstance(m, torch.nn.Module):
        raise OpkitError(f"model {model!r}: gave a {type(m).__name__}; opkit quant needs a torch.nn.Module "
                         f"({MODEL_SPELLINGS})")
    ds = load_dataset(data, transform, option="--data")
    if calib_transform is None and Path(calib).is_dir():
        calib_transform = transform
    x_calib = load_inputs(calib, calib_transform, option="--calib")
    with err.status("opkit quant ...") as status, O.stdout_for_json(json_out):
        rep = quantize(m, x_calib, ds, config=config, policy=policy, target_drop=target_drop,
                       fusion_result=fusion_result, chip=chip, batch_size=batch_size, workers=workers,
                       ray=ray_address, model_spec=model, search=not no_search, quant_matmul=quant_matmul,
                       deploy_dtype=deploy_dtype, prefix_mb=prefix_mb,
                       algorithms=tuple(a.strip() for a in algorithms.split(",") if a.strip()),
                       log=status.update)
    say = O.text_console(json_out)
    say.print(str(rep), markup=False, soft_wrap=True)
    if amct_config_out:
        say.print(f"amct config: {rep.write_amct_config(amct_config_out)}", markup=False)
    if record_out:
        say.print(f"amct record: {rep.write_record(record_out)}", markup=False)
    if fusion_switch_out:
        p = rep.write_fusion_switch(fusion_switch_out)
        lines = p.read_text().split()
        say.print(f"fusion switch: {p} ({', '.join(lines) or 'nothing to switch off'})", markup=False)
        for n in rep.switch_notes:
            say.print(f"  note: {n}", markup=False)
    if linear_config_out:
        say.print(f"amct current-API configs: {rep.write_linear_configs(linear_config_out)}", markup=False)
    if json_out:
        O.write_json(json_out, rep.to_dict(), say)
    if html_out:
        say.print(f"html: {rep.write_html(html_out)}", markup=False)
    sys.exit(1 if fail_on_miss and not rep.recommend.meets_target else 0)
