"""A CANN `.asc` program (host `main` with the ACL runtime, host tiling, the kernel and a
`kernel<<<blockDim, l2ctrl, stream>>>(args)` launch in one file) compiled unchanged with g++ against the emulator
and run on the CPU: `opkit run-asc` (docs/emulator.md, "CANN `.asc` programs").

The one source transform: `<<<>>>` is not C++, so each launch `K<<<CFG>>>(ARGS)` becomes
`::opkit_acl::launch_config("K", __FILE__, __LINE__, CFG).run([](auto... a_) { K(a_...); }, ARGS)` in place (a
lambda, not `K` itself: a template kernel's `K<...>` names an overload set, which does not deduce) (acl/acl_rt.h queues it on the
stream and runs it over blockDim blocks with the emulator's rules when the stream is synchronized). Nothing else
changes and no line is added or removed, and a `#line 1 "FILE"` on top keeps every diagnostic at the user's file and
line. Qualifiers as CANN's compiler reads them: `__global__ __vector__` / `__aicore__` kernels run on the vector
unit; `__cube__` and `__mix__(...)` kernels need the cube unit, which the emulator does not run (a named error).

What the build gives the program, after CANN's CPU mode of a `.asc` (asc-devkit 82b89a15
cmake/asc/asc_modules/CMakeASCInformation.cmake:197-250: C++17, `-D__NPU_ARCH__=2201`, the kernel and host
headers on one path, an ACL stub library): `opkit cflags`, opkit's host stand-in of CANN's host headers first
(`tiling/tiling_api.h`, `register/tilingdata_base.h` as the host sees them: python/opkit/cannproject/include), the
file's own folder (its `data_utils.h`), and `-DOPKIT_ASC_PROGRAM`, with which `acl/acl.h` declares the runtime.
"""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .. import emulator
from ..errors import OpkitError
from .host import INCLUDE as HOST_INCLUDE


class AscError(OpkitError):
    """A `.asc` file that cannot be built or launched here, with the file (and line) at fault."""


def _mask(src: str) -> str:
    """`src` with comments, string and character literals blanked (same length, newlines kept), so that
    searching for `<<<` or a qualifier never matches inside them."""
    out = list(src)
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c in "\"'":
            if c == "'" and _digit_separator(src, i):  # 1'000 (C++14): not a character literal
                i += 1
                continue
            if c == '"' and i > 0 and src[i - 1] == "R":  # raw string R"d(...)d"
                m = re.match(r'"([^(\s]*)\(', src[i:])
                if m:
                    end = src.find(")" + m.group(1) + '"', i)
                    j = n if end < 0 else end + len(m.group(1)) + 2
                    for k in range(i + 1, j):
                        if out[k] != "\n":
                            out[k] = " "
                    i = j
                    continue
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            for k in range(i + 1, j - 1):
                if out[k] != "\n":
                    out[k] = " "
            i = j
            continue
        else:
            i += 1
            continue
        for k in range(i, j):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def _digit_separator(src: str, i: int) -> bool:
    """Whether the `'` at `i` separates digits (`1'000`, `0xFF'FF`): the token before it starts with a digit.
    A prefix (`L'a'`, `u8'a'`) is a letter token, so its `'` still opens a character literal."""
    j = i
    while j > 0 and (src[j - 1].isalnum() or src[j - 1] in "_'"):
        j -= 1
    return j < i and src[j].isdigit()


def _line(src: str, pos: int) -> int:
    return src.count("\n", 0, pos) + 1


def _callee_start(masked: str, end: int) -> int:
    """Start of the kernel expression ending just before `end` (`name`, `ns::name`, `name<T, 4>`)."""
    i = end
    while i > 0 and masked[i - 1] in " \t\r\n":
        i -= 1
    if i > 0 and masked[i - 1] == ">":  # template arguments: match the angle brackets back
        depth = 0
        while i > 0:
            i -= 1
            if masked[i] == ">":
                depth += 1
            elif masked[i] == "<":
                depth -= 1
                if depth == 0:
                    break
        while i > 0 and masked[i - 1] in " \t\r\n":
            i -= 1
    while i > 0 and (masked[i - 1].isalnum() or masked[i - 1] in "_:"):
        i -= 1
    return i


