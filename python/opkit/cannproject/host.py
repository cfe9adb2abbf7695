"""The host runner of one CANN project: its op_host/*.cpp compiled unchanged against opkit's CPU stand-in of
CANN's host API (include/: gert::TilingContext, ops::OpDef, platform_ascendc, tilingdata_base.h,
template_argument.h) plus runtime/runner.cpp, run as a child process (a crash in the op's host code cannot take
Python down). `describe()` returns the registered OpDefs; `run()` one call's tiling."""
from __future__ import annotations

import hashlib
import json
import subprocess
import threading
import time
from pathlib import Path

from ..emulator import host_include_dir
from ..errors import OpkitError
from .layout import Project

HERE = Path(__file__).resolve().parent
INCLUDE = HERE / "include"
RUNNER = HERE / "runtime" / "runner.cpp"


def _digest(paths: list[Path], extra: str) -> str:
    h = hashlib.sha256(extra.encode())
    for p in paths:
        h.update(str(p).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _dirs(p: Project | None) -> list[str]:
    """The include folders a project's own host sources get after the common ones: its op_host, op_kernel and
    root, and its category folder -- ops-nn compiles tiling sources with ${op_host}/../../ on the path (ops-nn@
    e5c3fa93 cmake/func.cmake:478; experimental/activation/swish includes "swish/op_kernel/swish_tiling_data.h")."""
    return [] if p is None else [f"-I{d}" for d in (p.op_host, p.op_kernel, p.root, p.root.parent)]


def _object(src: Path, flags: list[str], headers: str, where: Path) -> Path:
    """`src` compiled to an object, cached by its text, flags and headers: opbase's host library and a shared
    dependency (ops-nn foreach_utils) are compiled once for every op that links them, not once per op."""
    obj = where / f"{src.stem}_{_digest([src], ' '.join(flags) + headers)}.o"
    if obj.exists():
        return obj
    where.mkdir(parents=True, exist_ok=True)
    tmp = obj.with_name(obj.name + f".{threading.get_ident()}.tmp")
    r = subprocess.run(["g++", *flags, "-c", str(src), "-o", str(tmp)], capture_output=True, text=True)
    if r.returncode != 0:
        tmp.unlink(missing_ok=True)
        errors = [ln for ln in r.stderr.splitlines() if "error" in ln][:8]
        raise OpkitError("the op_host sources do not compile against opkit's CPU stand-in of CANN's host API "
                         "(docs/cann.md lists what it has):\n  " + "\n  ".join(errors or r.stderr.splitlines()[-8:]))
    tmp.replace(obj)
    return obj


def build_runner(project: Project, out_dir: Path) -> Path:
    """Compile (or reuse) the runner for this project; raises OpkitError with g++'s first errors. Each source is
    compiled with opkit's stand-ins of the toolkit's headers first (they serve log/log.h too), then CANN's
    libraries (libs.py), then the folders of the project it belongs to (the op, a folder it depends on, none for
    opbase's library); objects are cached (_object)."""
    if not project.host_sources:
        raise OpkitError(f"{project.op_host}: no op_host sources (.cpp)")
    from ..toolchain.cache import cache_root
    common = ["-std=c++17", "-O1", "-g0", "-w", f"-I{INCLUDE}", f"-I{host_include_dir()}",
              *(f"-I{d}" for d in project.libs.host_include)]
    stand_in = _digest(sorted(INCLUDE.rglob("*.h")), "")
    deps = project.dependencies()
    groups = [(None, [RUNNER, *project.libs.host_sources], [])]
    # the op's own sources also see its dependencies' op_host folders: ops-nn's one tiling library has every
    # module's ${source_dir} on its path (func.cmake:478; foreach_add_list_tiling_arch22.cpp includes
    # "foreach_tiling_class.h" from foreach_utils/op_host)
    groups.append((project, project.own_host_sources, [f"-I{d.op_host}" for d in deps]))
    groups += [(d, d.own_host_sources, []) for d in deps]
    cache = cache_root() / "cann_host_objects"
    objects = []
    try:
        for p, sources, more in groups:
            headers = stand_in + ("" if p is None else _digest(
                [h for q in [p, *(deps if p is project else [])] for d in (q.op_host, q.op_kernel)
                 for h in sorted(d.rglob("*.h"))], ""))
            objects += [_object(src, common + _dirs(p) + more, headers, cache) for src in sources]
    except OpkitError as e:
        raise OpkitError(f"{project.op_host}: {e}") from None
    out_dir.mkdir(parents=True, exist_ok=True)
    exe = out_dir / f"host_runner_{_digest([], ' '.join(map(str, objects)))}"
    if exe.exists():
        return exe
    tmp = Path(str(exe) + ".tmp")
    r = subprocess.run(["g++", *map(str, objects), "-o", str(tmp)], capture_output=True, text=True)
    if r.returncode != 0:
        errors = [ln for ln in r.stderr.splitlines() if "error" in ln or "undefined" in ln][:8]
        raise OpkitError(f"{project.op_host}: the op_host objects do not link:\n  " + "\n  ".join(errors))
    tmp.rename(exe)
    return exe


class HostRunner:
    """One runner process; requests are serialised (a lock), responses are JSON lines."""

    def __init__(self, exe: Path, project: Project):
        self.exe, self.project = exe, project
        self._lock = threading.Lock()
        self._proc = None

    def _start(self):
        self._proc = subprocess.Popen([str(self.exe)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, bufsize=1)
        self._err: list[str] = []
        threading.Thread(target=self._drain, args=(self._proc,), daemon=True).start()

    def _drain(self, proc):
        for line in proc.stderr:
            self._err.append(line.rstrip())
            del self._err[:-40]

    def request(self, line: str) -> dict:
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._start()
            self._proc.stdin.write(line + "\n")
            self._proc.stdin.flush()
            out = self._proc.stdout.readline()
            if not out:
                code = self._proc.wait()
                what = f"signal {-code}" if code < 0 else f"exit code {code}"
                tail = "\n    ".join(self._err[-6:])
                self._proc = None
                raise OpkitError(f"{self.project.op_host}: the op's host code crashed ({what}) on request "
                                 f"`{line[:160]}`" + (f"; its last output:\n    {tail}" if tail else ""))
            return json.loads(out)

    def take_log(self) -> list[str]:
        """The host code's log lines since the last call (OP_LOGE / OP_LOGW of opkit_cann/log.h go to stderr)."""
        time.sleep(0.05)   # the drain thread reads stderr, which may trail the stdout response
        out, self._err[:] = list(self._err), []
        return out

    def describe(self) -> dict:
        return self.request("describe")

    def close(self):
        if self._proc is not None and self._proc.poll() is None:
            self._proc.stdin.close()
            self._proc.wait(timeout=10)
        self._proc = None


def _attr_token(kind: str, value) -> str:
    if value is None:
        return "-"
    if kind == "int":
        return f"i {int(value)}"
    if kind == "float":
        return f"f {float(value)!r}"
    if kind == "bool":
        return f"b {int(bool(value))}"
    if kind == "str":
        return f"s {str(value).encode().hex() or '-'}"
    if kind == "list_int":
        return f"li {len(value)} " + " ".join(str(int(v)) for v in value)
    if kind == "list_float":
        return f"lf {len(value)} " + " ".join(repr(float(v)) for v in value)
    if kind == "list_bool":
        return f"lb {len(value)} " + " ".join(str(int(bool(v))) for v in value)
    raise OpkitError(f"attr kind {kind} is not supported")


def request_line(op_type: str, profile: str, inputs: list[tuple[int, tuple[int, ...], bytes | None]],
                 outputs: list[tuple[int, tuple[int, ...]]], attrs: list[tuple[str, object]],
                 ir_counts: list[int]) -> str:
    """inputs: (ge dtype, shape, data for value-depend inputs); outputs: (ge dtype, shape guess);
    attrs: (kind, value) in OpDef order; ir_counts: tensors per IR input (0 = absent optional)."""
    toks = ["run", op_type, profile, str(len(ir_counts)), *map(str, ir_counts), str(len(inputs))]
    for dt, shape, data in inputs:
        toks += [str(dt), "2", str(len(shape)), *map(str, shape), str(len(data or b"")), (data or b"").hex() or "-"]
    toks.append(str(len(outputs)))
    for dt, shape in outputs:
        toks += [str(dt), "2", str(len(shape)), *map(str, shape)]
    toks.append(str(len(attrs)))
    toks += [_attr_token(k, v) for k, v in attrs]
    return " ".join(toks)
