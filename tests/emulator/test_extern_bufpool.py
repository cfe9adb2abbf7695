"""EXTERN_IMPL_BUFPOOL (opkit_emu/ext_bufpool.h): a user-defined TBufPool, against PyTorch.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/基础API/资源管理/自定义TBufPool/EXTERN_IMPL_BUFPOOL宏.md (A2: 支持);
macro include/basic_api/kernel_tpipe.h:382-451; handle calls impl/basic_api/kernel_tquebind_impl.h:58-87 (InitBufHandle
writes the handle it is passed, index unused), kernel_tbuf_impl.h:203-214; the pattern of examples/01_simd_cpp_api/
03_basic_api/04_memory_management/tbufpool_management/tbufpool_management.asc:31-71 (scenario 3). z = x + y: exact
in float32."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from opkit.errors import EmulatorError


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("extern_bufpool", headers_digest()), "extern_bufpool")


def run(mod, mode):
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(256).astype(np.float32), rng.standard_normal(256).astype(np.float32)
    z = np.zeros(256, np.float32)
    mod.ext_pool_add([x, y, z, np.array([mode], np.uint32)], block_dim=1)
    return x, y, z


def test_user_pool_buffers_carry_the_kernel(mod):
    x, y, z = run(mod, 0)
    np.testing.assert_array_equal(z, (torch.from_numpy(x) + torch.from_numpy(y)).numpy())


@pytest.mark.parametrize("mode, rule, call, words", [
    (1, "queue-protocol", "TQue::AllocTensor", "buffer 1 of 2 was never written by InitBufHandle"),
    (2, "ub-capacity", "TBuf::InitBufHandle", "outside the pool's UB"),
    (3, "queue-protocol", "Reset", "still allocated"),
    (4, "buffer-limit", "GetBufHandle", "handle 4 of a pool declared with BUFID_SIZE 4"),
])
def test_user_pool_rules(mod, mode, rule, call, words):
    with pytest.raises(EmulatorError) as e:
        run(mod, mode)
    assert e.value.rule == rule and e.value.call == call and words in e.value.detail, str(e.value)
