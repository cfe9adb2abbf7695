"""Target ``cpu``: the AscendC CPU emulator (default).

Renders, per op, ``module.cpp`` (kernel module) and ``binding.cpp`` (torch binding) from templates/cpu
into ``<build>/_gen/``, one CMakeLists for all ops of the build folder (cmake/opkit_cpu.cmake does the
work), and drives CMake + Ninja. Outputs: ``<build>/<op>/kernel_<tag>[_naive].so`` and
``libopkit_<op>.so`` (docs/architecture.md "Emulator target").
"""
from __future__ import annotations

import fcntl
import json
import shlex
import shutil
from pathlib import Path

import jinja2

from ..build import (Log, cmake_exe, compile_failure_message, default_jobs, ninja_exe, run_tool, write_if_changed,
                     write_stamp)
from ..errors import BuildError, SpecError
from ..spec import DTYPES, OpSpec, load_spec
from ..workspace import cmake_dir, emulator_include_dir, host_include_dir, templates_dir

TARGET = "cpu"
REGISTRY = "ops.json"    # every op this build folder has built, so a partial build keeps the others

_AT = {"float16": "at::kHalf", "bfloat16": "at::kBFloat16", "float32": "at::kFloat", "int32": "at::kInt",
       "int64": "at::kLong", "bool": "at::kBool"}
_CPP_ATTR = {"float": "double", "int": "int64_t", "bool": "bool", "str": "c10::string_view"}


def available() -> tuple[bool, str]:
    if not (emulator_include_dir() / "kernel_operator.h").is_file():
        return False, f"the emulator headers are missing ({emulator_include_dir() / 'kernel_operator.h'})"
    cxx = shutil.which("c++") or shutil.which("g++")
    if not cxx:
        return False, "no C++ compiler (c++ or g++) on PATH"
    return True, f"AscendC CPU emulator with {cxx}"


def library(build_dir: Path, spec: OpSpec) -> Path:
    if spec.lang == "tbe":      # a TBE op registers from Python (opkit/tbe); the build writes a manifest
        from ..tbe.register import manifest
        return manifest(build_dir, spec)
    return Path(build_dir) / spec.snake / f"libopkit_{spec.snake}.so"


def kernel_module(build_dir: Path, spec: OpSpec, dtype: str, naive: bool = False) -> Path:
    return Path(build_dir) / spec.snake / f"kernel_{DTYPES[dtype][2]}{'_naive' if naive else ''}.so"


def emulator_cflags() -> list[str]:
    """opkit.emulator.cflags() (include dirs, defines), as a list."""
    try:
        from .. import emulator
        flags = emulator.cflags()
    except (ImportError, AttributeError):
        flags = [f"-I{emulator_include_dir()}", f"-I{host_include_dir()}"]
    return shlex.split(flags) if isinstance(flags, str) else list(flags)


# -- build ---------------------------------------------------------------------------------------

def build(specs: list[OpSpec], build_dir: Path, *, jobs: int | None = None, log: Log = lambda s: None,
          verbose: bool = False, keep_going: bool = False, **options) -> None:
    """Build ``specs`` into ``build_dir``. keep_going: build every op even if one fails; the BuildError
    then carries ``failed_ops`` (snake -> message) and the ops that built are stamped as built."""
    if options:
        raise BuildError(f"target cpu takes no options {', '.join(sorted(options))} (those are for --target npu)")
    build_dir = Path(build_dir).resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    tbe = [s for s in specs if s.lang == "tbe"]
    if tbe:                     # TBE ops: checked and run in Python, nothing to compile (docs/tbe.md)
        from ..tbe.build import build as build_tbe
        build_tbe(tbe, build_dir, log=log, target=TARGET)
        specs = [s for s in specs if s.lang != "tbe"]
        if not specs:
            return
    with open(build_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)     # one build per folder at a time (CLI, opkit.load, tests)
        _build_locked(specs, build_dir, jobs=jobs, log=log, verbose=verbose, keep_going=keep_going)


