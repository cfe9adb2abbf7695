"""`opkit test --ttk FILE.csv` (python/opkit/cannproject/ttk.py, ttk_run.py): a CANN TTK kernel-mode CSV run against
an imported CANN op, judged by TTK's comparison methods. The op is examples/cann/opsmath (ScaleShift, written
here); the CSVs are written by the tests in TTK's column layout. ops-math's own CSVs run in the opt-in
test_cann_mirrors.py."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from opkit.cannproject import ttk
from opkit.errors import OpkitError

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "cann" / "opsmath"
HEADER = ("testcase_name,op_name,input_shapes,input_dtypes,input_formats,output_shapes,output_dtypes,output_formats,"
          "attributes,input_data_ranges,precision_tolerances,absolute_precision,is_enabled\n")


def _row(name, shape, dtype, attrs="{}", rng="((-1, 1),)", enabled=1, op="scale_shift", fmt="ND"):
    return (f'{name},{op},"({shape},)","(\'{dtype}\',)","(\'{fmt}\',)","({shape},)","(\'{dtype}\',)","(\'ND\',)",'
            f'"{attrs}","{rng}","((0.001, 0.001),)",0.001,{enabled}\n')


def _csv(tmp_path: Path, rows: str, name="ttk_kernel_scale_shift.csv") -> Path:
    p = tmp_path / name
    p.write_text(HEADER + rows)
    return p


def _opkit(args, cwd):
    return subprocess.run([sys.executable, "-m", "opkit", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=900, env=dict(os.environ, PYTHONUNBUFFERED="1"))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    ws = tmp_path_factory.mktemp("ttkws")
    r = _opkit(["import-cann", str(EXAMPLE), "--reference", "x * scale + shift", "--no-check"], ws)
    assert r.returncode == 0, r.stdout + r.stderr
    return ws


def test_ttk_csv_runs_against_the_imported_op(workspace, tmp_path):
    rows = (_row("fp32_aligned", "(8, 2048)", "float32", "{'scale': 2.0, 'shift': 0.5}", "((-3, 3),)")
            + _row("fp16_ragged", "(3, 77)", "float16", "{'scale': -1.5, 'shift': 1.0}")
            + _row("off", "(4,)", "float32", enabled=0))
    r = _opkit(["test", "--ttk", str(_csv(tmp_path, rows))], workspace)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "scale_shift: 2 cases, 2 passed, 0 failed, 1 disabled (is_enabled 0)" in r.stdout
    assert "stat_rel_err" in r.stdout


def test_ttk_csv_catches_a_wrong_golden(workspace, tmp_path):
    """The same op against a reference that differs by 1e-3 relative: TTK's fp32 stat_rel_err (T = 2^-13) fails it,
    isclose with the CSV's rtol 1e-3 is looser."""
    (workspace / "ops" / "scale_shift" / "reference.py").write_text(
        "def reference(x, scale=1.0, shift=0.0):\n    return (x * scale + shift) * 1.001\n")
    try:
        csv = _csv(tmp_path, _row("fp32", "(4, 64)", "float32", "{'scale': 1.0, 'shift': 3.0}", "((1, 2),)"))
        r = _opkit(["test", "--ttk", str(csv)], workspace)
        assert r.returncode == 1 and "1 failed" in r.stdout and "output 0 stat_rel_err" in r.stdout, r.stdout
        r = _opkit(["test", "--ttk", str(csv), "--ttk-compare", "isclose"], workspace)
        assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr
    finally:
        (workspace / "ops" / "scale_shift" / "reference.py").write_text(
            "def reference(x, scale=1.0, shift=0.0):\n    return x * scale + shift\n")


def test_ttk_csv_errors_name_the_place(workspace, tmp_path):
    arch35 = tmp_path / "tests" / "st" / "arch35"
    arch35.mkdir(parents=True)
    r = _opkit(["test", "--ttk", str(_csv(arch35, _row("a", "(4,)", "float32")))], workspace)
    assert r.returncode != 0 and "an arch35 CSV (Ascend 950 kernels)" in r.stdout + r.stderr
    r = _opkit(["test", "--ttk", str(_csv(tmp_path, _row("a", "(4,)", "float32", op="mvnv2"), "x.csv"))], workspace)
    assert r.returncode != 0 and "op_name mvnv2 names no CANN op of this workspace" in r.stdout + r.stderr
    with pytest.raises(OpkitError, match=r"x\.csv:2: column input_formats: \('NZ',\): only ND"):
        ttk.read_csv(_csv(tmp_path, _row("a", "(4,)", "float32", fmt="NZ"), "x.csv"))
    bad = tmp_path / "y.csv"
    bad.write_text(HEADER + 'a,scale_shift,"((4,),","(\'float32\',)",,,"(\'float32\',)",,{},,,,1\n')
    with pytest.raises(OpkitError, match=r"y\.csv:2: column input_shapes: not a Python literal"):
        ttk.read_csv(bad)
    (tmp_path / "z.csv").write_text("a,b\n1,2\n")
    with pytest.raises(OpkitError, match=r"z\.csv: not a TTK kernel-mode CSV: no column testcase_name"):
        ttk.read_csv(tmp_path / "z.csv")


def _case(**kw):
    base = dict(name="c", op_name="x", input_shapes=((4,),), input_dtypes=("float32",), output_shapes=None,
                output_dtypes=("float32",))
    base.update(kw)
    return ttk.Case(**base)


