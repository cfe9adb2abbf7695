#!/usr/bin/env python3
"""CANN's own `.asc` examples on the emulator (opt-in, not CI; docs/emulator.md "CANN `.asc` programs").

    python scripts/asc_examples.py ASC_DEVKIT [--only REGEX] [--json F] [--list]

ASC_DEVKIT is a checkout of asc-devkit (github cann/asc-devkit or its mirror). For every example folder under
examples/01_simd_cpp_api/{00_introduction,03_basic_api,04_advanced_api} holding a `.asc` file, as its README.md
says to run it, in a scratch copy (the checkout is never written): `mkdir build && cd build`, the README's
`python3 ../scripts/gen_data.py ...` line, the program (here `opkit run-asc ../X.asc --cwd .`, with the compile
definitions its CMakeLists.txt adds, e.g. SCENARIO_NUM from the README's `SCENARIO_NUM=N`, and the arguments of its
`./demo ...` line), then the example's
own judgement: the README's `python3 ../scripts/verify_result.py ...` line (exit 0 and "pass" printed), or, where
the README has none, the program's own printed verdict ("test pass" and no "fail"). Four examples print no
verdict at all (hello_world, ...): they count as run, "no verdict".

Counted apart, with the reason: examples whose README does not list Atlas A2 (Ascend 950 only), the cube ones
(paths with 00_matmul / 03_matrix_compute / 02_matrix / matmul, or a `__cube__` / `__mix__` kernel) and the
register-based `reg_compute` ones (arch 3510).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FOLDERS = ("00_introduction", "03_basic_api", "04_advanced_api")
BASE = Path("examples/01_simd_cpp_api")
TIMEOUT = 300


def examples(root: Path) -> list[Path]:
    out = set()
    for f in FOLDERS:
        for asc in (root / BASE / f).rglob("*.asc"):
            out.add(asc.parent)
    return sorted(out)


def skip_reason(d: Path, rel: str) -> str | None:
    readme = (d / "README.md").read_text(errors="replace") if (d / "README.md").is_file() else ""
    src = "\n".join(p.read_text(errors="replace") for p in d.glob("*.asc"))
    if "reg_compute" in rel or re.search(r"(^|/)reg_", rel):
        return "reg_compute (register API, arch 3510)"
    if re.search(r"00_matmul|03_matrix_compute|02_matrix|matmul", rel) or re.search(r"__cube__|__mix__", src):
        return "cube (Matmul / cube unit)"
    if "Atlas A2" not in readme:
        return "README does not list Atlas A2 (Ascend 950 only)"
    return None


def run_block(readme: str) -> str:
    """The README's first bash block that runs ./demo."""
    blocks, cur = [], None
    for line in readme.splitlines():
        if line.strip().startswith("```"):  # fences pair in order, whatever their language tag
            if cur is None:
                cur = []
            else:
                blocks.append("\n".join(cur))
                cur = None
        elif cur is not None:
            cur.append(line)
    return next((b for b in blocks if "./demo" in b), "")


def commands(readme: str) -> tuple[dict[str, str], list[str], list[str], list[str]]:
    """(variables set, gen_data lines, verify lines, the program's arguments) of the README's run block, comments
    stripped."""
    block = run_block(readme)
    vars_, gens, verifies, demo_args = {}, [], [], []
    for raw in block.splitlines():
        line = raw.split("#", 1)[0].strip().rstrip(";").strip()
        m = re.fullmatch(r"([A-Z_][A-Z0-9_]*)=(\S+)", line)
        if m:
            vars_.setdefault(m.group(1), m.group(2))
        if line.startswith("cmake"):  # `cmake -DUSE_SILU_MODE=ON ..`: the options the run block sets
            for name, val in re.findall(r"-D(\w+)=(\S+)", line):
                vars_.setdefault(name, val)
        for part in (p.strip() for p in line.split(";")):
            if re.match(r"python3? \.\./scripts/gen_data\.py", part):
                gens.append(part)
            elif re.match(r"python3? \.\./scripts/verify_result\.py", part):
                verifies.append(part)
            elif re.match(r"\./demo\b", part):
                demo_args = part.split()[1:]
    return vars_, gens, verifies, demo_args


