"""The modules a TBE op imports (``tbe``, ``tbe.dsl``, ``tbe.common.register``, ``tbe.common.utils.para_check``,
``te.lang.cce``, ``topi.generic``, ``impl.util.platform_adapter`` ...), built from opkit's emulation and put
in ``sys.modules`` only while opkit imports or runs a TBE op (:func:`installed`), never globally.

Before a kernel runs, :func:`scan` reads its source: an import or attribute of these modules that the
emulation lacks (TIK, cube ops, hand-written tvm.compute schedules) fails then, naming file:line.
"""
from __future__ import annotations

import ast
import contextlib
import sys
import threading
import types
from pathlib import Path

from . import checks, dsl, legacy
from . import platform as P
from . import tvm as tvm_shim

ROOTS = ("tbe", "te", "topi", "impl", "tvm")
DSL_NAMES = legacy.API + ("vrec", "auto_schedule", "build", "compute", "classify", "var")
_lock = threading.RLock()


def _identity_decorator(*_a, **_k):
    def deco(fn):
        return fn
    return deco


def _no_op(*_a, **_k):
    """Compile-time metadata for the device's tiling (add_compile_info ...): nothing to do on the CPU."""
    return None


class _FusionManager:
    register = staticmethod(_identity_decorator)

    @staticmethod
    def get_build_cfg():
        return "enable"


class _OpPatternMode:
    ELEWISE, BROADCAST, REDUCE, NONE = "elewise", "broadcast", "reduce", "None"
    ELEWISE_WITH_BROADCAST = "broadcast"


class _OpImplMode:
    HIGH_PERFORMANCE, HIGH_PRECISION = "high_performance", "high_precision"


def _names(mod, names) -> dict:
    return {n: getattr(mod, n) for n in names}


_CHECKS = [n for n in dir(checks) if not n.startswith("_") and n not in ("functools", "reduce", "TbeError",
                                                                          "annotations")]


def _tables() -> dict[str, dict]:
    """Module name -> its attributes (submodules are linked after)."""
    plat = dict(api_check_support=P.api_check_support, intrinsic_check_support=P.intrinsic_check_support,
                get_soc_spec=P.get_soc_spec, SOC_VERSION="SOC_VERSION", SHORT_SOC_VERSION="SHORT_SOC_VERSION",
                CORE_NUM="CORE_NUM", UB_SIZE="UB_SIZE", L1_SIZE="L1_SIZE", ASCEND_310="Ascend310",
                ASCEND_910="Ascend910", ASCEND_910B="Ascend910B", ASCEND_310P="Ascend310P",
                scope_ubuf="local.UB", scope_gm="global", build_config=contextlib.nullcontext(),
                get_bit_len=checks.get_bit_len)
    dslns = {n: getattr(dsl, n) for n in DSL_NAMES}
    register = dict(register_op_compute=_identity_decorator, register_operator=_identity_decorator,
                    register_param_generalization=_identity_decorator)
    checks_ns = _names(checks, _CHECKS)
    lang = legacy.names()
    lang.update(util=None)      # te.lang.cce.util: submodule
    adapter = dict(tvm=None, para_check=None, shape_util=None, tbe_platform=None, register_operator=
                   _identity_decorator, register_op_compute=_identity_decorator, classify=dsl.classify,
                   OpPatternMode=_OpPatternMode, OpImplMode=_OpImplMode,
                   error_manager_vector=checks.error_manager_vector, tbe=None)
    return {
        "tbe": {}, "tbe.dsl": dslns, "tbe.tvm": vars_of(tvm_shim), "tbe.common": {},
        "tbe.common.register": register, "tbe.common.utils": {}, "tbe.common.utils.para_check": checks_ns,
        "tbe.common.utils.shape_util": checks_ns, "tbe.common.utils.errormgr": {},
        "tbe.common.platform": plat, "tbe.common.platform.platform_info": plat,
        "te": {}, "te.tvm": vars_of(tvm_shim), "te.lang": {}, "te.lang.cce": lang,
        "te.lang.cce.util": {"shape_to_list": checks.shape_to_list},
        "te.platform": dict(plat, fusion_manager=None, cce_conf=None, cce_params=None, cce_build=None),
        "te.platform.fusion_manager": {"fusion_manager": _FusionManager()},
        "te.platform.cce_conf": plat, "te.platform.cce_params": {"BLOCK_REDUCE": 16, "scope_ubuf": "local.UB"},
        "te.platform.cce_build": {"build_config": contextlib.nullcontext()},
        "te.utils": {}, "te.utils.op_utils": checks_ns, "te.utils.para_check": checks_ns,
        "te.utils.shape_util": checks_ns,
        "topi": {}, "topi.generic": {"auto_schedule": dsl.auto_schedule}, "topi.cce": {},
        "topi.cce.util": checks_ns,
        "impl": {}, "impl.util": {}, "impl.util.platform_adapter": adapter,
        # the 2020-era dynamic-shape spelling: te.lang.dynamic, te.op, te.platform.shape_classifier
        "te.lang.dynamic": dict(lang, shape_to_list=checks.shape_to_list, util=None),
        "te.op": dict(register, register_operator=_identity_decorator, compute=dsl.compute,
                      register_fusion_compute=_identity_decorator, add_compile_info=_no_op),
        "te.platform.shape_classifier": {"classify": dsl.classify, "Mode": _OpPatternMode},
        "te.utils.error_manager": {"error_manager_vector": checks.error_manager_vector,
                                   "error_manager_util": None},
        "te.utils.error_manager.error_manager_util": {"get_error_message": checks.get_error_message},
        "te.utils.error_manager.error_manager_vector": vars_of_obj(checks.error_manager_vector),
    }