def _build_locked(specs: list[OpSpec], build_dir: Path, *, jobs, log, verbose, keep_going) -> None:
    gen, cmk = build_dir / "_gen", build_dir / "_cmake"
    all_specs = _with_registry(build_dir, specs)
    env = _env()
    changed = []
    for spec in all_specs:
        plan = binding_plan(spec)
        changed.append(write_if_changed(gen / spec.snake / "module.cpp", env.get_template("module.cpp.j2").render(plan)))
        changed.append(write_if_changed(gen / spec.snake / "binding.cpp", env.get_template("binding.cpp.j2").render(plan)))
    pch = len(all_specs) >= 3
    write_if_changed(gen / "pch.h", env.get_template("pch.h.j2").render())
    write_if_changed(gen / "pch_stub.cpp", "// empty: carries the precompiled torch headers\n")
    write_if_changed(gen / "CMakeLists.txt", env.get_template("CMakeLists.txt.j2").render(
        _cmake_context(all_specs, build_dir, gen, pch)))

    if not (cmk / "build.ninja").is_file():
        log(f"configuring {cmk}")
        rc, out = run_tool([cmake_exe(), "-S", str(gen), "-B", str(cmk), "-G", "Ninja",
                            f"-DCMAKE_MAKE_PROGRAM={ninja_exe()}", "-DCMAKE_BUILD_TYPE=Release"],
                           verbose=verbose, log=log)
        if rc != 0:
            raise BuildError(f"CMake configure failed in {cmk}:\n{out[-6000:]}")

    jobs = jobs or default_jobs()
    targets = [f"opkit_{s.snake}" for s in specs]
    cmd = [ninja_exe(), "-C", str(cmk), f"-j{jobs}"] + (["-v"] if verbose else []) + \
        (["-k", "0"] if keep_going else []) + targets
    names = ", ".join(s.snake for s in specs)
    log(f"building {names} (cpu, -j{jobs})")
    last = [0]

    def progress(done: int, total: int, what: str) -> None:
        if done != last[0]:
            last[0] = done
            log(f"[{done}/{total}] {_short(what, build_dir)}")

    rc, out = run_tool(cmd, verbose=verbose, log=log, progress=progress)
    if rc != 0:
        failed = {}
        for s in specs:
            if not keep_going or not _up_to_date(cmk, s):
                failed[s.snake] = compile_failure_message(
                    out, [p for p in s.dir.iterdir() if p.is_file()], f"opkit build {s.snake} (target cpu)")
        for s in specs:
            if s.snake not in failed:
                write_stamp(s, build_dir / s.snake, TARGET)
        _save_registry(build_dir, all_specs)
        users = [p for s in all_specs for p in s.dir.iterdir() if p.is_file()]
        err = BuildError(compile_failure_message(out, users, f"opkit build ({names}, target cpu)"))
        err.failed_ops = failed
        raise err
    for s in specs:
        write_stamp(s, build_dir / s.snake, TARGET)
    _save_registry(build_dir, all_specs)
    if "no work to do" in out:
        log("up to date")


def _up_to_date(cmk: Path, spec: OpSpec) -> bool:
    rc, out = run_tool([ninja_exe(), "-C", str(cmk), "-n", f"opkit_{spec.snake}"])
    return rc == 0 and "no work to do" in out


def _short(what: str, build_dir: Path) -> str:
    return what.replace(str(build_dir) + "/", "")


def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir() / "cpu")),
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


def _with_registry(build_dir: Path, specs: list[OpSpec]) -> list[OpSpec]:
    """Requested specs plus the ops built here before (still present and valid), by snake name."""
    by_name = {}
    reg = build_dir / REGISTRY
    if reg.is_file():
        try:
            for snake, d in json.loads(reg.read_text()).items():
                if (Path(d) / "op.yaml").is_file():
                    try:
                        by_name[snake] = load_spec(d)
                    except SpecError:
                        pass   # an op that no longer loads drops out until it is built again
        except (OSError, ValueError):
            pass
    for s in specs:
        by_name[s.snake] = s
    return [by_name[k] for k in sorted(by_name) if by_name[k].lang != "tbe"]


