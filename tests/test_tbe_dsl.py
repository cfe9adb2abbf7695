"""The TBE DSL emulation (python/opkit/tbe): per-node rounding, strict shapes, the SoC dtype table,
te.lang.cce auto-cast, estimates + Newton steps, fp16 reductions, conversions, shims kept local."""
from __future__ import annotations

import contextlib
import sys

import pytest
import torch

from opkit.tbe import dsl, legacy, shims
from opkit.tbe import tvm as T
from opkit.tbe.graph import TbeError, evaluate, state


@contextlib.contextmanager
def soc(name):
    old = state.soc
    state.soc = name
    try:
        yield
    finally:
        state.soc = old


def run(out, **feeds):
    return evaluate([out], {ph: v for ph, v in feeds.values()})[0]


def test_every_node_is_rounded_to_its_dtype():
    x = T.placeholder((3,), "float16", "x")
    y = dsl.vadds(dsl.vadds(x, 1.0), -1.0)            # 2048 + 1 rounds to 2048 in fp16, then -1
    got = evaluate([y], {x: torch.tensor([2048.0, 1.0, 0.5], dtype=torch.float16)})[0]
    assert got.dtype == torch.float16
    assert got.tolist() == [2047.0, 1.0, 0.5]


def test_no_implicit_broadcast_and_broadcast_rules():
    a, b = T.placeholder((4, 8), "float32", "a"), T.placeholder((8,), "float32", "b")
    with pytest.raises(TbeError, match="no implicit broadcast"):
        dsl.vadd(a, b)
    with pytest.raises(TbeError, match="dtypes differ"):
        dsl.vadd(a, T.placeholder((4, 8), "float16", "c"))
    with pytest.raises(TbeError, match="cannot broadcast"):
        dsl.broadcast(T.placeholder((4,), "float32", "d"), (4, 8))
    out = dsl.vadd(a, dsl.broadcast(b, (4, 8)))
    av, bv = torch.randn(4, 8), torch.randn(8)
    assert torch.equal(evaluate([out], {a: av, b: bv})[0], av + bv)
    assert dsl.broadcast(0.1, (2,)).dtype == "float16"     # a Python float broadcasts as fp16
    assert dsl.broadcast(3, (2,)).dtype == "int32"


def test_soc_dtype_table_rejects_like_the_device():
    x = T.placeholder((8,), "float32", "x")
    with soc("Ascend310"):
        with pytest.raises(TbeError, match="E90003: tbe.dsl.vexp is not supported float32 on Ascend310"):
            dsl.vexp(x)
        # te.lang.cce auto-casts instead (to fp16 on 310) and returns the new dtype
        assert legacy.names()["vexp"](x).dtype == "float16"
    with soc("Ascend910B"):
        assert dsl.vexp(x).dtype == "float32"
        with pytest.raises(TbeError, match="vrelu is not supported float32"):
            dsl.vrelu(x)
    from opkit.tbe.platform import api_check_support
    with soc("Ascend310"):
        assert not api_check_support("tbe.dsl.vexp", "float32")
        assert api_check_support("te.lang.cce.sum", "float32")


@pytest.mark.parametrize("dtype,bound", [("float16", 2.0 ** -10), ("float32", 2.0 ** -13)])
def test_vrec_estimate_and_newton_steps(dtype, bound):
    x = T.placeholder((1000,), dtype, "x")
    v = (torch.rand(1000, dtype=torch.float64) * 100 + 0.01).to(getattr(torch, dtype))
    exact = 1.0 / v.double()
    est = evaluate([dsl.vrec(x)], {x: v})[0].double()
    rel = ((est - exact) / exact).abs()
    assert 0 < rel.max() < bound                      # an estimate, within the documented error
    hp = evaluate([dsl.vrec(x, "high_precision")], {x: v})[0].double()
    assert ((hp - exact) / exact).abs().max() < rel.max()
    assert legacy.names()["vrec"](x).api != "tbe.dsl.vrec"   # te.lang.cce.vrec: Newton steps by default


def test_fp16_sum_accumulates_in_fp16():
    x = T.placeholder((1, 4096), "float16", "x")
    v = torch.full((1, 4096), 1.0 / 3, dtype=torch.float16) + torch.rand(1, 4096, dtype=torch.float16) * 0.01
    half = evaluate([dsl.reduce_sum(x, axis=-1)], {x: v})[0]
    wide = evaluate([dsl.reduce_sum(dsl.cast_to(x, "float32"), axis=-1)], {x: v})[0]
    assert half.dtype == torch.float16 and wide.dtype == torch.float32
    exact = v.double().sum()
    assert abs(wide.double().item() - exact) < abs(half.double().item() - exact)
    with pytest.raises(TbeError, match="axis 2 is out of range"):
        dsl.reduce_sum(x, axis=2)


