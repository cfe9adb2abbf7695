"""`opkit.load()` and the registration surface (opkit.registration): registration, idempotence, missing builds, checks, casts,
dim moves, Meta/torch.compile, autocast, opcheck, emulator violations, the last launch's counters.

Uses the ScaleMul/RowSum workspace that tests/test_build.py builds once per session."""
from __future__ import annotations

import tempfile

import pytest
import torch

import opkit
from opkit import loader, registration
from opkit.errors import EmulatorError, OpkitError
from test_build import built_ws, write_op, SCALE_YAML, SCALE_TILING, SCALE_KERNEL  # noqa: F401 (session fixture)

pytestmark = pytest.mark.slow   # needs the session build of tests/test_build.py


@pytest.fixture(scope="module")
def ops(built_ws):
    libs = opkit.load(built_ws, bundled=False, quiet=True)
    assert {"scale_mul", "row_sum"} <= set(libs)
    return torch.ops.opkit


def test_load_is_idempotent(built_ws, ops):
    first = loader.loaded()
    again = opkit.load(built_ws, bundled=False, quiet=True)
    assert again == first
    assert torch.ops.opkit.scale_mul is ops.scale_mul


def test_values_casts_and_naive_variant(ops):
    x = torch.randn(6, 37)
    w = torch.randn(37)
    torch.testing.assert_close(ops.scale_mul(x, w, alpha=3.0), x * w * 3.0)
    torch.testing.assert_close(ops.scale_mul(x, w, mode="neg"), -x * w * 2.0)
    y = ops.scale_mul(x.half(), w)                          # w (fp32) is cast to the lead's fp16
    assert y.dtype == torch.float16 and y.shape == x.shape
    torch.testing.assert_close(y.float(), (x.half().float() * w.half().float() * 2.0), rtol=2e-3, atol=2e-3)
    torch.testing.assert_close(torch.ops.opkit_naive.scale_mul(x, w), x * w * 2.0)
    nc = torch.randn(37, 6).t()                             # non-contiguous input
    torch.testing.assert_close(ops.scale_mul(nc, w), nc * w * 2.0)
    assert ops.scale_mul(torch.empty(0, 37), w).shape == (0, 37)


def test_clear_errors_name_the_op_and_argument(ops):
    x, w = torch.randn(4, 7), torch.randn(7)
    with pytest.raises(RuntimeError, match=r"opkit.scale_mul: x has dtype BFloat16; expected one of float32, float16"):
        ops.scale_mul(x.bfloat16(), w)
    with pytest.raises(RuntimeError, match=r"opkit.scale_mul: w.size\(0\) is 5 but C is 7 \(from x\)"):
        ops.scale_mul(x, torch.randn(5))
    with pytest.raises(RuntimeError, match=r"opkit.scale_mul: w has 2 dims; expected 1"):
        ops.scale_mul(x, torch.randn(1, 7))
    with pytest.raises(RuntimeError, match=r"opkit.scale_mul: mode is 'bad'; expected one of plain, neg"):
        ops.scale_mul(x, w, mode="bad")


def test_emulator_violation_surfaces_as_the_exact_message(ops):
    with pytest.raises(RuntimeError) as info:
        ops.scale_mul(torch.randn(4, 7), torch.randn(7), alpha=13.0)
    e = EmulatorError.from_message(str(info.value))
    assert e is not None, str(info.value)
    assert e.rule == "ub-capacity" and e.file.endswith("scale_mul/kernel.cpp"), str(e)


def test_last_launch_counters(built_ws, ops):
    ops.scale_mul(torch.randn(8, 16), torch.randn(16))
    stats = registration.last_launch()
    assert stats["blocks"] == 4                             # ScaleMulTiling: 4 blocks from 4 rows up
    # the kernel reads GM through raw pointers (not counted); each block reads the 16-byte tiling struct
    assert stats["gm_read_bytes"] == 4 * 16 and stats["gm_write_bytes"] == 0


@pytest.mark.parametrize("dim, keepdim", [(-1, False), (0, False), (1, True), (-2, True)])
def test_dim_role_moves_and_keepdim(ops, dim, keepdim):
    x = torch.randn(3, 5, 6)
    y = ops.row_sum(x, dim=dim, keepdim=keepdim)
    torch.testing.assert_close(y, x.sum(dim=dim, keepdim=keepdim), rtol=1e-5, atol=1e-5)
    assert y.is_contiguous()


def test_opcheck_and_torch_compile_dynamic(ops):
    from torch.library import opcheck
    opcheck(torch.ops.opkit.scale_mul.default, (torch.randn(3, 9), torch.randn(9)), {"alpha": 0.5})
    opcheck(torch.ops.opkit.row_sum.default, (torch.randn(4, 6),), {"dim": 0, "keepdim": True})
    torch._dynamo.reset()
    f = torch.compile(lambda t: ops.row_sum(t, dim=1) * 2, dynamic=True, fullgraph=True)
    for shape in ((3, 5), (7, 11), (2, 9)):
        x = torch.randn(*shape)
        torch.testing.assert_close(f(x), x.sum(1) * 2, rtol=1e-5, atol=1e-5)


def test_autocast_keeps_the_lead_dtype_and_never_downcasts(ops):
    x, w = torch.randn(4, 8), torch.randn(8)
    with torch.autocast("cpu", dtype=torch.float16):
        assert ops.scale_mul(x, w.half()).dtype == torch.float32      # fp32 activation stays fp32
        assert ops.scale_mul(x.half(), w).dtype == torch.float16      # weight follows the fp16 activation
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert ops.scale_mul(x, w).dtype == torch.float32


def test_unbuilt_workspace_op_says_run_opkit_build(tmp_path):
    (tmp_path / "opkit.yaml").write_text("x: 1\n")
    write_op(tmp_path, "scale_mul", SCALE_YAML, SCALE_TILING, SCALE_KERNEL)
    with pytest.raises(OpkitError, match=r"not built for target cpu: run `opkit build` in"):
        opkit.load(tmp_path, bundled=False)
    lone = tempfile.mkdtemp(prefix="opkit-nows-")      # /tmp/...: no ops/ or opkit.yaml above it
    with pytest.raises(OpkitError, match="no opkit workspace there"):
        opkit.load(lone, bundled=False)
