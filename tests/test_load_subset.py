"""opkit.load(ops=[...]) and opkit.patch build only the ops asked for (issue 14, first use): the
selection logic, with the build itself replaced by a recorder (a real build is minutes of CPU)."""
from __future__ import annotations

import contextlib

import pytest
import torch.nn as nn

import opkit
from opkit import loader, patching
from opkit.errors import OpkitError


@pytest.fixture
def asked(monkeypatch, tmp_path):
    """The bundled ops load() would build, outside any workspace; nothing is built or registered."""
    got: list[str] = []

    def fake(specs, quiet=False):
        got.extend(s.snake for s in specs)
        return [(s, tmp_path / f"lib{s.snake}.so") for s in specs]
    monkeypatch.setattr(loader, "ensure_bundled_built", fake)
    monkeypatch.setattr(loader, "register", lambda spec, lib: None)
    monkeypatch.setattr(loader, "_after_load", lambda ws, specs: None)
    with contextlib.chdir(tmp_path):
        yield got


def test_load_ops_builds_only_the_named_bundled_ops(asked):
    opkit.load(ops=["reduce_sum_fp32"], quiet=True)
    assert asked == [] or asked == ["reduce_sum_fp32"]      # [] when this process registered it already


def test_load_ops_brings_the_backward_op(asked):
    opkit.load(ops=["LayerNormFP32"], quiet=True)
    already = set(loader.loaded())
    assert set(asked) | already >= {"layer_norm_fp32", "layer_norm_fp32_backward"}
    assert "softmax_fp32" not in asked and "gelu_fp32" not in asked


def test_load_ops_unknown_name_is_an_error(asked):
    with pytest.raises(OpkitError, match=r"no op no_such_op in workspace None or among the bundled ops"):
        opkit.load(ops=["no_such_op"], quiet=True)


def test_patch_loads_only_what_the_model_needs(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(loader, "load", lambda path=None, **kw: calls.append(kw.get("ops")) or {})
    model = nn.Sequential(nn.Linear(4, 4), nn.GELU())
    with contextlib.chdir(tmp_path):
        report = opkit.patch(model, dry_run=True)
    if "gelu_fp32" in loader.loaded():        # registered earlier in this process: nothing to load
        assert calls == []
    else:
        assert calls == [["gelu_fp32"]]       # one op, not the whole bundled library
        assert any("gelu_fp32" in why for _, _, why in report.not_swapped)
    assert patching.Ops("opkit").namespace == "opkit"
