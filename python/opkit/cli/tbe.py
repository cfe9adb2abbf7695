"""The TBE language's command: `opkit import-tbe` (docs/tbe.md). `opkit test --compare-langs` is in ops.py."""
from __future__ import annotations

import click

from . import options as O
from .app import cli, out


@cli.command("import-tbe")
@click.argument("impl", type=click.Path(exists=True, dir_okay=False))
@click.option("--ini", type=click.Path(exists=True, dir_okay=False), default=None,
              help="op-info: the op's .ini (tbe/op_info_cfg/ai_core/<soc>/) or an aic-<soc>-ops-info.json")
@click.option("--proto", type=click.Path(exists=True, dir_okay=False), default=None,
              help="the REG_OP prototype header (op_proto/<op>.h)")
@O.op_type
@O.reference
@O.soc
@click.option("--spec-from", type=click.Path(exists=True, dir_okay=False), default=None,
              help="take shapes, tests and accuracy from this op.yaml (e.g. the AscendC op it migrates to)")
@O.no_check
def import_tbe(impl, ini, proto, op_type, reference, soc, spec_from, no_check) -> None:
    """Wrap the TBE implementation IMPL (a CANN tbe/impl/<op>.py) into an op folder of this workspace."""
    from ..errors import OpkitError
    from ..opspec import load_spec
    from ..tbe import build, importer
    from ..tbe.platform import normalize_soc

    # the DSL dtype table of this SoC's family; no NPU is asked here (the shared --soc default, Ascend910B3)
    soc = soc or "Ascend910B3"

    got = importer.import_tbe(impl, ini=ini, proto=proto, op_type=op_type, reference=reference,
                              soc=normalize_soc(soc), spec_from=spec_from)
    out.print(f"imported {got.op_type} (op function {got.function}) into {got.op_dir}", markup=False)
    for n in got.notes:
        out.print(f"  note: {n}", markup=False)
    out.print("  wrote kernel.py (unchanged copy), op.yaml, reference.py, " + got.op_dir.name + ".ini", markup=False)
    if no_check:
        return
    spec = load_spec(got.op_dir / "op.yaml")
    try:
        checked = build.check(spec)
    except OpkitError as e:
        raise OpkitError(f"imported, but the kernel does not run on opkit's TBE emulation:\n{e}") from None
    out.print(f"  runs on the emulation ({', '.join(checked)}, SoC {soc}); next: opkit build && opkit test", markup=False)
