"""What a CANN custom-op project holds, for one op type: its op_host sources, the kernel file and entry.

Two layouts (docs/cann.md): msOpGen's (op_host/<op>.cpp with the OpDef and TilingFunc, op_host/<op>_tiling.h
with BEGIN_TILING_DATA_DEF, op_kernel/<op>.cpp) and the ops-math/ops-nn one (op_host/<op>_def.cpp,
op_host/<op>_tiling.cpp, op_kernel/<op>.cpp with a templated entry, op_kernel/<op>_tiling_key.h with
ASCENDC_TPL_ARGS_DECL, op_kernel/<op>_tiling_data.h). The kernel file is op_kernel/<snake>.cpp (CANN's
opFile default: the OpType in snake case) unless the OpDef names another with ExtendCfgInfo("opFile.value").
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import OpkitError
from .libs import Libraries, libraries

SOURCE_EXT = (".cpp", ".cc", ".cxx")
_ARCH = re.compile(r"arch\d+")


def cann_snake(op_type: str) -> str:
    """CANN's OpType -> file name rule: AddCustom -> add_custom, ABCDef -> abc_def, Abc2DEf -> abc2d_ef."""
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", op_type)
    s = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", s)
    return s.lower()


@dataclass
class Project:
    root: Path                  # the folder holding op_host/ and op_kernel/
    op_host: Path
    op_kernel: Path
    libs: Libraries = field(default_factory=Libraries)   # CANN's shared libraries on the op's paths (libs.py)

    @property
    def host_sources(self) -> list[Path]:
        """The op's own host sources (own_host_sources), then those of the folders it depends on (dependencies())."""
        own = self.own_host_sources
        return own + [p for d in self.dependencies() for p in d.own_host_sources if p not in own]

    @property
    def own_host_sources(self) -> list[Path]:
        """op_host sources CANN builds for the A2 (ascend910b): all but tests and op_api/, and of the per-chip folders
        (op_host/archNN/) only the one the op's CMakeLists maps ascend910b to (ops-math@c419332
        cmake/func.cmake:539-552, add_tiling_sources: op_host/*_tiling*.cpp plus op_host/<TILING_DIR>/...)."""
        keep = self.a2_tiling_dir()
        return sorted(p for p in self.op_host.rglob("*") if p.suffix in SOURCE_EXT and p.is_file()
                      and "test" not in (parts := p.relative_to(self.op_host).parts)
                      and "op_api" not in parts     # aclnn API sources (ops-nn experimental/): not host tiling
                      and not any(_ARCH.fullmatch(d) and d != keep for d in parts[:-1]))

    def dependencies(self) -> list["Project"]:
        """The op folders the op's op_host/CMakeLists.txt names with `add_modules_sources(... DEPENDENCIES x)`:
        ops-nn builds every op's host code into one tiling library, and an op whose def is all it has (the
        foreach ops: foreach_add_scalar's TilingFunc is foreach_utils/op_host/foreach_tiling_func.cpp) gets its
        tiling from the folder it names (ops-nn@e5c3fa93 cmake/func.cmake:482-489; foreach/foreach_add_scalar/
        op_host/CMakeLists.txt:13). Looked up beside the op, then in its repository."""
        cm = self.op_host / "CMakeLists.txt"
        if not cm.is_file():
            return []
        out = []
        for m in re.finditer(r"DEPENDENCIES\s+([\w\s]+?)(?:\)|\b[A-Z_]{4,}\b)", cm.read_text(errors="replace")):
            for name in m.group(1).split():
                for cand in (self.root.parent / name, *(sorted(self.libs.repo.glob(f"*/{name}")) if self.libs.repo else [])):
                    if (cand / "op_host").is_dir() and cand.resolve() != self.root.resolve():
                        out.append(Project(cand, cand / "op_host", cand / "op_kernel", self.libs))
                        break
        return out

    def a2_tiling_dir(self) -> str | None:
        """The op_host/archNN folder CANN's build takes for ascend910b: SUPPORT_COMPUTE_UNIT / SUPPORT_TILING_DIR
        of the op's CMakeLists.txt (paired in order), else none."""
        # ops-math sets them in the op folder's CMakeLists, ops-nn in op_host/CMakeLists.txt (foreach_abs: its
        # tiling is op_host/arch22/foreach_abs_tiling_arch22.cpp)
        text = "".join(cm.read_text(errors="replace") for cm in (self.root / "CMakeLists.txt",
                                                                  self.root / "op_host" / "CMakeLists.txt")
                       if cm.is_file())
        units = re.search(r"set\s*\(\s*SUPPORT_COMPUTE_UNIT\s+([^)]*)\)", text)
        dirs = re.search(r"set\s*\(\s*SUPPORT_TILING_DIR\s+([^)]*)\)", text)
        if not (units and dirs):
            return None
        pairs = dict(zip(re.findall(r'"?([\w]+)"?', units.group(1)), re.findall(r'"?([\w]+)"?', dirs.group(1))))
        return pairs.get("ascend910b")

    def _a2_kernel_sources_args(self) -> list[list[str]]:
        """The argument lists of the op CMakeLists' add_kernel_sources(...) calls that apply to ascend910b."""
        cm = self.root / "CMakeLists.txt"
        if not cm.is_file():
            return []
        out = []
        for m in re.finditer(r"add_kernel_sources\s*\(([^)]*)\)", cm.read_text(errors="replace")):
            args = [a.strip('"') for a in m.group(1).split()]
            units = args[args.index("COMPUTE_UNITS") + 1:] if "COMPUTE_UNITS" in args else None
            if units is not None:
                units = units[:next((i for i, u in enumerate(units) if u.isupper()), len(units))]
            if units is None or "ascend910b" in units:
                out.append(args)
        return out

    def a2_auto_sync(self) -> bool:
        """False when the op's CMakeLists builds its A2 kernel with `add_kernel_sources(... AUTO_SYNC false)`
        (ops-math@c4193324 cmake/func.cmake:792,830-856: the kernel is compiled with --cce-auto-sync=off)."""
        for args in self._a2_kernel_sources_args():
            if "AUTO_SYNC" in args and args.index("AUTO_SYNC") + 1 < len(args) and \
                    args[args.index("AUTO_SYNC") + 1].lower() == "false":
                return False
        return True

    def a2_kernel_src(self) -> str | None:
        """The kernel file the op's CMakeLists names for ascend910b: `add_kernel_sources(KERNEL_SRC f.cpp
        [COMPUTE_UNITS ...])` (no COMPUTE_UNITS: every chip), ops-math@c4193324 cmake/func.cmake:782-850
        (experimental/math/add_mat_mat_elements_plus: add_mat_mat_elements_plus_arch22.cpp for ascend910b, the
        opFile default is its Ascend 950 entry)."""
        for args in self._a2_kernel_sources_args():
            if "KERNEL_SRC" in args and args.index("KERNEL_SRC") + 1 < len(args):
                src = args[args.index("KERNEL_SRC") + 1]
                return src if src.endswith(".cpp") else src + ".cpp"
        return None

    def a2_supported(self, op_type: str) -> bool | None:
        """Whether the OpDef names ascend910b (AddConfig("ascend910b")); None when it names no chip at all
        (msOpGen projects often leave it to the build's --soc)."""
        chips = set()
        for p in self.own_host_sources:
            chips |= set(re.findall(r'AddConfig\s*\(\s*"(\w+)"', p.read_text(errors="replace")))
        return ("ascend910b" in chips) if chips else None

    def op_types(self) -> list[str]:
        """OpTypes the op_host sources register (OP_ADD / IMPL_OP_OPTILING), read from the text."""
        found = []
        for p in self.own_host_sources:
            text = p.read_text(errors="replace")
            for m in re.finditer(r"\b(?:OP_ADD|IMPL_OP_OPTILING)\s*\(\s*([A-Za-z_]\w*)", text):
                if m.group(1) not in found:
                    found.append(m.group(1))
        return found

    def kernel_file(self, op_type: str) -> Path:
        """The A2's kernel file: the opFile.value of the config the OpDef adds for ascend910b, else the snake name.
        ops-math / ops-nn name a per-chip kernel on one OpAICoreConfig (is_finite_def.cpp: `config910d
        ...ExtendCfgInfo("opFile.value", "is_finite_apt")` added for ascend950, plain AddConfig("ascend910b"))."""
        name = cann_snake(op_type)
        for p in self.own_host_sources:
            text = p.read_text(errors="replace")
            files = list(re.finditer(r'"opFile\.value"\s*,\s*"([^"]+)"', text))
            if not files:
                continue
            a2 = re.search(r'AddConfig\s*\(\s*"ascend910b"\s*(?:,\s*(\w+))?\s*\)', text)
            if a2 is None:       # no chip named (msOpGen): the project's one opFile
                name = files[-1].group(1)
                continue
            for m in files:      # the config variable declared last before the opFile line carries it
                decl = re.findall(r"OpAICoreConfig\s+(\w+)\s*;", text[:m.start()])
                if a2.group(1) and decl and decl[-1] == a2.group(1):
                    name = m.group(1)
        src = self.a2_kernel_src()
        if src is not None and (self.op_kernel / src).is_file():
            return self.op_kernel / src
        for cand in (self.op_kernel / f"{name}.cpp", self.op_kernel / f"{cann_snake(op_type)}.cpp"):
            if cand.is_file():
                return cand
        raise OpkitError(f"{self.op_kernel}: no kernel file {name}.cpp for op {op_type} (CANN's opFile rule: "
                         f"the OpType in snake case)")

    def tiling_header(self, op_type: str) -> Path | None:
        """The header holding the op's BEGIN_TILING_DATA_DEF registration: op_host/<op>_tiling.h (msOpGen layout),
        another op_host/*tiling*.h, else an op_kernel/*tiling*.h that the op's host code includes but no kernel
        source does (ops-math experimental/math/is_neg_inf: op_kernel/is_neg_inf_tiling_data.h holds the
        registration; CANN generates the kernel's struct from it, the kernel never includes it)."""
        snake = cann_snake(op_type)
        cands = [self.op_host / f"{snake}_tiling.h"] + sorted(self.op_host.glob("*tiling*.h"))
        for c in cands:
            if c.is_file() and "BEGIN_TILING_DATA_DEF" in c.read_text(errors="replace"):
                return c
        kernel_text = "".join(p.read_text(errors="replace") for p in sorted(self.op_kernel.rglob("*"))
                              if p.suffix in (".cpp", ".h") and p.is_file())
        for c in sorted(self.op_kernel.glob("*tiling*.h")):
            if "BEGIN_TILING_DATA_DEF" in c.read_text(errors="replace") and f'{c.name}"' not in kernel_text:
                return c
        return None