def _save_registry(build_dir: Path, specs: list[OpSpec]) -> None:
    write_if_changed(build_dir / REGISTRY, json.dumps({s.snake: str(s.dir) for s in specs}, indent=1) + "\n")


def _q(s: str) -> str:
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _cmake_context(specs: list[OpSpec], build_dir: Path, gen: Path, pch: bool) -> dict:
    includes, libdir, abi = torch_paths()
    ops = []
    for s in specs:
        kernels = []
        for dt in s.dtypes:
            defines = kernel_defines(s, dt)
            tag = DTYPES[dt][2]
            kernels.append({"name": f"kernel_{tag}", "defines": defines})
            kernels.append({"name": f"kernel_{tag}_naive",
                            "defines": defines + ["OPKIT_NAIVE_COMPUTE", "OPKIT_EMU_ALLOW_BF16_MATH"]})
        ops.append({"name": s.name, "snake": s.snake, "dir": str(s.dir), "op_yaml": str(s.dir / "op.yaml"),
                    "kernels": kernels, "module_cpp": str(gen / s.snake / "module.cpp"),
                    "binding_cpp": str(gen / s.snake / "binding.cpp")})
    return {
        "output_dir": str(build_dir), "cmake_dir": str(cmake_dir()), "host_include": str(host_include_dir()),
        "emu_cflags": " ".join(_q(f) for f in emulator_cflags()),
        "torch_includes": " ".join(_q(p) for p in includes),
        "torch_libdir": libdir,
        "torch_defines": _q(f"_GLIBCXX_USE_CXX11_ABI={abi}"), "pch": pch, "ops": ops,
    }


def torch_paths() -> tuple[list[str], str, int]:
    """(include dirs, library dir, _GLIBCXX_USE_CXX11_ABI) of the installed torch, found without importing
    torch when possible (an import costs seconds; a no-op `opkit build` should not)."""
    import importlib.util

    from ..build import _torch_version
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        raise BuildError("PyTorch is not installed in this Python environment")
    root = Path(spec.origin).parent
    includes = [str(root / "include"), str(root / "include" / "torch" / "csrc" / "api" / "include")]
    major_minor = tuple(int(x) for x in _torch_version().split("+")[0].split(".")[:2])
    if major_minor >= (2, 7):
        abi = 1          # pip wheels of torch >= 2.7 are built with the C++11 ABI only
    else:
        import torch
        abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", 1))
    return includes, str(root / "lib"), abi


def kernel_defines(spec: OpSpec, lead_dtype: str) -> list[str]:
    """-D values of one kernel variant: DTYPE_<NAME>=<C++ type> for every input and output."""
    cpp = DTYPES[lead_dtype][1]
    out = [f"DTYPE_{i.name.upper()}={cpp}" for i in spec.inputs]   # non-lead inputs are cast to the lead's
    for o in spec.outputs:
        dt = o.kernel_dtype or (o.dtype if o.dtype in DTYPES else lead_dtype)
        out.append(f"DTYPE_{o.name.upper()}={DTYPES[dt][1]}")
    return out


# -- the binding's C++ pieces ----------------------------------------------------------------------

