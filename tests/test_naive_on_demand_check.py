"""The on-demand naive build's check that kernel_<tag>.so is current (python/opkit/targets/cpu/builder.py): a
Ninja that cannot answer gets its own message naming the command and its output, not "the sources changed"
(review of iso9, M1). No build needed: Ninja is replaced by a command that fails."""
from __future__ import annotations

from pathlib import Path

import pytest

from opkit.errors import BuildError
from opkit.opspec import load_spec
from opkit.targets.cpu import builder

ROOT = Path(__file__).resolve().parents[1]


def test_a_failing_ninja_is_named_not_called_a_source_change(tmp_path, monkeypatch):
    (tmp_path / "_cmake").mkdir()
    (tmp_path / "_cmake" / "build.ninja").write_text("")
    monkeypatch.setattr(builder, "ninja_exe", lambda: "false")
    spec = load_spec(ROOT / "ops" / "layer_norm_fp32" / "op.yaml", bundled=True)
    with pytest.raises(BuildError) as e:
        builder.build_module(tmp_path, spec, "kernel_fp32_naive.so")
    msg = str(e.value)
    assert "checking that kernel_fp32.so is current failed" in msg and "`false -C" in msg and "exited 1" in msg
    assert "changed since the last" not in msg