def substitute(text: str, vars_: dict[str, str]) -> str:
    return re.sub(r"\$\{?([A-Z_][A-Z0-9_]*)\}?", lambda m: vars_.get(m.group(1), m.group(0)), text)


def defines(cmake: str, vars_: dict[str, str]) -> list[str]:
    """Compile definitions CMakeLists.txt adds (target_compile_definitions / add_definitions), variables
    substituted; generator expressions are compile options, not definitions."""
    out = []
    # an `if(OPT) ... endif()` on an option the run block leaves OFF adds nothing (swish's USE_SILU_MODE)
    for opt, dflt in re.findall(r"option\s*\(\s*(\w+)\s+\"[^\"]*\"\s+(ON|OFF)\s*\)", cmake):
        if vars_.get(opt, dflt).upper() not in ("ON", "TRUE", "1", "YES"):
            cmake = re.sub(rf"if\s*\(\s*{opt}\s*\).*?endif\s*\([^)]*\)", "", cmake, flags=re.S)
    for m in re.finditer(r"target_compile_definitions\s*\(\s*\S+\s+(?:PRIVATE|PUBLIC|INTERFACE)\s+(.*?)\)", cmake, re.S):
        out += [t for t in m.group(1).split() if not t.startswith("$<")]
    for m in re.finditer(r"add_definitions\s*\((.*?)\)", cmake, re.S):
        out += [t[2:] for t in m.group(1).split() if t.startswith("-D")]
    # a variable the README does not set keeps CMakeLists.txt's own default: set(SCENARIO_NUM "1" CACHE STRING ...)
    known = {m.group(1): m.group(2) for m in re.finditer(r'set\s*\(\s*(\w+)\s+"?([^"\s)]*)"?\s+CACHE', cmake)}
    known.update(vars_)
    return [re.sub(r"\$\{(\w+)\}", lambda m: known.get(m.group(1), ""), d) for d in out]


def sources(cmake: str, d: Path) -> list[str]:
    m = re.search(r"add_executable\s*\(\s*\S+\s+(.*?)\)", cmake, re.S)
    named = [t for t in (m.group(1).split() if m else []) if t.endswith(".asc")]
    return named or sorted(p.name for p in d.glob("*.asc"))


def compile_cause(text: str) -> str:
    for pat, fmt in [
        (r"not supported on the emulator: ([\w:]+)", "rejected: {}"),
        (r"the ACL function (\w+) is not implemented", "ACL function {} missing"),
        (r"fatal error: ([^:\s]+): No such file", "header {} missing"),
        (r"'(?:class )?([\w:]+)' (?:is|has) not (?:a member of|been declared in) 'AscendC(?:::\w+)*'", "needs AscendC::{}"),
        (r"'(\w+)' in namespace 'AscendC(?:::\w+)*' does not name a (?:template )?type", "needs AscendC::{}"),
        (r"'([\w:]+)' is not a member of 'AscendC(?:::\w+)*'", "needs AscendC::{}"),
        (r"'([\w:]+)' (?:was not declared in this scope|has not been declared|does not name a type)", "undeclared {}"),
        (r"runs on the cube unit", "cube kernel"),
        (r"no matching function for call to '([\w:]+)", "no matching {}"),
    ]:
        m = re.search(pat, text.replace("\u2018", "'").replace("\u2019", "'"))
        if m:
            return fmt.format(m.group(1)) if "{}" in fmt else fmt
    first = next((ln for ln in text.splitlines() if "error:" in ln), text.strip().splitlines()[-1] if text.strip() else "")
    if "error:" not in first:
        first = next((ln for ln in text.splitlines()[1:] if ln.strip()), first)
    return "other: " + re.sub(r"^.*?error: ", "", first)[:120]


