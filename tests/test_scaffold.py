"""`opkit new`: scaffold from a bundled op or a family; never clobber without --force; --force keeps *.orig."""
import hashlib
from pathlib import Path

import pytest
import yaml

from opkit.errors import OpkitError
from opkit.scaffold import ANSWERS, families, new
from opkit.opspec import load_spec
from opkit.workspace import MARKER, bundled_ops_dir, find_workspace


def tree_digest(root: Path) -> dict:
    return {str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_new_in_empty_folder_copies_the_bundled_op_and_marks_the_workspace(tmp_path):
    s = new("LayerNormFP32", cwd=tmp_path)
    op = tmp_path / "ops" / "layer_norm_fp32"
    assert s.op_dir == op and s.new_workspace and (tmp_path / MARKER).is_file()
    assert find_workspace(tmp_path) == tmp_path.resolve()
    for f in ("op.yaml", "kernel.cpp", "tiling.h", "reference.py"):
        assert (op / f).read_bytes() == (bundled_ops_dir() / "layer_norm_fp32" / f).read_bytes()
    answers = yaml.safe_load((op / ANSWERS).read_text())
    assert answers["source"] == "bundled:layer_norm_fp32" and answers["name"] == "LayerNormFP32"
    assert load_spec(op).name == "LayerNormFP32"


def test_second_new_refuses_and_changes_nothing(tmp_path):
    new("LayerNormFP32", cwd=tmp_path)
    before = tree_digest(tmp_path)
    with pytest.raises(OpkitError, match="already exists; nothing changed.*--force"):
        new("LayerNormFP32", cwd=tmp_path)
    assert tree_digest(tmp_path) == before


def test_force_keeps_edited_scaffold_files_as_orig_and_leaves_other_files(tmp_path):
    new("LayerNormFP32", cwd=tmp_path)
    op = tmp_path / "ops" / "layer_norm_fp32"
    (op / "kernel.cpp").write_text("// my edits\n")
    (op / "notes.txt").write_text("mine")
    s = new("LayerNormFP32", force=True, cwd=tmp_path)
    assert (op / "kernel.cpp.orig").read_text() == "// my edits\n"
    assert (op / "kernel.cpp").read_bytes() == (bundled_ops_dir() / "layer_norm_fp32" / "kernel.cpp").read_bytes()
    assert (op / "notes.txt").read_text() == "mine"
    assert s.kept == [op / "kernel.cpp.orig"] and s.written == [op / "kernel.cpp"]
    assert not (op / "tiling.h.orig").exists()       # unchanged files are not rewritten


def test_new_from_a_family_renders_a_valid_op(tmp_path):
    s = new("MyNorm", cwd=tmp_path)                  # default family: norm
    spec = load_spec(s.op_dir)
    assert (spec.name, spec.snake, spec.family) == ("MyNorm", "my_norm", "norm")
    assert "MyNormTilingData" in (s.op_dir / "tiling.h").read_text()
    assert "my_norm" in (s.op_dir / "kernel.cpp").read_text()
    fams = families()
    for fam in fams:
        name = "Fam" + fam.capitalize() + "Op"
        t = new(name, family=fam, cwd=tmp_path)
        assert load_spec(t.op_dir).name == name


def test_bad_names_unknown_family_and_clashes(tmp_path):
    with pytest.raises(OpkitError, match="lower-case"):
        new("layerNorm", cwd=tmp_path)
    with pytest.raises(OpkitError, match="keyword"):
        new("Class", cwd=tmp_path)
    with pytest.raises(OpkitError, match="unknown family 'nope'"):
        new("Foo", family="nope", cwd=tmp_path)
    assert not (tmp_path / "ops").exists() and not (tmp_path / MARKER).exists()   # refused: nothing written
    s = new("Foo", cwd=tmp_path)
    other = tmp_path / "ops" / "renamed"
    s.op_dir.rename(other)
    with pytest.raises(OpkitError, match="already exists in this workspace at"):
        new("Foo", cwd=tmp_path)


def test_data_answers_select_a_variant_and_are_recorded(tmp_path):
    s = new("MyRms", family="norm", data={"norm": "rms"}, cwd=tmp_path)
    spec = load_spec(s.op_dir)
    assert [i.name for i in spec.inputs] == ["x", "weight"]                    # RMSNorm: no bias
    rec = yaml.safe_load((s.op_dir / ANSWERS).read_text())
    assert (rec["family"], rec["data"]) == ("norm", {"norm": "rms", "backward": False})
    # --answers replays them under another name: the same files, names aside
    t = new("Again", answers=s.op_dir / ANSWERS, cwd=tmp_path)
    for f in ("kernel.cpp", "tiling.h", "op.yaml", "reference.py"):
        a = (s.op_dir / f).read_text().replace("MyRms", "N").replace("my_rms", "n")
        assert a == (t.op_dir / f).read_text().replace("Again", "N").replace("again", "n")


def test_from_a_bundled_op_renames_it(tmp_path):
    s = new("ArgMax", from_op="reduce_max_fp32", cwd=tmp_path)
    assert s.source == "from:reduce_max_fp32"
    spec = load_spec(s.op_dir)
    assert (spec.name, spec.family, [o.name for o in spec.outputs]) == ("ArgMax", "reduce", ["values", "indices"])
    kernel = (s.op_dir / "kernel.cpp").read_text()
    assert "arg_max" in kernel and "reduce_max_fp32" not in kernel
    with pytest.raises(OpkitError, match="--from nope: no bundled op of that name; bundled ops: .*reduce_max_fp32"):
        new("Other", from_op="nope", cwd=tmp_path)


@pytest.mark.parametrize("kw, message", [
    ({"family": "norm", "data": {"norm": "batch"}}, r"data norm='batch' is not one of \['layer', 'rms'\]"),
    ({"family": "norm", "data": {"nrom": "rms"}}, "unknown data key.*nrom; expected some of: norm, backward"),
    ({"family": "elementwise", "data": {"backward": True}},
     "written for these answers only: .*got activation=swish, backward=true"),
])
def test_bad_answers_name_the_key_and_write_nothing(tmp_path, kw, message):
    with pytest.raises(OpkitError, match=message):
        new("Foo", cwd=tmp_path, **kw)
    assert not (tmp_path / "ops").exists()


def test_parse_data_reads_yaml_scalars():
    from opkit.families import parse_data
    assert parse_data(["norm=rms", "backward=true"]) == {"norm": "rms", "backward": True}
    with pytest.raises(OpkitError, match="expected KEY=VALUE"):
        parse_data(["norm"])