def binding_plan(spec: OpSpec) -> dict:
    """Everything the templates need, with the generated C++ snippets already spelled out."""
    lead = spec.lead.name
    dim_attr = next((a.name for a in spec.attrs if a.role == "dim"), None)
    keep_attr = next((a.name for a in spec.attrs if a.role == "keepdim"), None)
    params = [f"const at::Tensor& {i.name}" for i in spec.inputs] + \
             [f"{_CPP_ATTR[a.type]} {a.name}" for a in spec.attrs]
    param_types = [p.rsplit(" ", 1)[0] for p in params]
    all_args = [i.name for i in spec.inputs] + [a.name for a in spec.attrs]
    inputs = [{"name": i.name, "moves": bool(dim_attr) and (i is spec.lead or i.shape == spec.lead.shape)}
              for i in spec.inputs]

    outputs = []
    for o in spec.outputs:
        final = "opk_lead" if o.dtype not in DTYPES or o.dtype in [i.name for i in spec.inputs] else _AT[o.dtype]
        if o.dtype in [i.name for i in spec.inputs]:
            final = "opk_lead"
        kdt = _AT[o.kernel_dtype] if o.kernel_dtype else final
        if o.shape in [i.name for i in spec.inputs]:
            src = o.shape
            moves = next(x["moves"] for x in inputs if x["name"] == src)
            kshape = f"{src}_k.sizes().vec()"
            post = f"{o.name}_k"
            if moves:
                post = f"(opk_move ? {o.name}_k.movedim(-1, opk_dim).contiguous() : {o.name}_k)"
            meta_fix = ""
        else:
            src, _dim, keep = _parse_reduce(o.shape)
            keep_expr = keep or "false"
            kshape = (f"[&] {{ auto s = {src}_k.sizes().vec(); if (!s.empty()) {{ s.pop_back(); "
                      f"if ({keep_expr}) s.push_back(1); }} return s; }}()")   # 0-d stays 0-d, as torch
            post = f"({keep_expr} && opk_move ? {o.name}_k.movedim(-1, opk_dim).contiguous() : {o.name}_k)"
            meta_fix = (f"if (!{o.name}_shape.empty()) {{ if ({keep_expr}) {o.name}_shape[opk_dim] = 1; "
                        f"else {o.name}_shape.erase({o.name}_shape.begin() + opk_dim); }}")
        if o.kernel_dtype:
            post = f"{post}.to({final})"
        # kernel_dtype outputs are zero-filled: kernels may accumulate into them across blocks (atomic add)
        outputs.append({"zero": bool(o.kernel_dtype), "name": o.name, "kernel_shape": kshape, "kernel_dtype": kdt, "final_dtype": final,
                        "post": post, "meta_src": src, "meta_shape_fix": meta_fix})

    attrs = []
    for a in spec.attrs:
        if a.type == "float":
            setter = f'ctx.float_attrs["{a.name}"] = {a.name};'
        elif a.type == "int":
            setter = f'ctx.int_attrs["{a.name}"] = {"-1" if a.role == "dim" else a.name};'
        elif a.type == "bool":
            setter = f'ctx.int_attrs["{a.name}"] = {a.name} ? 1 : 0;'
        else:
            setter = f'ctx.str_attrs["{a.name}"] = std::string({a.name});'
        attrs.append({"name": a.name, "ctx_set": setter})

    rets = [f"{o.name}_out" for o in spec.outputs]
    multi = len(rets) > 1
    return {
        "name": spec.name, "snake": spec.snake, "op_yaml": str(spec.dir / "op.yaml"),
        "tiling_h": str(spec.tiling_file), "kernel_cpp": str(spec.kernel_file),
        "tiling_struct": spec.tiling_struct, "tiling_func": spec.tiling_func,
        "num_gm_args": len(spec.inputs) + len(spec.outputs) + 2,
        "lead": lead, "compute_dtype": spec.compute_dtype,
        "lead_dtypes": [{"at": _AT[d], "tag": DTYPES[d][2]} for d in spec.dtypes],
        "lead_dtype_names": ", ".join(spec.dtypes),
        "params": ", ".join(params), "param_types": ", ".join(param_types), "all_args": ", ".join(all_args),
        "tensor_params": ", ".join(f"const at::Tensor& {i.name}" for i in spec.inputs),
        "tensor_args": ", ".join(i.name for i in spec.inputs),
        "inputs": inputs, "outputs": outputs, "attrs": attrs, "dim_attr": dim_attr, "keep_attr": keep_attr,
        "rank_checks": _rank_checks(spec), "dim_checks": _dim_checks(spec), "attr_checks": _attr_checks(spec),
        "gm_args": [f"{i.name}_k" for i in spec.inputs] + [f"{o.name}_k" for o in spec.outputs],
        "ret_type": f"std::tuple<{', '.join(['at::Tensor'] * len(rets))}>" if multi else "at::Tensor",
        "ret_expr": f"std::make_tuple({', '.join(rets)})" if multi else rets[0],
        "autocast_args": ", ".join(
            [i.name if i is spec.lead else f"autocast_cast({i.name}, opk_lead)" for i in spec.inputs]
            + [a.name for a in spec.attrs]),
        "schema": spec.schema().replace('"', '\\"'),
    }