def test_ttk_comparisons_follow_ops_test_kit():
    g = torch.linspace(1, 2, 1000)
    case = _case()
    # stat_rel_err: MERE < T, MARE < 10 T (fp32 T = 2^-13)
    ok, m = ttk.compare(g * (1 + 2 ** -14), g, case, 0, "stat_rel_err")
    assert ok and m["threshold"] == 2 ** -13
    ok, _ = ttk.compare(g * (1 + 2 ** -12), g, case, 0, "stat_rel_err")
    assert not ok
    spike = g.clone()
    spike[0] *= 1 + 11 * 2 ** -13          # one element beyond MARE = 10 T
    assert not ttk.compare(spike, g, case, 0, "stat_rel_err")[0]
    nan = g.clone()
    nan[3] = float("nan")
    ok, m = ttk.compare(nan, g, case, 0, "stat_rel_err")
    assert not ok and "NaN/Inf mismatch" in m["reason"]
    assert ttk.compare(nan, nan, case, 0, "stat_rel_err")[0]
    # isclose: the share of failing elements against ptol
    loose = _case(precision_tolerances=((1e-3, 0.01),), absolute_precision=0.0)
    bad = g.clone()
    bad[:5] += 1.0                       # 0.5 % of the elements
    assert ttk.compare(bad, g, loose, 0, "isclose")[0]
    bad[:20] += 1.0                      # 2 %
    ok, m = ttk.compare(bad, g, loose, 0, "isclose")
    assert not ok and m["fail_share"] == pytest.approx(0.02)
    # integers and bool are binary_equal whatever is asked
    assert ttk.method_for(torch.int32, "isclose") == "binary_equal"
    ints = torch.arange(10, dtype=torch.int32)
    assert ttk.compare(ints, ints, case, 0, "binary_equal")[0]
    assert not ttk.compare(ints + 1, ints, case, 0, "binary_equal")[0]


def test_ttk_inputs_take_the_case_ranges():
    case = _case(input_shapes=((1000,), (50,)), input_dtypes=("float16", "int32"),
                 input_data_ranges=((2, 3), (-4, 4)))
    x, i = ttk.make_inputs(case, seed=0)
    assert x.dtype == torch.float16 and 2 <= x.min() and x.max() <= 3
    assert i.dtype == torch.int32 and -4 <= i.min() and i.max() <= 4
    assert torch.equal(ttk.make_inputs(case, seed=0)[0], x)


LIST_ROW = ('ls_{n},list_scale,"(((8, 64), (3, 77), (1, 5)),)","((\'{dt}\',),)","((\'ND\',),)",'
            '"(((8, 64), (3, 77), (1, 5)),)","((\'{dt}\',),)","((\'ND\',),)",'
            '"{{\'scales\': [2.0, -0.5, 3.0], \'bias\': 0.25}}","(((-2.0, 2.0),),)","(((0.001, 0.001),),)",0.001,1\n')


def test_ttk_tensor_list_csv(tmp_path):
    """A foreach-style TTK row: a DYNAMIC input as a tuple of shapes with the list's dtype / range / tolerance
    wrapped once, as ops-nn's foreach CSVs write them; run against tests/cann_projects/list_scale, judged per tensor."""
    from opkit.cannproject import layout
    from opkit.cannproject.op import CannOp
    p = _csv(tmp_path, LIST_ROW.format(n=0, dt="float32") + LIST_ROW.format(n=1, dt="float16"), "ttk_kernel_ls.csv")
    cases = ttk.read_csv(p)
    assert ttk.is_list(cases[0].input_shapes[0]) and cases[0].input_dtypes == ("float32",)
    assert cases[0].input_data_ranges == ((-2.0, 2.0),) and cases[0].precision_tolerances == ((0.001, 0.001),)
    per_tensor = LIST_ROW.format(n=2, dt="float16").replace("((\'float16\',),)", "((\'float16\', \'float16\', \'float16\'),)")
    assert ttk.read_csv(_csv(tmp_path, per_tensor, "ttk_kernel_ls2.csv"))[0].input_dtypes == ("float16",)
    with pytest.raises(OpkitError, match="mixed dtypes"):
        ttk.read_csv(_csv(tmp_path, per_tensor.replace("\'float16\'),)", "\'float32\'),)", 1), "ttk_kernel_ls3.csv"))
    xs = ttk.make_inputs(cases[1], 0)
    assert [tuple(t.shape) for t in xs[0]] == [(8, 64), (3, 77), (1, 5)] and xs[0][1].dtype == torch.float16
    assert all(float(t.abs().max()) <= 2.0 for t in xs[0]) and float(xs[0][0].abs().max()) > 1.0
    op = CannOp(layout.find(ROOT / "tests" / "cann_projects" / "list_scale"), "ListScale", tmp_path / "b")
    try:
        def ref(*xs, scales, bias):
            return [x * s + bias for x, s in zip(xs, scales)]
        for case in cases:
            r = ttk.run_case(op, ref, case, None)
            assert r["pass"] and [o["output"] for o in r["outputs"]] == ["0[0]", "0[1]", "0[2]"], r
        wrong = ttk.run_case(op, lambda *xs, scales, bias: [x * s for x, s in zip(xs, scales)], cases[0], None)
        assert not wrong["pass"] and all(not o["pass"] for o in wrong["outputs"])
        with pytest.raises(OpkitError, match="3 tensors flat"):
            ttk.run_case(op, lambda x_0, x_1, scales, bias: (x_0, x_1), cases[0], None)
    finally:
        op.close()
