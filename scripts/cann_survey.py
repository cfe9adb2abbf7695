"""cann_survey.py DIR [--json OUT] [--jobs N] -- public CANN custom-op projects, unchanged, on opkit.

Opt-in (not CI): DIR holds checkouts fetched locally (never vendored). Every folder with op_host/ and
op_kernel/ is a project; every OpType its op_host sources register (OP_ADD / IMPL_OP_OPTILING) is tried:

  compiles   the kernel file with $(opkit cflags) in the translation unit `opkit import-cann` builds
             (python/opkit/cannproject/kernel.py: its own op_host tiling header included first, as CANN's
             generated header would be; the entry renamed), DTYPE_<NAME> from the OpDef's first DataType
             column -- unchanged
  right      for ops with an obvious PyTorch equivalent (REFERENCES below): the project's own host code
             (InferShape + TilingFunc) on opkit's CPU context, the kernel on the emulator, per floating dtype
             column on an aligned shape (8, 2048) and a ragged one (3, 77), against the reference
             (fp32: rtol 1e-4 / atol 1e-5, fp16/bf16: rtol/atol 1e-2)

A kernel that compiles only when ASSERT(x) expands to nothing (device builds) is counted apart: CANN's own
CPU-debug headers make ASSERT(x) assert(x), as the emulator does, so it fails there the same way.

Prints one line per op and a summary with failure kinds and counts (scripts/check_corpus.sh --projects DIR
runs this). Exit 0 always: the figures are the output.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402

from opkit import emulator  # noqa: E402
from opkit.cannproject import layout  # noqa: E402
from opkit.cannproject.kernel import kernel_source  # noqa: E402
from opkit.cannproject.op import CannOp  # noqa: E402
from opkit.errors import OpkitError  # noqa: E402

GE_CXX = {"DT_FLOAT": "float", "DT_FLOAT16": "half", "DT_BF16": "bfloat16_t", "DT_INT32": "int32_t",
          "DT_INT8": "int8_t", "DT_UINT8": "uint8_t", "DT_INT16": "int16_t", "DT_INT64": "int64_t",
          "DT_BOOL": "bool", "DT_UINT32": "uint32_t", "DT_DOUBLE": "double"}
F = "torch.nn.functional"
# snake op name -> (reference over the inputs in OpDef order, attrs by name)
REFERENCES = {
    "add": lambda x, y, **a: x + y, "add_custom": lambda x, y, **a: x + y, "sub": lambda x, y, **a: x - y,
    "mul": lambda x, y, **a: x * y, "div": lambda x, y, **a: x / y, "abs": lambda x, **a: x.abs(),
    "exp": lambda x, **a: x.exp(), "log": lambda x, **a: x.log(), "sqrt": lambda x, **a: x.sqrt(),
    "rsqrt": lambda x, **a: x.rsqrt(), "sigmoid": lambda x, **a: x.sigmoid(), "tanh": lambda x, **a: x.tanh(),
    "relu": lambda x, **a: x.relu(), "gelu": lambda x, **a: torch.nn.functional.gelu(x),
    "silu": lambda x, **a: torch.nn.functional.silu(x), "asinh": lambda x, **a: torch.asinh(x),
    "acosh": lambda x, **a: torch.acosh(x), "atanh": lambda x, **a: torch.atanh(x),
    "sinh": lambda x, **a: torch.sinh(x), "cosh": lambda x, **a: torch.cosh(x), "sin": lambda x, **a: x.sin(),
    "cos": lambda x, **a: x.cos(), "tan": lambda x, **a: x.tan(), "atan": lambda x, **a: x.atan(),
    "asin": lambda x, **a: x.asin(), "acos": lambda x, **a: x.acos(), "erf": lambda x, **a: torch.erf(x),
    "erfc": lambda x, **a: torch.erfc(x), "floor": lambda x, **a: x.floor(), "ceil": lambda x, **a: x.ceil(),
    "neg": lambda x, **a: -x, "reciprocal": lambda x, **a: 1 / x, "square": lambda x, **a: x * x,
    "softplus": lambda x, **a: torch.nn.functional.softplus(x), "mish": lambda x, **a: torch.nn.functional.mish(x),
    "hardsigmoid": lambda x, **a: torch.nn.functional.hardsigmoid(x),
    "hardswish": lambda x, **a: torch.nn.functional.hardswish(x),
    "squared_difference": lambda x, y, **a: (x - y) ** 2, "xlogy": lambda x, y, **a: torch.xlogy(x, y),
    "lerp": lambda x, y, w, **a: torch.lerp(x, y, w), "addcmul": lambda x, t1, t2, value=1.0, **a: x + value * t1 * t2,
    "addcdiv": lambda x, t1, t2, value=1.0, **a: x + value * t1 / t2,
    "leaky_relu": lambda x, negative_slope=0.01, alpha=None, **a: torch.nn.functional.leaky_relu(
        x, alpha if alpha is not None else negative_slope),
    "fmax": lambda x, y, **a: torch.fmax(x, y), "fmin": lambda x, y, **a: torch.fmin(x, y),
    "heaviside": lambda x, y, **a: torch.heaviside(x, y), "maximum": lambda x, y, **a: torch.maximum(x, y),
    "minimum": lambda x, y, **a: torch.minimum(x, y), "log1p": lambda x, **a: torch.log1p(x),
    "expm1": lambda x, **a: torch.expm1(x), "softsign": lambda x, **a: torch.nn.functional.softsign(x),
    "softmax": lambda x, **a: torch.softmax(x, -1),
}
POSITIVE = {"log", "sqrt", "rsqrt", "acosh", "xlogy", "reciprocal", "addcdiv", "div"}
UNIT = {"asin", "acos", "atanh"}


def dtype_defines(project: layout.Project) -> dict[str, str]:
    """DTYPE_<NAME> from the first DataType entry of each Input/Output in the op_host text."""
    out = {}
    for p in project.host_sources:
        text = p.read_text(errors="replace")
        for m in re.finditer(r'(?:Input|Output)\s*\(\s*"(\w+)"\s*\)(.*?)(?=(?:Input|Output|Attr)\s*\(|$)', text, re.S):
            dt = re.search(r"DataType\s*\(\s*\{\s*(?:ge::)?(DT_\w+)", m.group(2))
            if dt and dt.group(1) in GE_CXX:
                out[m.group(1)] = GE_CXX[dt.group(1)]
    return out


def kind_of(stderr: str) -> str:
    first = next((ln for ln in stderr.splitlines() if "error:" in ln or "fatal error" in ln), stderr[-200:])
    msg = first.split("error:", 1)[-1].strip()
    for pat, fmt in ((r"([\w./]+): No such file or directory", "missing header {0}"),
                     (r"‘([\w:]+)’ was not declared in this scope", "undeclared name {0}"),
                     (r"‘([\w:]+)’ has not been declared", "undeclared name {0}"),
                     (r"‘([\w:]+)’ is not a member of ‘([\w:]+)’", "{1} has no {0}"),
                     (r"no matching function for call to ‘([\w:]+)", "no matching overload of {0}"),
                     (r"has no member named ‘(\w+)’", "no member {0}"),
                     (r"‘([\w:]+)’ does not name a type", "unknown type {0}"),
                     (r"no match for ‘operator", "operator not defined"),
                     (r"invalid conversion", "invalid conversion"),
                     (r"expected", "syntax after macro expansion")):
        m = re.search(pat, msg)
        if m:
            return fmt.format(*m.groups())
    return msg[:80]


def compiles(project: layout.Project, op_type: str, work: Path) -> tuple[bool, str]:
    try:
        kernel = project.kernel_file(op_type)
    except OpkitError:
        return False, "no kernel file for the op"
    header = project.tiling_header(op_type)
    defs = dtype_defines(project)
    flags = [f"-D{k}={v}" for n, v in defs.items() for k in (f"DTYPE_{n.upper()}", f"ORIG_DTYPE_{n.upper()}")]
    try:
        name, _ = layout.entry(kernel, op_type)
    except OpkitError as e:
        return False, str(e).split(": ", 1)[-1][:80]
    # the translation unit opkit import builds (kernel_operator.h, the op_host tiling header, the kernel file)
    src = kernel_source(kernel.resolve(), name, header.resolve() if header else None)
    cmd = ["g++", "-fsyntax-only", "-w", *emulator.cflags(), f"-DOPKIT_CANN_OP_TYPE={op_type}", *flags,
           f"-I{project.op_kernel}", f"-I{project.root}", "-x", "c++", "-"]
    r = subprocess.run(cmd, input=src, capture_output=True, text=True, timeout=300)
    if r.returncode == 0:
        return True, ""
    # Device builds define ASSERT(x) as nothing; CANN's CPU-debug headers as assert(x), an expression (asc-devkit
    # impl/basic_api/kernel_macros.h), which the emulator matches. A kernel that compiles only with the device
    # meaning (`this->n = n ASSERT(...)`) fails CANN's own CPU-debug build the same way: measured, not guessed.
    if "ASSERT" in kernel.read_text(errors="replace"):
        again = subprocess.run([*cmd[:-3], "-DASSERT(x)=", *cmd[-3:]], input=src, capture_output=True, text=True,
                               timeout=300)
        if again.returncode == 0:
            return False, CPU_DEBUG_ASSERT
    return False, kind_of(r.stderr)


CPU_DEBUG_ASSERT = "ASSERT written for device builds (fails CANN's CPU-debug build too)"


def inputs_for(name: str, n: int, shape, dtype) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    xs = []
    for _ in range(n):
        x = torch.randn(shape, generator=g, dtype=torch.float32)
        if name in POSITIVE:
            x = x.abs() + 0.5
        if name in UNIT:
            x = x.clamp(-0.9, 0.9)
        if name == "acosh":
            x = x + 1.0
        xs.append(x.to(dtype))
    return xs


def computes_right(project: layout.Project, op_type: str, work: Path) -> tuple[str, str]:
    name = layout.cann_snake(op_type).removesuffix("_custom")
    ref = REFERENCES.get(name)
    if ref is None:
        return "no reference", ""
    op = None
    try:
        op = CannOp(project, op_type, work)
        attrs = {a["name"]: a["default"] for a in op.info["attrs"]}
        done = []
        for col in op.columns():
            dname = {0: "float32", 1: "float16", 27: "bfloat16"}.get(col.get(op.input_names[0]))
            if dname is None or dname in done:
                continue
            done.append(dname)
            dtype = getattr(torch, dname)
            for shape in ((8, 2048), (3, 77)):
                xs = inputs_for(name, len(op.input_names), shape, dtype)
                got = op(xs, attrs)[0]
                want = ref(*[x.float() for x in xs], **attrs)
                tol = 1e-4 if dname == "float32" else 1e-2
                if not torch.allclose(got.float(), want.float(), rtol=tol, atol=tol * 0.1 if tol < 1e-3 else tol,
                                      equal_nan=True):
                    bad = (got.float() - want.float()).abs().nan_to_num(1e30).argmax().item()
                    return "wrong", (f"{dname} {shape}: element {bad} is {got.reshape(-1)[bad].item():.6g}, "
                                     f"reference {want.reshape(-1)[bad].item():.6g}")
        return ("right", "") if done else ("no reference", "no floating dtype column")
    except OpkitError as e:
        s = str(e)
        return "run failed", s.splitlines()[0][:160] + (" " + s.splitlines()[1].strip()[:200] if "\n" in s else "")
    except Exception as e:  # noqa: BLE001 - an emulator rule or a crash: the survey records it
        return "run failed", f"{type(e).__name__}: {str(e)[:200]}"
    finally:
        if op is not None:
            op.close()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--json", default=None)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    root = Path(args.dir).resolve()
    projects = sorted({p.parent for p in root.rglob("op_host") if p.is_dir() and (p.parent / "op_kernel").is_dir()})
    items = [(layout.Project(p, p / "op_host", p / "op_kernel"), t) for p in projects
             for t in layout.Project(p, p / "op_host", p / "op_kernel").op_types()]
    work = Path(tempfile.mkdtemp(prefix="opkit-cann-survey-"))
    print(f"cann_survey: {len(projects)} projects, {len(items)} ops under {root}", flush=True)

    def one(i_item):
        i, (project, op_type) = i_item
        w = work / str(i)
        ok, why = compiles(project, op_type, w)
        right, detail = computes_right(project, op_type, w) if ok else ("", "")
        rec = {"project": str(project.root.relative_to(root)), "op": op_type, "compiles": ok, "compile_error": why,
               "result": right, "detail": detail}
        print(f"[{i + 1}/{len(items)}] {rec['project']} {op_type}: "
              f"{'compiles' if ok else 'COMPILE: ' + why}{'; ' + right if right else ''}"
              f"{' (' + detail + ')' if detail else ''}", flush=True)
        return rec

    with ThreadPoolExecutor(max_workers=args.jobs) as ex:
        recs = list(ex.map(one, enumerate(items)))
    n = len(recs)
    comp = sum(r["compiles"] for r in recs)
    tried = [r for r in recs if r["result"] in ("right", "wrong", "run failed")]
    right = sum(r["result"] == "right" for r in tried)
    cpu_debug = sum(r["compile_error"] == CPU_DEBUG_ASSERT for r in recs)
    print(f"cann_survey: {n} ops; compile unchanged {comp} ({100 * comp / max(n, 1):.0f}%), {cpu_debug} more fail "
          f"CANN's own CPU-debug build the same way ({100 * comp / max(n - cpu_debug, 1):.0f}% of the "
          f"{n - cpu_debug} that build there); with a reference {len(tried)}, computed right {right}, "
          f"wrong {sum(r['result'] == 'wrong' for r in tried)}, "
          f"run failed {sum(r['result'] == 'run failed' for r in tried)}")
    for k, c in Counter(r["compile_error"] for r in recs if not r["compiles"]).most_common():
        print(f"  compile failure x{c}: {k}")
    for k, c in Counter(r["detail"].split(":")[0] if r["result"] == "run failed" else "wrong result"
                        for r in tried if r["result"] != "right").most_common():
        print(f"  run x{c}: {k}")
    if args.json:
        Path(args.json).write_text(json.dumps(recs, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