def _parse_reduce(text: str) -> tuple[str, str, str | None]:
    from ..spec import _REDUCE
    m = _REDUCE.match(text)
    assert m, text   # validated by spec.py
    return m.group(1), m.group(2), m.group(3)


def _fmt_shape(shape) -> str:
    return "[" + ", ".join(str(t) for t in shape) + "]"


def _rank_checks(spec: OpSpec) -> list[str]:
    out = []
    for i in spec.inputs:
        fixed = len([t for t in i.shape if t != "..."])
        op, word = (">=", "at least ") if "..." in i.shape else ("==", "")
        out.append(f'TORCH_CHECK({i.name}.dim() {op} {fixed}, kOp, ": {i.name} has ", {i.name}.dim(), '
                   f'" dims; expected {word}{fixed} (shape {_fmt_shape(i.shape)})");')
    return out


def _dim_checks(spec: OpSpec) -> list[str]:
    """Named dims bind across inputs; fixed dims must match; leading '...' dims match the first owner's."""
    out, bound, batch_owner = [], {}, None
    for i in spec.inputs:
        toks = list(i.shape)
        ell = "..." in toks
        if ell:
            toks.remove("...")
            n = len(toks)
            if batch_owner is None:
                batch_owner = (i.name, n)
            else:
                o, on = batch_owner
                out.append(f'TORCH_CHECK({i.name}_k.sizes().slice(0, {i.name}_k.dim() - {n}) == '
                           f'{o}_k.sizes().slice(0, {o}_k.dim() - {on}), kOp, ": the leading dims of {i.name} ", '
                           f'{i.name}_k.sizes(), " do not match those of {o} ", {o}_k.sizes());')
        for pos, t in enumerate(toks):
            idx = pos - len(toks) if ell else pos
            expr = f"{i.name}_k.size({idx})"
            if isinstance(t, int):
                out.append(f'TORCH_CHECK({expr} == {t}, kOp, ": {i.name}.size({idx}) is ", {expr}, '
                           f'"; expected {t} (shape {_fmt_shape(i.shape)})");')
            elif t in bound:
                var, owner = bound[t]
                out.append(f'TORCH_CHECK({expr} == {var}, kOp, ": {i.name}.size({idx}) is ", {expr}, '
                           f'" but {t} is ", {var}, " (from {owner}); expected equal (shape {_fmt_shape(i.shape)})");')
            else:
                var = f"opk_dim_{t}"
                bound[t] = (var, i.name)
                out.append(f"const int64_t {var} = {expr}; (void){var};")
    return out


def _attr_checks(spec: OpSpec) -> list[str]:
    out = []
    for a in spec.attrs:
        if not a.choices:
            continue
        lit = (lambda v: f'"{v}"') if a.type == "str" else (lambda v: str(v).lower() if a.type == "bool" else str(v))
        cond = " || ".join(f"{a.name} == {lit(c)}" for c in a.choices)
        names = ", ".join(str(c) for c in a.choices)
        out.append(f'TORCH_CHECK({cond}, kOp, ": {a.name} is \'", {a.name}, "\'; expected one of {names}");')
    return out