def run_one(root: Path, d: Path, work: Path, python: str) -> dict:
    rel = str(d.relative_to(root / BASE))
    rec = {"example": rel, "folder": rel.split("/")[0], "compiled": False, "ran": False, "right": False}
    why = skip_reason(d, rel)
    if why:
        rec.update(skipped=why)
        return rec
    readme = (d / "README.md").read_text(errors="replace")
    cmake = (d / "CMakeLists.txt").read_text(errors="replace") if (d / "CMakeLists.txt").is_file() else ""
    vars_, gens, verifies, demo_args = commands(readme)
    srcs = sources(cmake, d)
    if len(srcs) != 1:
        rec.update(cause=f"{len(srcs)} .asc sources in one program (run-asc takes one)")
        return rec
    w = work / rel.replace("/", "__")
    shutil.copytree(d, w)
    b = w / "build"
    b.mkdir()
    env = dict(os.environ)
    for g in gens:
        argv = substitute(g, vars_).split()
        r = subprocess.run([python, *argv[1:]], cwd=b, capture_output=True, text=True, timeout=TIMEOUT, env=env)
        if r.returncode != 0:
            m = re.search(r"No module named '([\w.]+)'", r.stderr)
            rec.update(cause=f"gen_data needs python package {m.group(1).split('.')[0]}" if m
                       else "gen_data failed: " + (r.stderr.strip().splitlines() or ["?"])[-1][:120])
            return rec
    cmd = [python, "-m", "opkit", "run-asc", f"../{srcs[0]}", "--cwd", "."]
    for df in defines(cmake, vars_):
        cmd += ["-D", df]
    if demo_args:  # the README's `./demo $TESTCASE`
        cmd += ["--", *(substitute(x, vars_) for x in demo_args)]
    t0 = time.time()
    # own session: on a timeout the program (opkit's child) is killed with the CLI
    p = subprocess.Popen(cmd, cwd=b, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    try:
        so, se = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        rec.update(compiled=None, cause=f"timeout after {TIMEOUT} s")
        return rec
    r = subprocess.CompletedProcess(cmd, p.returncode, so, se)
    rec["seconds"] = round(time.time() - t0, 1)
    if "does not compile on the emulator" in r.stderr:
        cause = compile_cause(r.stderr)
        m = re.match(r"needs AscendC::Get(\w+?)(?:MaxMin|Min|Max)TmpSize$", cause)
        if m and not kernel_has(m.group(1)):  # the host query comes with the family, which is missing too
            cause = f"needs {m.group(1)} (its host GetXxxTmpSize and the API)"
        rec.update(cause=cause, detail=r.stderr[-1500:])
        return rec
    rec["compiled"] = True
    viol = re.search(r"opkit emulator: \[([\w-]+)\]", r.stderr)
    if r.returncode != 0 or viol:
        rec.update(cause=f"violation [{viol.group(1)}]" if viol else f"exit {r.returncode}",
                   detail=(r.stderr or r.stdout)[-1500:])
        return rec
    rec["ran"] = True
    if verifies:
        outs = []
        for v in verifies:
            argv = substitute(v, vars_).split()
            vr = subprocess.run([python, *argv[1:]], cwd=b, capture_output=True, text=True, timeout=TIMEOUT, env=env)
            outs.append((vr.returncode, vr.stdout + vr.stderr))
        ok = all(rc == 0 and "pass" in o.lower() for rc, o in outs)
        m = re.search(r"No module named '([\w.]+)'", "".join(o for _, o in outs))
        rec.update(right=ok, judged_by="verify_result.py")
        if not ok:
            rec.update(cause=f"verify needs python package {m.group(1)}" if m else "wrong result (verify_result.py)",
                       detail="\n".join(o for _, o in outs)[-1500:] + r.stderr[-500:])
    else:
        text = r.stdout.lower()
        if "test pass" in text or "fail" in text:
            ok = "test pass" in text and "fail" not in text
            rec.update(right=ok, judged_by="printed verdict")
            if not ok:
                rec.update(cause="wrong result (its printed verdict)", detail=(r.stdout + r.stderr)[-1500:])
        else:
            rec.update(right=None, judged_by="none", cause="no verdict of its own (ran)")
    return rec


def kernel_has(family: str) -> bool:
    """Whether the emulator defines the kernel API `family` (a function of that name in its lib/ or adv_*.h)."""
    inc = Path(__file__).resolve().parents[1] / "python" / "opkit" / "emulator" / "include"
    pat = re.compile(rf"\b{re.escape(family)}\s*(?:<[^;{{]*>)?\s*\(", re.I)
    files = [*inc.glob("lib/**/*.h"), *inc.glob("opkit_emu/adv_*.h")]
    return any(pat.search(f.read_text(errors="replace")) for f in files if "tiling" not in f.name)


def group_of(cause: str) -> str:
    """The cause's family, so that the summary groups them (the issue's owner for each: docs/emulator.md)."""
    m = re.match(r"needs AscendC::Get(\w+?)(?:MaxMin|Min|Max)TmpSize$", cause)
    if m:
        if kernel_has(m.group(1)):
            return "host tiling function missing, the kernel API exists (tiling/tiling_api.h)"
        return "advanced or basic API missing on the emulator"
    if re.match(r"needs |rejected: \w*Tiling$|undeclared \w*Tiling$", cause):
        return "advanced or basic API missing on the emulator"
    if cause.startswith("rejected:"):
        return "rejected by design (not on A2 / not modelled)"
    if cause.startswith("violation"):
        return "stopped by an emulator rule (a finding to check)"
    if "python package" in cause:
        return "data script needs a Python package we lack"
    if cause.startswith("wrong result"):
        return "ran, wrong result"
    if cause.startswith("no verdict"):
        return "ran, no verdict of its own"
    return "other"


def summary(recs: list[dict]) -> str:
    lines = []
    tried = [r for r in recs if "skipped" not in r]
    for f in FOLDERS:
        rs = [r for r in recs if r["folder"] == f]
        t = [r for r in rs if "skipped" not in r]
        judged = [r for r in t if r.get("right") is not None]
        lines.append(f"{f}: {len(rs)} examples, {len(rs) - len(t)} apart; of {len(t)} A2 vector: compiled "
                     f"{sum(bool(r['compiled']) for r in t)}, ran {sum(r['ran'] for r in t)}, right "
                     f"{sum(r['right'] is True for r in t)}" + (f" ({len(t) - len(judged)} without a verdict)"
                                                                if len(t) != len(judged) else ""))
    lines.append(f"total: {len(recs)} examples, {len(recs) - len(tried)} apart; of {len(tried)}: compiled "
                 f"{sum(bool(r['compiled']) for r in tried)}, ran {sum(r['ran'] for r in tried)}, right "
                 f"{sum(r['right'] is True for r in tried)}")
    apart = collections.Counter(r["skipped"] for r in recs if "skipped" in r)
    lines.append("apart: " + "; ".join(f"{k}: {v}" for k, v in apart.most_common()))
    bad = [r for r in tried if r.get("cause") and r.get("right") is not True]
    groups = collections.Counter(group_of(r["cause"]) for r in bad)
    lines.append("causes, grouped:")
    for g, n in groups.most_common():
        causes = collections.Counter(r["cause"] for r in bad if group_of(r["cause"]) == g)
        lines.append(f"  {n:3d}  {g}: " + ", ".join(f"{k}" + (f" ({v})" if v > 1 else "") for k, v in causes.most_common()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("asc_devkit", type=Path)
    ap.add_argument("--only", help="keep the examples whose path (under examples/01_simd_cpp_api) matches REGEX")
    ap.add_argument("--json", type=Path, help="write every example's record here")
    ap.add_argument("--list", action="store_true", help="one line per example")
    a = ap.parse_args(argv)
    root = a.asc_devkit.resolve()
    if not (root / BASE).is_dir():
        ap.error(f"{root}: no {BASE} (not an asc-devkit checkout)")
    ds = [d for d in examples(root) if not a.only or re.search(a.only, str(d.relative_to(root / BASE)))]
    recs = []
    with tempfile.TemporaryDirectory(prefix="asc-examples-") as tmp:
        for d in ds:
            rec = run_one(root, d, Path(tmp), sys.executable)
            recs.append(rec)
            if a.list:
                state = (f"apart ({rec['skipped']})" if "skipped" in rec else
                         "right" if rec["right"] else rec.get("cause", ""))
                print(f"{rec['example']}: {state}", flush=True)
    print(summary(recs))
    if a.json:
        a.json.write_text(json.dumps(recs, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
