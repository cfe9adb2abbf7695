"""The whole bundled library in CI: every bundled op on its quick matrix (every dtype, special values
included, opcheck per op), exactly as a user runs it: `opkit test --bundled --quick`. A change to a
template, the emulator or an op that breaks any bundled case fails here. It tests the build that
`opkit.load()` makes (the bundled_ops fixture), so CI compiles the library once."""
from __future__ import annotations

import json
import subprocess
import sys

from opkit.opspec import DTYPES
from opkit.workspace import bundled_entries


def test_every_bundled_op_passes_its_quick_matrix(bundled_ops, tmp_path):
    report = tmp_path / "quick.json"
    r = subprocess.run([sys.executable, "-m", "opkit", "test", "--bundled", "--quick", "--json", str(report)],
                       cwd=tmp_path, capture_output=True, text=True, timeout=3600)
    summary = "\n".join(ln for ln in r.stdout.splitlines() if not ln.startswith("opkit test ━"))
    data = json.loads(report.read_text())
    ops = {e.snake: e.spec for e in bundled_entries() if e.spec}
    cases = data["cases"]
    assert {c["op"] for c in cases} == set(ops)
    for op, spec in ops.items():         # every dtype of every op, special values in each
        mine = [c for c in cases if c["op"] == op]
        for dt in spec.dtypes:
            if dt in ("float16", "bfloat16", "float32"):
                assert any(c["dtype"] == dt and c["distribution"] == "special" for c in mine), (op, dt)
            assert any(c["dtype"] == dt for c in mine), (op, DTYPES[dt][2])
    assert {c["op"] for c in data["opcheck"]} == set(ops)
    assert r.returncode == 0, summary[-8000:] + r.stderr[-3000:]
    assert data["summary"]["failed"] == 0 and data["summary"]["opcheck_failed"] == 0
