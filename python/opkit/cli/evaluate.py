"""The `opkit eval`, `opkit golden-set` and `opkit experiment` commands (docs/eval.md, docs/experiment.md)."""
from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import click

from ..errors import OpkitError
from .app import cli


class IntsOption(click.Option):
    """``--topk 1 5``: the option takes every following integer token (click options take a fixed count).
    Repeating the option (``--topk 1 --topk 5``) works too. Relies on click's parser keeping options in
    ``_long_opt`` (click 8)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("multiple", True)
        super().__init__(*args, **kwargs)

    def add_to_parser(self, parser, ctx):
        out = super().add_to_parser(parser, ctx)
        for name in self.opts:
            opt = parser._long_opt.get(name) or parser._short_opt.get(name)
            if opt is not None:
                store = opt.process

                def process(value, state, store=store):
                    store(value, state)
                    while state.rargs and state.rargs[0].isdigit():
                        store(state.rargs.pop(0), state)
                opt.process = process
        return out


def _console():
    from rich.console import Console
    return Console(highlight=False, soft_wrap=True), Console(stderr=True, highlight=False, soft_wrap=True)


def variant_from_options(model, policy, mixlist, patch, quant, record, example):
    """The one variant `opkit eval` / `opkit golden-set` evaluate next to FP32 (None: FP32 only)."""
    from ..evaluate.variants import SimVariant
    if quant:
        if patch:
            raise OpkitError("--quant and --patch: evaluate one variant at a time")
        if not record:
            raise OpkitError(f"--quant {quant}: give the AMCT record file with its factors (--record FILE)")
        from ..quant import QuantVariant
        v = QuantVariant.from_amct(model, quant, record, example)
        return v.as_variant(policy or None)
    if record:
        raise OpkitError("--record goes with --quant CFG")
    if patch:
        pol = policy or "cann-force-fp16"
        return SimVariant(f"{Path(pol).stem}+patch", policy=pol, patch=True, mixlist=mixlist)
    if policy:
        return SimVariant(Path(policy).stem, policy=policy, mixlist=mixlist)
    if mixlist:
        raise OpkitError("--mixlist goes with --policy cann-allow-mix-precision")
    return None


@click.command("eval")
@click.argument("model")
@click.option("--data", required=True, help="labelled set: a .pt/.npz file with x and y, or a folder ROOT/<class>/<file>")
@click.option("--transform", default=None, metavar="PKG.MOD:FN",
              help="sample transform of a folder set (default: opkit.data.transforms:default, docs/eval.md)")
@click.option("--policy", default=None, help="device precision policy: built-in name or policy .yaml")
@click.option("--mixlist", type=click.Path(exists=True, dir_okay=False), default=None,
              help="CANN modify_mixlist JSON for cann-allow-mix-precision")
@click.option("--patch", is_flag=True, help="the model with opkit.patch applied, under --policy (default cann-force-fp16)")
@click.option("--quant", type=click.Path(exists=True, dir_okay=False), default=None, metavar="CFG",
              help="an AMCT quantization config JSON (with --record): the INT8 deployment of `opkit quant`")
@click.option("--record", type=click.Path(exists=True, dir_okay=False), default=None,
              help="the AMCT record file holding the --quant config's factors")
@click.option("--topk", cls=IntsOption, type=int, default=(1, 5), show_default=True, metavar="K [K ...]",
              help="top-k accuracies to report")
@click.option("--batch-size", type=int, default=16, show_default=True)
@click.option("--workers", type=int, default=None, help="local worker processes (default: the machine's cores)")
@click.option("--ray", "ray_address", default=None, metavar="auto|ADDRESS",
              help="shard over a Ray cluster (auto: the running one, else a local instance); pip install 'opkit[ray]'")
@click.option("--json", "json_out", is_flag=False, flag_value="-", default=None, metavar="[PATH]",
              help="write the result as JSON (to stdout without PATH)")
@click.option("--html", "html_out", is_flag=False, flag_value="eval-report.html", default=None, metavar="[PATH]",
              help="write an HTML report (default eval-report.html)")
def eval_(model, data, transform, policy, mixlist, patch, quant, record, topk, batch_size, workers, ray_address,
          json_out, html_out):
    """Top-1/top-5 of MODEL on labelled DATA as it would run on the device (a precision policy, an INT8
    config, or opkit's ops patched in), next to FP32 on the same data: per-class accuracy and the samples
    whose prediction changed.

    MODEL: pkg.module:factory or path/to/file.py:factory (a function returning an nn.Module)."""
    from ..data import load_dataset
    from ..evaluate.report import summary_lines, write_html
    from ..evaluate.runner import evaluate
    from ..evaluate.shard import ModelRef

    out, err = _console()
    ks = tuple(sorted(set(topk)))
    if not ks or min(ks) < 1:
        raise OpkitError(f"--topk: positive integers, e.g. --topk 1 5; got {' '.join(map(str, topk))}")
    ds = load_dataset(data, transform)
    variants = []
    if quant or patch or policy or mixlist or record:
        m = ModelRef(spec=model).load()
        v = variant_from_options(m, policy, mixlist, patch, quant, record, ds.batch(range(min(len(ds), batch_size)))[0])
        variants.append(v)
    # With --json on stdout, anything else printed meanwhile (Ray prints worker deaths there) goes to stderr.
    with contextlib.redirect_stdout(sys.stderr) if json_out == "-" else contextlib.nullcontext():
        res = evaluate(model, ds, variants, topk=max(ks), batch_size=batch_size, workers=workers,
                       ray=ray_address, progress=True)
    primary = res.names[-1]
    if json_out == "-":
        click.echo(json.dumps(res.to_json(primary), indent=1))
    else:
        for line in summary_lines(res, ks, primary):
            out.print(line, markup=False)
        if json_out:
            Path(json_out).write_text(json.dumps(res.to_json(primary), indent=1) + "\n")
            out.print(f"json: {json_out}", markup=False)
    if html_out:
        (err if json_out == "-" else out).print(f"html: {write_html(res, html_out, primary, ks)}", markup=False)


@click.command("golden-set")
@click.argument("src")
@click.argument("out")
@click.option("--per-class", type=int, default=10, show_default=True, help="samples per class")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of the reproducible choice")
def golden_set(src, out, per_class, seed):
    """Write the golden set of SRC (a folder ROOT/<class>/<file> or a .pt/.npz with x and y) to the new folder
    OUT: PER_CLASS samples per class chosen reproducibly, with OUT/manifest.json (file, class, sha256)."""
    from ..data import golden_set as run

    o, _ = _console()
    m = run(src, out, per_class=per_class, seed=seed)
    n_cls = len({s["label"] for s in m["samples"]})
    o.print(f"golden set: {len(m['samples'])} samples of {n_cls} classes ({per_class} per class, seed {seed}) "
            f"from {src}", markup=False)
    if m["short_classes"]:
        shown = ", ".join(m["short_classes"][:8]) + (" ..." if len(m["short_classes"]) > 8 else "")
        o.print(f"  {len(m['short_classes'])} class(es) have fewer than {per_class} samples: {shown}", markup=False)
    o.print(f"  manifest: {Path(out) / 'manifest.json'}", markup=False)
    o.print(f"  data hash: {m['data_hash']} (source {m['source_hash']})", markup=False)


COMMANDS = [eval_, golden_set]


@click.command()
@click.argument("model")
@click.option("--data", required=True, help="labelled set (.pt/.npz with x and y, or ROOT/<class>/<file>)")
@click.option("--input", "input_shape", required=True, metavar="NxCxHxW",
              help="the one fixed shape to deploy (samples are resized to it), e.g. 1x3x640x640")
@click.option("--transform", default=None, metavar="PKG.MOD:FN", help="sample transform of a folder set")
@click.option("--policy", default="cann-force-fp16", show_default=True, help="device precision policy")
@click.option("--scan", "scan_json", type=click.Path(exists=True, dir_okay=False), default=None,
              help="an `opkit scan --json` report: the ops that fall back to the CPU")
@click.option("--target-top1", type=float, default=None, help="the top-1 (percent) the deployment must reach")
@click.option("--sizes", type=click.Path(exists=True, dir_okay=False), default=None,
              help="observed input sizes (HxW per line): static vs bucketed/padded shapes, buckets chosen from them")
@click.option("--buckets", type=int, default=3, show_default=True, help="number of dynamic shape buckets")
@click.option("--fps", type=float, default=None, help="throughput target (images/s) for the modelled estimates")
@click.option("--batch-size", type=int, default=16, show_default=True)
@click.option("--workers", type=int, default=None, help="local worker processes (default: the machine's cores)")
@click.option("--ray", "ray_address", default=None, metavar="auto|ADDRESS", help="shard over a Ray cluster")
@click.option("--json", "json_out", is_flag=False, flag_value="-", default=None, metavar="[PATH]",
              help="write the result as JSON (to stdout without PATH)")
def experiment(model, data, input_shape, transform, policy, scan_json, target_top1, sizes, buckets, fps,
               batch_size, workers, ray_address, json_out):
    """Attribute MODEL's top-1 loss on labelled DATA under a device POLICY (CPU fallbacks, precision-sensitive
    op types, dynamic shapes), with the points each change recovers and the configuration to deploy.

    MODEL: pkg.module:factory or path/to/file.py:factory."""
    from ..experiment import experiment as run
    from ..experiment.report import lines

    out, err = _console()
    with contextlib.redirect_stdout(sys.stderr) if json_out == "-" else contextlib.nullcontext():
        r = run(model, data, input_shape, policy=policy, scan=scan_json, target_top1=target_top1, sizes=sizes,
                buckets=buckets, fps=fps, transform=transform, batch_size=batch_size, workers=workers,
                ray=ray_address, log=lambda s: err.print(f"experiment: {s}", markup=False)).to_json()
    if json_out == "-":
        click.echo(json.dumps(r, indent=1, default=str))
        return
    for line in lines(r):
        out.print(line, markup=False)
    if json_out:
        Path(json_out).write_text(json.dumps(r, indent=1, default=str) + "\n")
        out.print(f"json: {json_out}", markup=False)


COMMANDS.append(experiment)
for _c in COMMANDS:
    cli.add_command(_c)