def find(path: str | Path, opbase: str | Path | None = None) -> Project:
    """The project at `path` (or its one subfolder holding op_host/ and op_kernel/), with the CANN libraries its
    repository's build gives it (libs.py; opbase from `opbase`, OPKIT_CANN_OPBASE or a sibling checkout)."""
    root = Path(path).resolve()
    if not root.is_dir():
        raise OpkitError(f"{root}: no such project folder")
    for base in (root, *sorted(p for p in root.iterdir() if p.is_dir())):
        if (base / "op_host").is_dir() and (base / "op_kernel").is_dir():
            return Project(base, base / "op_host", base / "op_kernel", libraries(base, opbase))
    raise OpkitError(f"{root}: not a CANN custom-op project (expected op_host/ and op_kernel/ folders, as msOpGen "
                     "and the ops-math/ops-nn repositories lay them out)")


def entry(kernel: Path, op_type: str) -> tuple[str, bool]:
    """(kernel entry name, templated?) -- the __global__ function named like the op in snake case."""
    text = kernel.read_text(errors="replace")
    snake = cann_snake(op_type)
    plain = re.search(r"(?<!>)\s(?:extern\s+\"C\"\s+)?__global__\s+__aicore__\s+void\s+" + snake + r"\s*\(", text)
    if plain and _under_cpu_debug(text, plain.start()):
        # the entry's CPU-debug form (`#ifdef __CCE_KT_TEST__`, ops-math asin_grad.cpp:27): the emulator defines
        # __CCE_KT_TEST__ as CANN's CPU tests do, so that plain function is the entry, not the template after #else
        return snake, False
    tpl = re.search(r"template\s*<[^;{]*?>\s*(?:extern\s+\"C\"\s*)?__global__\s+__aicore__\s+void\s+" + snake + r"\s*\(",
                    text)
    if tpl:
        return snake, True
    if re.search(r"__global__\s+__aicore__\s+void\s+" + snake + r"\s*\(", text):
        return snake, False
    names = re.findall(r"__global__\s+__aicore__\s+void\s+(\w+)\s*\(", text)
    if len(names) == 1:
        templated = bool(re.search(r"template\s*<[^;{]*?>\s*(?:extern\s+\"C\"\s*)?__global__\s+__aicore__\s+void\s+"
                                   + names[0] + r"\s*\(", text))
        return names[0], templated
    raise OpkitError(f"{kernel}: no kernel entry `__global__ __aicore__ void {snake}(...)`")


def _under_cpu_debug(text: str, pos: int) -> bool:
    """Whether `pos` sits in the first branch of an `#ifdef __CCE_KT_TEST__` (or `#if defined(__CCE_KT_TEST__)`)."""
    depth, opened = 0, []
    for m in re.finditer(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)$", text[:pos], re.M):
        kind, rest = m.group(1), m.group(2)
        if kind in ("if", "ifdef", "ifndef"):
            opened.append(kind in ("ifdef", "if") and "__CCE_KT_TEST__" in rest and "!" not in rest)
        elif kind in ("elif", "else") and opened:
            opened[-1] = False
        elif kind == "endif" and opened:
            opened.pop()
    return any(opened)
