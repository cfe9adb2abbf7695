"""The one pair of consoles every `opkit` command prints through: ``out`` (stdout) and ``err`` (stderr)."""
from __future__ import annotations

from rich.console import Console

# soft_wrap: paths and op names must stay whole on one line when the output is not a terminal (80 columns).
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)