def test_conversions_and_rounding():
    x = T.placeholder((6,), "float32", "x")
    v = torch.tensor([1.5, 2.5, -1.5, -2.7, 2.7, 70000.0])
    assert evaluate([dsl.cast_to(x, "int32")], {x: v})[0].tolist() == [1, 2, -1, -2, 2, 70000]   # truncation
    assert evaluate([dsl.round(x)], {x: v})[0].tolist() == [2, 2, -2, -3, 3, 70000]              # half to even
    assert evaluate([dsl.round_half_up(x)], {x: v})[0].tolist() == [2, 3, -2, -3, 3, 70000]
    with soc("Ascend910B"):
        assert evaluate([dsl.cast_to(x, "float16")], {x: v})[0][-1].item() == float("inf")
    with soc("Ascend910"):
        assert evaluate([dsl.cast_to(x, "float16")], {x: v})[0][-1].item() == 65504.0


def test_compare_and_select():
    a, b = T.placeholder((4,), "float32", "a"), T.placeholder((4,), "float32", "b")
    out = dsl.vsel(dsl.vcmp(a, b, "gt"), a, 0.0)
    av, bv = torch.tensor([1.0, -1.0, 3.0, 0.0]), torch.zeros(4)
    assert evaluate([out], {a: av, b: bv})[0].tolist() == [1.0, 0.0, 3.0, 0.0]
    with pytest.raises(TbeError, match="multiple of 8"):
        dsl.vcmp(a, b, "lt", mode="bit")


def test_shims_exist_only_while_opkit_runs_a_tbe_op():
    assert "tbe.dsl" not in sys.modules and "te.lang.cce" not in sys.modules
    with shims.installed():
        import te.lang.cce  # noqa: F401
        import tbe.dsl as tbe
        assert tbe.vadd is dsl.vadd
    assert "tbe.dsl" not in sys.modules and "te.lang.cce" not in sys.modules


def test_unsupported_apis_fail_at_import_with_file_and_line(tmp_path):
    from opkit.errors import OpkitError
    from opkit.tbe.runner import load_module

    f = tmp_path / "k.py"
    f.write_text("import tbe.dsl as tbe\nfrom te import tik\n\n\ndef k(x):\n    return tbe.vfancy(x)\n")
    with pytest.raises(OpkitError) as e:
        load_module(f)
    assert f"{f}:2: `from te import tik`: TIK kernels are not emulated" in str(e.value)
    assert f"{f}:6: `tbe.dsl.vfancy`" in str(e.value)


DYNAMIC = '''
from impl.util.platform_adapter import tbe, tvm, para_check, shape_util, register_operator, classify
from impl.util.platform_adapter import OpPatternMode, tbe_platform


def exp_compute(x, y, kernel_name="exp_dyn"):
    dtype = x.dtype
    if dtype == "float16" and tbe_platform.api_check_support("tbe.dsl.vexp", "float32"):
        x = tbe.cast_to(x, "float32")
    res = tbe.vexp(x)
    return tbe.cast_to(res, dtype) if res.dtype != dtype else res


@register_operator("ExpDyn")
@para_check.check_op_params(para_check.REQUIRED_INPUT, para_check.REQUIRED_OUTPUT, para_check.KERNEL_NAME)
def exp_dyn(x, y, kernel_name="exp_dyn"):
    schedules, tensors = [], []
    for (_x,) in classify([x], OpPatternMode.ELEWISE):
        with tbe.compute():
            shape = shape_util.variable_shape([_x])[0]
            data = tvm.placeholder(shape, name="data", dtype=x.get("dtype"))
            res = exp_compute(data, y, kernel_name)
            tensors.append([data, res])
        with tvm.target.cce():
            schedules.append(tbe.auto_schedule(res))
    tbe.build(schedules, {"name": kernel_name, "tensor_list": tensors})
'''


def test_dynamic_style_op_runs(tmp_path):
    from opkit.tbe.graph import state as st
    from opkit.tbe.runner import load_module

    f = tmp_path / "exp_dyn.py"
    f.write_text(DYNAMIC)
    mod = load_module(f)
    st.trace = []
    try:
        with shims.installed():
            mod.exp_dyn({"shape": [2, 5], "dtype": "float16"}, {"shape": [2, 5], "dtype": "float16"})
        _, tensors = st.trace[-1]
    finally:
        st.trace = None
    x = torch.randn(2, 5).half()
    got = evaluate([tensors[1]], {tensors[0]: x})[0]
    assert got.dtype == torch.float16
    assert torch.equal(got, x.float().exp().half())     # fp32 exp, one rounding to fp16
