"""The `opkit` click group, its consoles and the entry point: an OpkitError is a message on stderr and
exit 1, never a traceback. Every subcommand module of this package registers on `cli`."""
from __future__ import annotations

import sys

import click

from ..errors import OpkitError
from ..toolchain.version import __version__
from .console import err, out  # noqa: F401 - the consoles of every command module
from .options import Group


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: OpkitError -> message on stderr, exit 1."""
    try:
        cli.main(args=argv, prog_name="opkit", standalone_mode=False)
    except OpkitError as e:
        err.print(f"opkit: error: {e}", markup=False, soft_wrap=True)
        sys.exit(1)
    except click.exceptions.Abort:
        err.print("opkit: aborted")
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)


# options.Group: every subcommand is an options.Command (deprecated option spellings, docs/cli.md "Options").
@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="opkit")
def cli() -> None:
    """opkit: scaffold, build, test and load AscendC custom operators (CPU emulator by default)."""