_CUBE = re.compile(r"\b__global__\s+(__cube__|__mix__\s*\([^)]*\))|\b(__cube__|__mix__\s*\([^)]*\))\s+__global__")


@dataclass
class Launch:
    kernel: str
    line: int


def transform(src: str, path: Path) -> tuple[str, list[Launch]]:
    """The program as g++ compiles it: every `<<<>>>` launch rewritten in place, `#line` on top. Raises AscError
    for a file with no launch or with a cube / mix kernel."""
    masked = _mask(src)
    m = _CUBE.search(masked)
    if m:
        what = (m.group(1) or m.group(2)).split("(")[0]
        raise AscError(f"{path}:{_line(src, m.start())}: a `{what}` kernel runs on the cube unit (AIC), which the "
                       "emulator does not run; only `__global__ __vector__` / `__aicore__` (vector) kernels do")
    out, launches, last = [], [], 0
    for m in re.finditer(r"<<<", masked):
        close = masked.find(">>>", m.end())
        if close < 0:
            raise AscError(f"{path}:{_line(src, m.start())}: `<<<` without a closing `>>>`")
        paren = re.match(r"\s*\(", masked[close + 3:])
        start = _callee_start(masked, m.start())
        kernel = re.sub(r"\s+", "", src[start:m.start()])
        if not paren or not kernel:
            raise AscError(f"{path}:{_line(src, m.start())}: not a kernel launch `kernel<<<blockDim, l2ctrl, "
                           "stream>>>(args)`")
        after = close + 3 + paren.end()
        empty = re.match(r"\s*\)", masked[after:]) is not None
        out += [src[last:start],
                f'::opkit_acl::launch_config("{kernel}", __FILE__, __LINE__, {src[m.end():close]})'
                f".run([](auto... a_) {{ {kernel}(a_...); }}",
                "" if empty else ", "]
        launches.append(Launch(kernel, _line(src, m.start())))
        last = after
    if not launches:
        raise AscError(f"{path}: no kernel launch `kernel<<<blockDim, l2ctrl, stream>>>(args)` in the file; "
                       "`opkit run-asc` runs a CANN .asc program (a CPU-debug program with ICPU_RUN_KF builds with "
                       "`g++ $(opkit cflags)`, docs/emulator.md)")
    out.append(src[last:])
    quoted = str(path).replace("\\", "\\\\").replace('"', '\\"')
    return f'#line 1 "{quoted}"\n' + "".join(out), launches


def flags(path: Path, defines: list[str] | None = None) -> list[str]:
    """g++ flags of a `.asc` program (module docstring); `defines` (NAME or NAME=VALUE) are the compile definitions
    a sample's CMakeLists.txt adds (`target_compile_definitions(demo PRIVATE SCENARIO_NUM=...)`)."""
    for d in defines or []:
        if not re.fullmatch(r"[A-Za-z_]\w*(=.*)?", d):
            raise AscError(f"-D {d!r}: expected NAME or NAME=VALUE")
    return [f"-I{HOST_INCLUDE}", *emulator.cflags(), f"-iquote{path.parent}", "-DOPKIT_ASC_PROGRAM=1",
            *(f"-D{d}" for d in defines or []), "-O1"]


_UNDECLARED = re.compile(r"^(?P<loc>[^:\n]+:\d+):\d+: error: ['\u2018](?P<name>acl\w*)['\u2019] was not declared in "
                         r"this scope", re.M)


def _explain(stderr: str) -> str:
    """g++'s first errors, and a plain sentence for an ACL function the runtime does not have."""
    lines = [ln for ln in stderr.splitlines() if ": error:" in ln or ": fatal error:" in ln]
    notes = []
    for m in _UNDECLARED.finditer(stderr):
        note = (f"{m.group('loc')}: the ACL function {m.group('name')} is not implemented by opkit's ACL runtime "
                "(python/opkit/emulator/include/acl/acl_rt.h)")
        if note not in notes:
            notes.append(note)
    return "\n".join(notes + lines[:8]) or stderr[-2000:]


