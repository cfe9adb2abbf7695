"""Planted TBE bugs are caught: by the harness (numerics) or by the build (what CANN's op build rejects).
The op under test is the `opkit new --lang tbe` norm / elementwise scaffold with one line changed."""
from __future__ import annotations

import pytest

from opkit.errors import BuildError
from opkit.harness.cases import build_matrix
from opkit.harness.execute import OpHandle, run_case
from opkit.harness.golden import load_reference
from opkit.scaffold import new
from opkit.opspec import load_spec
from opkit.tbe import build, runner


def scaffold(tmp_path, name, family, edit=None, soc=None):
    s = new(name, family=family, cwd=tmp_path, lang="tbe")
    k = s.op_dir / "kernel.py"
    if edit:
        old, repl = edit
        text = k.read_text()
        assert old in text, old
        k.write_text(text.replace(old, repl))
    if soc:
        y = s.op_dir / "op.yaml"
        y.write_text(y.read_text().replace("soc: Ascend910B", f"soc: {soc}"))
    return load_spec(s.op_dir / "op.yaml")


def verdicts(spec, dtype=None, naive=False):
    """Quick matrix through the harness's run_case, the TBE op called directly (no registration)."""
    op, ref = runner.TbeOp(spec), load_reference(spec.reference_file)
    names = [a.name for a in spec.attrs]

    def fn(*inputs, **attrs):
        return op(list(inputs), {n: attrs[n] for n in names if n in attrs}, naive=naive)[0]
    cases = [c for c in build_matrix(spec, "quick") if (dtype is None or c.dtype == dtype)
             and _numel(c.lead_shape) <= 70_000]          # small cases keep the suite fast
    return [run_case(spec, c, OpHandle(fn=fn), ref) for c in cases]


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def test_the_scaffold_passes_and_its_naive_fp16_variant_fails(tmp_path):
    spec = scaffold(tmp_path, "LnTbe", "norm")
    assert all(r["verdict"] == "pass" for r in verdicts(spec)), "the FP32-compute scaffold must pass"
    naive = verdicts(spec, "float16", naive=True)
    assert any(r["verdict"] == "fail" for r in naive)


def test_missing_cast_to_means_fp16_accumulation_and_fails(tmp_path):
    spec = scaffold(tmp_path, "LnNoCast", "norm",
                    ('if dtype != "float32" and api_check_support', 'if False and api_check_support'))
    build.check(spec)                                  # builds fine: the bug is numerical
    fp16 = verdicts(spec, "float16")
    assert any(r["verdict"] == "fail" for r in fp16)
    assert all(r["verdict"] == "pass" for r in verdicts(spec, "float32"))


def test_wrong_reduce_axis_fails(tmp_path):
    spec = scaffold(tmp_path, "LnAxis", "norm", ("tbe.vmuls(x, inv_c), axis=-1", "tbe.vmuls(x, inv_c), axis=0"))
    failed = [r for r in verdicts(spec, "float32") if r["verdict"] == "fail"]
    assert failed and failed[0]["reason"].startswith(("MERE", "MARE"))     # wrong numbers, not a crash


def test_broadcast_of_the_wrong_shape_fails_at_build(tmp_path):
    spec = scaffold(tmp_path, "LnBcast", "norm",
                    ("tbe.broadcast(weight, shape)", "tbe.broadcast(weight, shape[::-1])"))
    with pytest.raises(BuildError, match=r"cannot broadcast shape \[16\] to \[16, 2\]"):
        build.check(spec)


def test_dtype_the_chip_lacks_fails_at_build(tmp_path):
    # Swish computes exp in fp32 after asking api_check_support; without the check, on Ascend310 (no fp32
    # vexp) tbe.dsl raises E90003 at build, like the device's build (te.lang.cce would auto-cast to fp16).
    spec = scaffold(tmp_path, "SwishOn310", "elementwise",
                    ('if dtype == "float16" and tbe_platform', 'if dtype == "float16" or tbe_platform'),
                    soc="Ascend310")
    k = spec.dir / "kernel.py"
    k.write_text(k.read_text().replace("import te.lang.cce\n", "import tbe.dsl\n")
                 .replace("te.lang.cce.cce_build_code", "tbe.dsl.build").replace("te.lang.cce.", "tbe.dsl."))
    with pytest.raises(BuildError, match="E90003: tbe.dsl.vexp is not supported float32 on Ascend310"):
        build.check(spec)
    # unchanged (te.lang.cce spelling, the check in place) the scaffold builds on 310
    ok = scaffold(tmp_path, "SwishOk310", "elementwise", soc="Ascend310")
    assert build.check(ok) == {"float16": "ok", "float32": "ok"}


@pytest.mark.parametrize("family", ["norm", "elementwise", "softmax", "reduce"])
def test_every_tbe_family_scaffold_builds(tmp_path, family):
    spec = scaffold(tmp_path, f"Fam{family.title()}Tbe", family)
    assert spec.lang == "tbe" and build.check(spec) == {"float16": "ok", "float32": "ok"}
