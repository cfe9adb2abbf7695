"""Workspace discovery, bundled ops, shadowing, resources."""
from pathlib import Path

import pytest

from opkit.errors import OpkitError
from opkit.workspace import (MARKER, all_ops, bundled_ops_dir, cmake_dir, emulator_include_dir, find_workspace,
                             host_include_dir, require_workspace, share_dir, templates_dir, workspace_specs)

SPEC = """op: {name}
inputs:
  - {{name: x, dtypes: [float32], shape: [N]}}
outputs:
  - {{name: y, dtype: x, shape: x}}
tests:
  dims: {{N: [1, 8]}}
"""


def make_op(ws: Path, name: str, snake: str) -> Path:
    d = ws / "ops" / snake
    d.mkdir(parents=True)
    (d / "op.yaml").write_text(SPEC.format(name=name))
    return d


def test_resources_exist():
    from opkit import targets
    for name in targets.names():      # one top-level cmake/ module per target
        assert (cmake_dir() / f"opkit_{name if name != 'cpu' else 'emulator'}.cmake").is_file()
    assert (Path(targets.get("npu").__file__).parent / "templates" / "binding.cpp.j2").is_file()
    assert (templates_dir() / "families").is_dir()
    assert (host_include_dir() / "opkit" / "launch_abi.h").is_file()
    assert (emulator_include_dir() / "kernel_operator.h").is_file()
    assert bundled_ops_dir() == share_dir() / "ops"


def test_nearest_folder_with_ops_or_marker(tmp_path):
    outer = tmp_path / "outer"
    (outer / "ops").mkdir(parents=True)
    inner = outer / "a" / "b"
    inner.mkdir(parents=True)
    assert find_workspace(inner) == outer.resolve()
    (outer / "a" / MARKER).write_text("opkit_version: 0\n")
    assert find_workspace(inner) == (outer / "a").resolve()
    lone = tmp_path / "lone"
    lone.mkdir()
    assert find_workspace(lone) is None
    with pytest.raises(OpkitError, match="no opkit workspace here.*opkit new"):
        require_workspace(lone)


def test_workspace_op_shadows_bundled_and_bundled_stay_available(tmp_path):
    bundled = {p.name for p in bundled_ops_dir().iterdir() if (p / "op.yaml").is_file()}
    assert "layer_norm_fp32" in bundled
    make_op(tmp_path, "LayerNormFP32", "layer_norm_fp32")
    make_op(tmp_path, "MyOp", "my_op")
    ws, b, shadowed = all_ops(tmp_path)
    assert {e.snake for e in ws} == {"layer_norm_fp32", "my_op"}
    assert shadowed == {"layer_norm_fp32"}
    assert {e.snake for e in b} == bundled          # bundled list still complete; loader skips shadowed
    assert all(not e.bundled for e in ws)


def test_opkit_repo_as_workspace_is_the_bundled_ops_deduplicated():
    repo = share_dir()
    if not (repo / "pyproject.toml").is_file():
        pytest.skip("installed layout: no repository checkout to use as a workspace")
    ws, b, shadowed = all_ops(repo)
    assert b == [] and shadowed == set()
    assert ws and all(e.bundled for e in ws)


def test_workspace_specs_by_name_and_errors(tmp_path):
    make_op(tmp_path, "MyOp", "my_op")
    assert [s.snake for s in workspace_specs(tmp_path, ["MyOp"])] == ["my_op"]
    assert [s.snake for s in workspace_specs(tmp_path, ["my_op"])] == ["my_op"]
    with pytest.raises(OpkitError, match="bundled op.*opkit new LayerNormFP32"):
        workspace_specs(tmp_path, ["layer_norm_fp32"])
    with pytest.raises(OpkitError, match="no op 'nope'"):
        workspace_specs(tmp_path, ["nope"])
    dup = make_op(tmp_path, "MyOp", "my_op_copy")
    with pytest.raises(OpkitError, match="also defined in"):
        workspace_specs(tmp_path)
    dup.joinpath("op.yaml").write_text("op: Broken\n")
    with pytest.raises(OpkitError, match=r"op.yaml:1: inputs: missing required field"):
        workspace_specs(tmp_path)