def build(path: Path, work: Path | None = None, defines: list[str] | None = None) -> Path:
    """Compile the `.asc` file into a host program; returns the executable. Cached by the transformed source and
    flags, and reused only while every file the compile read (g++'s dependency list: the program's own headers
    such as its data_utils.h, opkit's, the system's) has the content it had then."""
    path = Path(path).resolve()
    if not path.is_file():
        raise AscError(f"{path}: no such file")
    src = path.read_text(encoding="utf-8", errors="replace")
    tu, _ = transform(src, path)
    fl = flags(path, defines)
    digest = hashlib.sha256("\0".join([tu, *fl]).encode()).hexdigest()[:16]
    work = Path(work) if work else _cache() / "asc"
    work.mkdir(parents=True, exist_ok=True)
    exe = work / f"{path.stem}-{digest}"
    manifest = exe.with_name(exe.name + ".deps")
    if exe.is_file() and _deps_unchanged(manifest):
        return exe
    tmp = exe.with_suffix(f".tmp{os.getpid()}")
    cpp = tmp.with_suffix(tmp.suffix + ".cpp")  # per process: two builds of one program never share a file
    cpp.write_text(tu, encoding="utf-8")
    depfile = tmp.with_suffix(tmp.suffix + ".d")
    r = subprocess.run(["g++", *fl, "-MD", "-MF", str(depfile), "-x", "c++", str(cpp), "-o", str(tmp),
                        *emulator.cflags(libs=True)], capture_output=True, text=True)
    cpp.unlink(missing_ok=True)
    if r.returncode != 0:
        depfile.unlink(missing_ok=True)
        raise AscError(f"{path}: does not compile on the emulator:\n{_explain(r.stderr)}")
    deps = [d for d in _read_depfile(depfile) if d != str(cpp)]
    depfile.unlink(missing_ok=True)
    hashes = [(_file_hash(d), d) for d in deps]
    manifest.unlink(missing_ok=True)  # the old manifest never vouches for the new executable
    tmp.replace(exe)
    if deps and all(h != "-" for h, _ in hashes):  # a dependency it cannot read again: no manifest, rebuilt next time
        part = manifest.with_suffix(f".tmp{os.getpid()}")
        part.write_text("".join(f"{h} {d}\n" for h, d in hashes), encoding="utf-8")
        part.replace(manifest)
    return exe


def _read_depfile(depfile: Path) -> list[str]:
    """The prerequisites of g++'s `-MD` file (make syntax: `target: a b \\` continued; `\\ `, `\\#` and `$$` escape a
    space, `#` and `$` in a name)."""
    text = depfile.read_text(encoding="utf-8", errors="replace").replace("\\\n", " ")
    body = text.split(":", 1)[1] if ":" in text else ""
    names = re.findall(r"(?:\\ |[^\s])+", body)
    return sorted({n.replace("\\ ", " ").replace("\\#", "#").replace("$$", "$") for n in names})


def _file_hash(p: str) -> str:
    try:
        return hashlib.sha256(Path(p).read_bytes()).hexdigest()
    except OSError:
        return "-"


def _deps_unchanged(manifest: Path) -> bool:
    if not manifest.is_file():
        return False
    lines = manifest.read_text(encoding="utf-8").splitlines()
    if not lines:
        return False
    for line in lines:
        h, _, name = line.partition(" ")
        if _file_hash(name) != h:
            return False
    return True


def run(path: Path, args: list[str] | None = None, cwd: Path | None = None, work: Path | None = None,
        defines: list[str] | None = None, timeout: float | None = None) -> int:
    """Build and run the program in `cwd` (default: the file's folder); its output goes to the terminal.
    Returns its exit status (a rule violation: 1, with the violation on stderr)."""
    exe = build(path, work, defines)
    where = Path(cwd) if cwd else Path(path).resolve().parent
    if not where.is_dir():
        raise AscError(f"--cwd {where}: no such folder")
    return subprocess.run([str(exe), *(args or [])], cwd=where, timeout=timeout).returncode


def _cache() -> Path:
    from ..toolchain.cache import cache_root
    return cache_root()
