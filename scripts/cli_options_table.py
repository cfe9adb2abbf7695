"""Rewrite the option table of docs/cli.md (between <!-- options:begin --> and <!-- options:end -->) from the
`opkit` command tree; tests/test_cli_options.py fails when the two differ."""
import re
from pathlib import Path

from opkit.cli import cli
from opkit.cli.options import options_markdown

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
text = DOC.read_text()
new, n = re.subn(r"(<!-- options:begin -->\n).*?(<!-- options:end -->)",
                 lambda m: m.group(1) + options_markdown(cli) + m.group(2), text, flags=re.S)
if n != 1:
    raise SystemExit(f"{DOC}: expected one <!-- options:begin --> ... <!-- options:end --> block, found {n}")
DOC.write_text(new)
print(f"{DOC}: option table rewritten")
