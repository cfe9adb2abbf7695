"""`opkit import-cann`: a CANN custom-op project into this workspace (docs/cann.md)."""
from __future__ import annotations

import sys

import click

from . import options as O
from .app import cli, out


@cli.command("import-cann")
@click.argument("project", type=click.Path(exists=True, file_okay=False))
@O.op_type
@O.reference
@O.no_check
@O.opbase
def import_cann(project, op_type, reference, no_check, opbase) -> None:
    """Take the CANN custom-op project PROJECT (op_host/ + op_kernel/) into an op folder of this workspace."""
    from ..errors import OpkitError
    from ..opspec import load_spec
    from ..workspace import find_workspace
    from ..cannproject import build, importer
    from pathlib import Path

    got = importer.import_cann(project, op_type=op_type, reference=reference, opbase=opbase)
    out.print(f"imported {got.op_type} ({got.layout} layout) into {got.op_dir}", markup=False)
    out.print("  copied op_host/ and op_kernel/ unchanged; wrote op.yaml, reference.py", markup=False)
    for n in got.notes:
        out.print(f"  note: {n}", markup=False)
    if no_check:
        return
    spec = load_spec(got.op_dir / "op.yaml")
    ws = find_workspace(got.op_dir) or Path.cwd()
    try:
        checked = build.check(spec, ws / "build" / "opkit" / "cpu")
    except OpkitError as e:
        raise OpkitError(f"imported, but the op does not run on the emulator:\n{e}") from None
    out.print(f"  runs on the emulator ({', '.join(checked)}): its TilingFunc on the CPU, its kernel compiled "
              "unchanged; next: opkit build && opkit test", markup=False)


@cli.command("run-asc", context_settings={"ignore_unknown_options": True})
@click.argument("file", type=click.Path(dir_okay=False))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.option("--cwd", type=click.Path(file_okay=False), default=None,
              help="folder to run the program in (default: the file's folder; CANN's samples run in build/)")
@click.option("-D", "--define", "defines", multiple=True, metavar="NAME[=VALUE]",
              help="a compile definition, as a sample's CMakeLists.txt adds one (-D SCENARIO_NUM=1); repeatable")
def run_asc(file, args, cwd, defines) -> None:
    """Compile the CANN .asc program FILE (host main + kernel + <<<>>> launch) unchanged on the emulator and run
    it; ARGS after -- go to the program. Exit status: the program's (a rule violation: 1)."""
    from pathlib import Path
    from ..cannproject import asc_program

    rc = asc_program.run(Path(file), list(args), cwd=Path(cwd) if cwd else None, defines=list(defines))
    sys.exit(rc)
