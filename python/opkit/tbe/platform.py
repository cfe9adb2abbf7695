"""Per-SoC dtype support of the TBE DSL (``api_check_support``) and the platform queries ops make.

The table follows CANN's static-shape ``DSL_CHECK_SUPPORT_MAP`` (tbe/dsl/compute/util.py in the canndev
history mirror dengguojie/vue-element-admin@e8bba7b, auto_schedule/python/tbe/dsl/compute/util.py); see
docs/tbe.md for the rows and what is uncertain. SoC names are SHORT_SOC_VERSION values.
"""
from __future__ import annotations

from .graph import TbeError, state

SOCS = ("Ascend310", "Ascend910", "Ascend910B", "Ascend310P")
ALIASES = {"ascend310": "Ascend310", "ascend910": "Ascend910", "ascend910a": "Ascend910",
           "ascend910prob": "Ascend910", "ascend910b": "Ascend910B", "ascend910b1": "Ascend910B",
           "ascend910b2": "Ascend910B", "ascend910b3": "Ascend910B", "ascend910b4": "Ascend910B",
           "ascend310p": "Ascend310P", "ascend310p3": "Ascend310P", "ascend610": "Ascend310P",
           "ascend710": "Ascend310P"}

_F = ("float16", "float32")
_FI = ("float16", "float32", "int32")
_BITS = ("int16", "uint16", "int32", "uint32")


def _all(dts) -> dict:
    return {s: tuple(dts) for s in SOCS}


def _row(s310, s910, s910b=None, s310p=None) -> dict:
    return {"Ascend310": tuple(s310), "Ascend910": tuple(s910), "Ascend910B": tuple(s910b or s910),
            "Ascend310P": tuple(s310p or s910b or s910)}


SUPPORT: dict[str, dict[str, tuple[str, ...]]] = {
    "vadd": _row(_FI, _FI + ("int64", "uint64")),
    **{k: _all(_FI) for k in ("vsub", "vmax", "vmin", "vadds", "vmuls", "vmaxs", "vmins")},
    "vmul": _row(_FI, _FI, _FI, _FI + ("int16",)),
    **{k: _all(_F) for k in ("vdiv", "vabs", "vrec", "vsqrt", "vrsqrt", "vmod", "vaxpy", "vmla", "vmadd",
                             "reduce_prod")},
    **{k: _row(("float16",), _F) for k in ("vexp", "vlog")},
    "vrelu": _row(("float16",), ("float16",), ("float16",), _F),
    "vlrelu": _row(_FI, _FI, _FI, _F),
    "vcmp": _row(("float16",), _F + ("int64", "uint64")),
    **{k: _row(("float16",), _F) for k in ("vsel", "vcmpsel")},
    **{k: _all(_BITS) for k in ("vnot", "vand", "vor")},
    "reduce_sum": _all(_FI),
    **{k: _row(_FI, _FI, _FI, _F) for k in ("reduce_max", "reduce_min")},
    **{k: _row(("float16",), _F, _F + ("bfloat16",), _F) for k in ("floor", "ceil", "round")},
    **{k: _row((), _F, _F + ("bfloat16",), _F) for k in ("trunc", "round_half_up")},
    "clip": _all(_FI),
}
# te.lang.cce names of the same instructions
API_ALIASES = {"sum": "reduce_sum", "round_to": "clip", "round_d": "round_half_up"}

_CAST_COMMON = {("int8", "float16"), ("uint8", "float16"), ("float16", "float32"), ("float16", "int8"),
                ("float16", "uint8"), ("float16", "int32"), ("float32", "float16"), ("float32", "int8"),
                ("float32", "uint8"), ("float32", "int32"), ("int32", "float16"), ("int32", "int8"),
                ("int32", "uint8"), ("int32", "float32")}
