"""The TBE language's command: `opkit import-tbe` (docs/tbe.md). `opkit test --compare-langs` is in ops.py."""
from __future__ import annotations

import click

from .app import cli


@cli.command("import-tbe")
@click.argument("impl", type=click.Path(exists=True, dir_okay=False))
@click.option("--ini", type=click.Path(exists=True, dir_okay=False), default=None,
              help="op-info: the op's .ini (tbe/op_info_cfg/ai_core/<soc>/) or an aic-<soc>-ops-info.json")
@click.option("--proto", type=click.Path(exists=True, dir_okay=False), default=None,
              help="the REG_OP prototype header (op_proto/<op>.h)")
@click.option("--op", "op_type", default=None, help="the OpType, when the op-info holds several")
@click.option("--reference", default=None,
              help="golden: a torch function (torch.exp) or an expression over the inputs and attrs "
                   "(\"F.leaky_relu(x, negative_slope)\"); default: a reference.py to fill in")
@click.option("--soc", default="Ascend910B", show_default=True,
              help="SoC whose DSL dtype table applies (Ascend310, Ascend910, Ascend910B, Ascend310P)")
@click.option("--spec-from", type=click.Path(exists=True, dir_okay=False), default=None,
              help="take shapes, tests and accuracy from this op.yaml (e.g. the AscendC op it migrates to)")
@click.option("--no-check", is_flag=True, help="only write the op folder; skip running the kernel once")
def import_tbe(impl, ini, proto, op_type, reference, soc, spec_from, no_check) -> None:
    """Wrap the TBE implementation IMPL (a CANN tbe/impl/<op>.py) into an op folder of this workspace."""
    from ..errors import OpkitError
    from ..opspec import load_spec
    from ..tbe import build, importer
    from ..tbe.platform import normalize_soc

    got = importer.import_tbe(impl, ini=ini, proto=proto, op_type=op_type, reference=reference,
                              soc=normalize_soc(soc), spec_from=spec_from)
    click.echo(f"imported {got.op_type} (op function {got.function}) into {got.op_dir}")
    for n in got.notes:
        click.echo(f"  note: {n}")
    click.echo("  wrote kernel.py (unchanged copy), op.yaml, reference.py, " + got.op_dir.name + ".ini")
    if no_check:
        return
    spec = load_spec(got.op_dir / "op.yaml")
    try:
        checked = build.check(spec)
    except OpkitError as e:
        raise OpkitError(f"imported, but the kernel does not run on opkit's TBE emulation:\n{e}") from None
    click.echo(f"  runs on the emulation ({', '.join(checked)}, SoC {soc}); next: opkit build && opkit test")
