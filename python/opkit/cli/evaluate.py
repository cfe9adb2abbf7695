"""The `opkit eval`, `opkit golden-set` and `opkit experiment` commands (docs/eval.md, docs/experiment.md)."""
from __future__ import annotations

from pathlib import Path

import click

from ..errors import OpkitError
from . import options as O
from .app import cli, err
from .app import out as console


class IntList(click.ParamType):
    """``--topk 1,5``: a comma-separated list of positive integers (the option may also be repeated)."""
    name = "K[,K...]"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        try:
            ks = tuple(int(v) for v in str(value).split(","))
        except ValueError:
            ks = ()
        if not ks or min(ks) < 1:
            self.fail(f"positive integers, comma-separated, e.g. --topk 1,5; got {value!r}", param, ctx)
        return ks


def variant_from_options(model, policy, mixlist, patch, quant, record, example):
    """The one variant `opkit eval` evaluates next to FP32."""
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
    if mixlist and Path(policy).stem != "cann-allow-mix-precision":
        raise OpkitError(f"--mixlist goes with --policy cann-allow-mix-precision, not --policy {policy}")
    if patch:
        return SimVariant(f"{Path(policy).stem}+patch", policy=policy, patch=True, mixlist=mixlist)
    return SimVariant(Path(policy).stem, policy=policy, mixlist=mixlist)


@cli.command("eval")
@O.model_argument
@O.data
@O.transform
@O.policy
@O.mixlist
@click.option("--patch", is_flag=True, help="the model with opkit.patch applied, under --policy")
@click.option("--quant", type=click.Path(exists=True, dir_okay=False), default=None, metavar="CFG",
              help="an AMCT quantization config JSON (with --record): the INT8 deployment of `opkit quant`, "
                   "under --policy")
@click.option("--record", type=click.Path(exists=True, dir_okay=False), default=None, metavar="FILE",
              help="the AMCT record file holding the --quant config's factors")
@click.option("--topk", type=IntList(), multiple=True, default=["1,5"], show_default=True,
              help="top-k accuracies to report: comma-separated (--topk 1,5) or repeated (--topk 1 --topk 5)")
@O.batch_size
@O.workers
@O.ray
@O.json_out
@O.html_out
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

    ks = tuple(sorted({k for group in topk for k in group}))
    O.refuse_overwrite({"--json": json_out, "--html": html_out}, {"--data": data, "--quant": quant,
                                                                  "--record": record, "--mixlist": mixlist})
    ds = load_dataset(data, transform)
    m = ModelRef(spec=model).load()
    v = variant_from_options(m, policy, mixlist, patch, quant, record, ds.batch(range(min(len(ds), batch_size)))[0])
    with O.stdout_for_json(json_out):
        res = evaluate(model, ds, [v], topk=max(ks), batch_size=batch_size, workers=workers,
                       ray=ray_address, progress=True)
    primary = res.names[-1]
    say = O.text_console(json_out)
    if json_out != "-":
        for line in summary_lines(res, ks, primary):
            say.print(line, markup=False)
    if json_out:
        O.write_json(json_out, res.to_json(primary), say)
    if html_out:
        say.print(f"html: {write_html(res, html_out, primary, ks)}", markup=False)


@cli.command("golden-set")
@click.argument("src")
@click.argument("out")
@click.option("--per-class", type=int, default=10, show_default=True, help="samples per class")
@O.seed
def golden_set(src, out, per_class, seed):
    """Write the golden set of SRC (a folder ROOT/<class>/<file> or a .pt/.npz with x and y) to the new folder
    OUT: PER_CLASS samples per class chosen reproducibly, with OUT/manifest.json (file, class, sha256)."""
    from ..data import golden_set as run

    o = console
    m = run(src, out, per_class=per_class, seed=seed)
    n_cls = len({s["label"] for s in m["samples"]})
    o.print(f"golden set: {len(m['samples'])} samples of {n_cls} classes ({per_class} per class, seed {seed}) "
            f"from {src}", markup=False)
    if m["short_classes"]:
        shown = ", ".join(m["short_classes"][:8]) + (" ..." if len(m["short_classes"]) > 8 else "")
        o.print(f"  {len(m['short_classes'])} class(es) have fewer than {per_class} samples: {shown}", markup=False)
    o.print(f"  manifest: {Path(out) / 'manifest.json'}", markup=False)
    o.print(f"  data hash: {m['data_hash']} (source {m['source_hash']})", markup=False)


@cli.command()
@O.model_argument
@O.data
@O.inputs
@O.transform
@O.policy
@O.scan_report
@O.target_drop
@O.renamed("experiment", "--target-top1", "--target-drop", "target_top1")
@click.option("--sizes", type=click.Path(exists=True, dir_okay=False), default=None, metavar="FILE",
              help="observed input sizes (HxW per line): static vs bucketed/padded shapes, buckets chosen from them")
@click.option("--buckets", type=click.IntRange(min=1), default=3, show_default=True, metavar="N",
              help="number of dynamic shape buckets")
@click.option("--fps", type=float, default=None, help="throughput target (images/s) for the modelled estimates")
@O.batch_size
@O.workers
@O.ray
@O.json_out
def experiment(model, data, inputs, transform, policy, scan_json, target_drop, sizes, buckets, fps,
               batch_size, workers, ray_address, json_out, target_top1=None):
    """Attribute MODEL's top-1 loss on labelled DATA under a device POLICY (CPU fallbacks, precision-sensitive
    op types, dynamic shapes), with the points each change recovers and the configuration to deploy: the
    cheapest that loses at most --target-drop points against FP32.

    --input NxCxHxW: the one fixed shape to deploy (samples are resized to it), e.g. 1x3x640x640.

    MODEL: pkg.module:factory or path/to/file.py:factory."""
    from ..experiment import experiment as run
    from ..experiment.report import lines

    if len(inputs) != 1:
        raise click.UsageError("opkit experiment: give the one shape to deploy: --input NxCxHxW "
                               f"(got {len(inputs)} --input)")
    goal = {"target_top1": target_top1} if target_top1 is not None else {"target_drop": target_drop}
    with O.stdout_for_json(json_out):
        r = run(model, data, inputs[0], policy=policy, scan=scan_json, sizes=sizes, buckets=buckets, fps=fps,
                transform=transform, batch_size=batch_size, workers=workers, ray=ray_address,
                log=lambda s: err.print(f"experiment: {s}", markup=False), **goal).to_json()
    say = O.text_console(json_out)
    if json_out != "-":
        for line in lines(r):
            say.print(line, markup=False)
    if json_out:
        O.write_json(json_out, r, say)
