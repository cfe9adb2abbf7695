"""ge::DataType ids (hicann/metadef inc/external/graph/types.h) <-> torch dtype names <-> kernel C++ types."""
from __future__ import annotations

# id: (torch dtype name, C++ type in the kernel, bytes)
GE = {
    0: ("float32", "float", 4), 1: ("float16", "half", 2), 27: ("bfloat16", "bfloat16_t", 2),
    2: ("int8", "int8_t", 1), 3: ("int32", "int32_t", 4), 4: ("uint8", "uint8_t", 1), 6: ("int16", "int16_t", 2),
    7: ("uint16", "uint16_t", 2), 8: ("uint32", "uint32_t", 4), 9: ("int64", "int64_t", 8),
    10: ("uint64", "uint64_t", 8), 11: ("float64", "double", 8), 12: ("bool", "bool", 1),
}
BY_NAME = {v[0]: k for k, v in GE.items()}
# id -> the ge::DataType enumerator name (metadef types.h), as CANN's build spells ORIG_DTYPE_<X>
GE_NAMES = {0: "DT_FLOAT", 1: "DT_FLOAT16", 27: "DT_BF16", 2: "DT_INT8", 3: "DT_INT32", 4: "DT_UINT8", 6: "DT_INT16",
            7: "DT_UINT16", 8: "DT_UINT32", 9: "DT_INT64", 10: "DT_UINT64", 11: "DT_DOUBLE", 12: "DT_BOOL"}
FLOATS = ("float16", "bfloat16", "float32")
FORMAT_ND = 2


def name(ge_id: int) -> str:
    if ge_id not in GE:
        raise KeyError(f"ge::DataType {ge_id} has no torch dtype here")
    return GE[ge_id][0]


def cxx(ge_id: int) -> str:
    return GE[ge_id][1]


def ge_id(dtype_name: str) -> int:
    return BY_NAME[dtype_name]


def kernel_defines(io_name: str, ge_id: int) -> dict[str, str]:
    """DTYPE_<X> (the C++ type) and ORIG_DTYPE_<X> (the ge::DataType name, DT_INT8: ops-nn e5c3fa93
    scripts/util/ascendc_impl_build.py:90) for one kernel input / output; kernel_type.h defines DT_* as their ids,
    so `#if ORIG_DTYPE_X == DT_INT8` works and stringifying ORIG_DTYPE_X gives the name, as in CANN's build."""
    if ge_id not in GE_NAMES:
        raise KeyError(f"ge::DataType {ge_id} (input/output {io_name!r}) has no DT_ name here")
    return {f"DTYPE_{io_name.upper()}": cxx(ge_id), f"ORIG_DTYPE_{io_name.upper()}": GE_NAMES[ge_id]}
