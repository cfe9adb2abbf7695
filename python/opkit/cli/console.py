"""The one pair of consoles every `opkit` command prints through: ``out`` (stdout) and ``err`` (stderr)."""
from __future__ import annotations

from rich.console import Console

# soft_wrap: paths and op names must stay whole on one line when the output is not a terminal (80 columns).
# emoji off: rich would turn a compiler's `file.cpp:100:13` into `file.cpp💯13`.
out = Console(highlight=False, soft_wrap=True, emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
