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
