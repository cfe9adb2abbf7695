"""ORIG_DTYPE_<X> as CANN's op build spells it: the ge::DataType name (ops-nn e5c3fa93
scripts/util/ascendc_impl_build.py:90), which the emulator's kernel_type.h defines as the same id metadef gives it."""
from __future__ import annotations

import re
from pathlib import Path

from opkit.cannproject import dtypes

KERNEL_TYPE_H = Path(dtypes.__file__).resolve().parents[1] / "emulator" / "include" / "kernel_type.h"


def test_cann_dtypes_orig_dtype_is_the_dt_name():
    assert dtypes.kernel_defines("x", 2) == {"DTYPE_X": "int8_t", "ORIG_DTYPE_X": "DT_INT8"}
    assert dtypes.kernel_defines("y", 27)["ORIG_DTYPE_Y"] == "DT_BF16"


def test_cann_dtypes_every_dt_name_is_defined_as_its_id_in_kernel_type_h():
    defined = {m[1]: int(m[2]) for m in re.finditer(r"#define (DT_\w+) (\d+)", KERNEL_TYPE_H.read_text())}
    assert set(dtypes.GE_NAMES) == set(dtypes.GE)
    for ge_id, name in dtypes.GE_NAMES.items():
        assert defined.get(name) == ge_id, name