_CAST_64 = {("int32", "int64"), ("int64", "int32")}
CASTS = {"Ascend310": _CAST_COMMON, "Ascend910": _CAST_COMMON | _CAST_64,
         "Ascend910B": _CAST_COMMON | _CAST_64 | {("bfloat16", "float32")}, "Ascend310P": _CAST_COMMON | _CAST_64}


def normalize_soc(name: str) -> str:
    soc = ALIASES.get(str(name).lower().replace("-", "").replace("_", ""))
    if soc is None:
        raise TbeError(f"unknown SoC {name!r} for the TBE emulation; expected one of {', '.join(SOCS)} "
                       "(or a SoC version such as Ascend910B2)")
    return soc


def current_soc() -> str:
    return state.soc


def supports(api: str, dtype: str, soc: str | None = None) -> bool:
    """Does ``api`` (last name component; te.lang.cce aliases resolved) take ``dtype`` on ``soc``?
    An API outside the table takes every dtype, as CANN's check returns True for unlisted APIs."""
    name = api.rsplit(".", 1)[-1]
    name = API_ALIASES.get(name, name)
    row = SUPPORT.get(name)
    if row is None:
        return True
    if state.naive and dtype == state.naive:     # the naive variant models compute in the I/O dtype
        return True
    return str(dtype).lower() in row[soc or state.soc]


def api_check_support(api: str, dtype: str = "") -> bool:
    """``tbe_platform.api_check_support("tbe.dsl.vexp", "float32")``: True if dtype is "" or listed."""
    if not dtype:
        return api.rsplit(".", 1)[-1] in SUPPORT or api.rsplit(".", 1)[-1] in API_ALIASES
    return supports(api, dtype)


def require(api: str, dtype: str) -> None:
    if not supports(api, dtype):
        raise TbeError(f"E90003: tbe.dsl.{api} is not supported {dtype} on {state.soc} "
                       f"(supported: {', '.join(SUPPORT[API_ALIASES.get(api, api)][state.soc]) or 'none'}); "
                       "the device's op build rejects it the same way")


def cast_supported(src: str, dst: str) -> bool:
    if state.naive and state.naive in (src, dst) and src != dst and {src, dst} <= {state.naive, "float32"}:
        return True
    return (src, dst) in CASTS[state.soc]


_SOC_SPEC = {"Ascend310": {"CORE_NUM": 2, "UB_SIZE": 248 * 1024},
             "Ascend910": {"CORE_NUM": 32, "UB_SIZE": 256 * 1024},
             "Ascend910B": {"CORE_NUM": 24, "UB_SIZE": 192 * 1024},
             "Ascend310P": {"CORE_NUM": 8, "UB_SIZE": 256 * 1024}}


def get_soc_spec(key: str):
    """The queries TBE ops make of ``tbe_platform.get_soc_spec``."""
    key = str(key).upper()
    if key in ("SOC_VERSION", "SHORT_SOC_VERSION", "FULL_SOC_VERSION"):
        return state.soc
    if key == "CORE_TYPE":
        return "AiCore"
    spec = _SOC_SPEC[state.soc]
    if key in spec:
        return spec[key]
    if key in ("L1_SIZE",):
        return 1024 * 1024
    raise TbeError(f"tbe_platform.get_soc_spec({key!r}) is not emulated (known: SOC_VERSION, SHORT_SOC_VERSION, "
                   "CORE_NUM, UB_SIZE, CORE_TYPE, L1_SIZE)")


def intrinsic_check_support(name: str, dtype: str = "") -> bool:
    """``intrinsic_check_support("Intrinsic_vexp", "float32")``: same table, intrinsic spelling."""
    api = name.replace("Intrinsic_", "")
    api = {"vln": "vlog", "vconv": "cast_to", "vcadd": "reduce_sum", "vcmax": "reduce_max",
           "vcmin": "reduce_min"}.get(api, api)
    if api == "cast_to":
        return True if not dtype else any(dtype.lower() in p for p in CASTS[state.soc])
    return supports(api, dtype) if dtype else True
