"""gm_pad.h's padding arithmetic past 4 GiB (issue 39): `gm_pad_scalar` took a 32-bit byte count, so InitOutput
cleared the padding it fills in 1 GiB chunks; the count is size_t now and InitOutput makes one call. A launch over a
4 GiB buffer is too big for CI, so the kernel (test_gm_pad_span.cpp) checks the span computation on a made-up
region it never reads, and pins the 64-bit signature with a static_assert (before: 48 of the 4 GiB + 48 bytes were
seen, and the padding past 4 GiB was missed)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from conftest import CACHE
from opkit.emulator.abi import KernelModule
from opkit.emulator.modules import compile_module

HERE = Path(__file__).resolve().parent


def test_padding_spans_past_4_gib():
    mod = KernelModule(compile_module(HERE / "test_gm_pad_span.cpp", "emu_gm_pad_span", 2, CACHE / "modules",
                                      opt="-O1"))
    y = np.zeros(32, np.uint8)
    mod.launch([y, np.zeros(1, np.uint32)], 1)
    assert list(y[:4]) == [1, 0, 1, 32]