def vars_of_obj(obj) -> dict:
    """A module view of an object's raise_err_* functions (imported as a module by some ops)."""
    names = ("raise_err_input_dtype_not_supported", "raise_err_check_params_rules", "raise_err_specific_reson",
             "raise_err_inputs_dtype_not_equal", "raise_err_input_value_invalid", "raise_err_input_shpae_invalid",
             "raise_err_two_input_dtype_invalid", "raise_err_two_input_shpae_invalid", "raise_err_input_param_range_invalid")
    return {n: getattr(obj, n) for n in names}


def vars_of(mod) -> dict:
    return {n: v for n, v in vars(mod).items() if not n.startswith("_") and n not in ("annotations", "contextlib")}


def _build_modules() -> dict[str, types.ModuleType]:
    tables = _tables()
    mods = {}
    for name, attrs in tables.items():
        m = types.ModuleType(name, f"opkit's CPU emulation of {name} (python/opkit/tbe)")
        m.__path__ = []                    # a package, so dotted imports below it resolve through sys.modules
        m.__dict__.update({k: v for k, v in attrs.items() if v is not None})
        m.__getattr__ = _missing(name)
        mods[name] = m
    for name, m in mods.items():
        if "." in name:
            parent, _, leaf = name.rpartition(".")
            setattr(mods[parent], leaf, m)
    a = mods["impl.util.platform_adapter"]
    a.tvm, a.para_check, a.shape_util = mods["tbe.tvm"], mods["tbe.common.utils.para_check"], \
        mods["tbe.common.utils.shape_util"]
    a.tbe_platform, a.tbe = mods["tbe.common.platform"], mods["tbe.dsl"]
    mods["te.lang.cce"].util = mods["te.lang.cce.util"]
    mods["te.lang.dynamic"].util = mods["te.lang.cce.util"]
    mods["te.platform"].cce_intrin = types.SimpleNamespace(get_bit_len=checks.get_bit_len)
    return mods


def _missing(modname: str):
    def __getattr__(attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise AttributeError(f"{modname}.{attr} is not part of opkit's TBE emulation (see docs/tbe.md for "
                             "the supported subset)")
    return __getattr__


_MODULES: dict[str, types.ModuleType] | None = None


def modules() -> dict[str, types.ModuleType]:
    global _MODULES
    if _MODULES is None:
        _MODULES = _build_modules()
    return _MODULES


@contextlib.contextmanager
def installed():
    """The shim modules in ``sys.modules`` for the duration (what was there before comes back after)."""
    mods = modules()
    with _lock:
        saved = {n: sys.modules.get(n) for n in mods}
        sys.modules.update(mods)
        try:
            yield mods
        finally:
            for n, old in saved.items():
                if old is None:
                    sys.modules.pop(n, None)
                else:
                    sys.modules[n] = old


# -- the import-time check -------------------------------------------------------------------------

_KNOWN_GAPS = {"te.tik": "TIK kernels", "tbe.tik": "TIK kernels", "tik": "TIK kernels"}


def scan(path: Path, source: str | None = None) -> list[str]:
    """Problems (``file:line: ...``) with the kernel's use of the TBE modules; empty if none."""
    source = source if source is not None else Path(path).read_text()
    tree = ast.parse(source, filename=str(path))
    mods = modules()
    bound: dict[str, str] = {}          # local name -> shim module name
    errors: list[str] = []

    def err(node, msg):
        errors.append(f"{path}:{node.lineno}: {msg}")

    def gap(name: str) -> str | None:
        for k, what in _KNOWN_GAPS.items():
            if name == k or name.startswith(k + "."):
                return what
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] not in ROOTS:
                    continue
                if a.name not in mods:
                    what = gap(a.name)
                    err(node, f"`import {a.name}`: {what + ' are' if what else 'this module is'} not emulated "
                              "by opkit's TBE emulation")
                    continue
                bound[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] not in ROOTS:
                continue
            if node.module not in mods:
                what = gap(node.module)
                err(node, f"`from {node.module} import ...`: {what + ' are' if what else 'this module is'} not "
                          "emulated by opkit's TBE emulation")
                continue
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if a.name == "*":
                    continue
                if full in mods:
                    bound[a.asname or a.name] = full
                elif not hasattr(mods[node.module], a.name) or a.name not in vars(mods[node.module]):
                    what = gap(full)
                    err(node, f"`from {node.module} import {a.name}`: "
                              f"{what + ' are' if what else f'{full} is'} not emulated by opkit's TBE emulation")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            chain, base = [], node
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if not isinstance(base, ast.Name) or base.id not in bound:
                continue
            modname = bound[base.id]
            for attr in reversed(chain):
                if f"{modname}.{attr}" in mods:
                    modname = f"{modname}.{attr}"
                    continue
                if attr not in vars(mods[modname]):
                    what = gap(f"{modname}.{attr}")
                    err(node, f"`{modname}.{attr}`: {what + ' are' if what else 'this API is'} not emulated by "
                              "opkit's TBE emulation (docs/tbe.md lists the supported subset)")
                break
    return list(dict.fromkeys(errors))
