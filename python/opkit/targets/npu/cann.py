"""Where CANN is, which version, which SoC, and which torch_npu: without importing torch_npu.

Everything here is cheap (environment variables, a few stat() calls, small text files) so that
`opkit list` / `opkit build --target npu` can explain what is missing in one message.

Sources (public): CANN's `set_env.sh` exports ASCEND_HOME_PATH / ASCEND_TOOLKIT_HOME; the
AscendC kernel CMake support lives in `<toolkit>/compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake`
(older: `tools/tikcpp/...`); the toolkit version is in `<toolkit>/<arch>-linux/ascend_toolkit_install.info`
(`version=8.1.RC1`) and `<toolkit>/compiler/version.info` (`version_dir=8.1.RC1`).
"""
from __future__ import annotations

import os
import platform as _platform
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

# Environment variables, in the order they are trusted. ASCEND_HOME_PATH is what set_env.sh sets.
ENV_VARS = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_CANN_PACKAGE_PATH")
# The usual install folders: CANN <= 8.3 (ascend-toolkit/latest, set_env.sh one level up) and CANN >= 8.5
# (/usr/local/Ascend/cann, set_env.sh inside: CANN 8.5 docs maintenref/envvar/envref_07_0003), root
# install then a user install.
DEFAULT_ROOTS = ("/usr/local/Ascend/ascend-toolkit/latest", "~/Ascend/ascend-toolkit/latest",
                 "/usr/local/Ascend/cann", "~/Ascend/cann", "/usr/local/Ascend/latest")
# Where ascendc.cmake (kernel direct launch) lives. asc-devkit installs cmake/asc/ as
# <cann>/<arch>-linux/tikcpp/ascendc_kernel_cmake (asc-devkit cmake/CMakeLists.txt:16-18 with
# INSTALL_LIBRARY_DIR=${CMAKE_SYSTEM_PROCESSOR}-linux, CMakeLists.txt:37); older toolkits had it under
# compiler/tikcpp (a link to the same folder) or tools/tikcpp.
ASCENDC_CMAKE = ("compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake",
                 f"{_platform.machine()}-linux/tikcpp/ascendc_kernel_cmake/ascendc.cmake",
                 "tools/tikcpp/ascendc_kernel_cmake/ascendc.cmake")


@dataclass(frozen=True)
class Soc:
    name: str          # SOC_VERSION, e.g. Ascend910B3
    family: str        # CANN's short SoC (ASCEND_COMPUTE_UNIT, OpDef AddConfig): asc-devkit
                       # cmake/asc/fwk_modules/util/opdesc_parser.py:18-60 SOC_TO_SHORT_SOC_MAP
    profile: str       # opkit's platform profile (python/opkit/include/opkit/platform.h)
    vector_cores: int  # AIV cores: <cann>/<arch>-linux/data/platform_config/<SoC>.ini vector_core_cnt
    arch: str          # bisheng --npu-arch


# vector_core_cnt per SoC. 910B2: 48, 910B4: 40 (platform_config/Ascend910B2.ini and Ascend910B4.ini as quoted
# in huawei-csl/pto-dsl's matmul tutorial); 910B3: 40 (ai_core_cnt=20, like 910B4); 910B1: 48.
# A3 (Ascend910_93xx) parts share the 910B vector ISA (asc-devkit cmake/asc/legacy_modules/host_config.cmake:10
# lists them with ascend910b); their per-die counts are not in a public source opkit could check: 40 is
# assumed (the smaller 910B figure). With CANN installed, the SoC's platform_config ini decides (soc_info()).
_SOCS = (
    Soc("Ascend910B1", "ascend910b", "ascend910b", 48, "dav-2201"),
    Soc("Ascend910B2", "ascend910b", "ascend910b", 48, "dav-2201"),
    Soc("Ascend910B2C", "ascend910b", "ascend910b", 48, "dav-2201"),
    Soc("Ascend910B3", "ascend910b", "ascend910b", 40, "dav-2201"),
    Soc("Ascend910B4", "ascend910b", "ascend910b", 40, "dav-2201"),
    Soc("Ascend910B4-1", "ascend910b", "ascend910b", 40, "dav-2201"),
    *(Soc(f"Ascend910_93{n}", "ascend910_93", "ascend910b", 40, "dav-2201")
      for n in ("91", "92", "81", "82", "72", "62")),
    Soc("Ascend310P1", "ascend310p", "ascend310p", 8, "dav-2002"),
    Soc("Ascend310P3", "ascend310p", "ascend310p", 8, "dav-2002"),
)
SOCS: dict[str, Soc] = {s.name: s for s in _SOCS}
# Without --soc or npu-smi: a 40-core 910B. Tiling for 48 blocks on a 40-core part runs a second wave of 8
# (and deadlocks kernels that SyncAll); 40 blocks on a 48-core part only leave 8 cores idle.
DEFAULT_SOC = "Ascend910B3"


@dataclass(frozen=True)
class Cann:
    root: Path              # the toolkit folder (what ASCEND_HOME_PATH points at)
    version: str            # e.g. "8.1.RC1", or "unknown"
    ascendc_cmake: Path     # .../ascendc_kernel_cmake/ascendc.cmake
    found_by: str           # "ASCEND_HOME_PATH" or the default folder

    @property
    def set_env(self) -> Path:
        """ascend-toolkit/latest -> ascend-toolkit/set_env.sh; CANN >= 8.5: <root>/set_env.sh."""
        inside = self.root / "set_env.sh"
        return inside if inside.is_file() else self.root.parent / "set_env.sh"


@dataclass(frozen=True)
class Search:
    """The outcome of looking for CANN: the install, or every place looked at and why it failed."""
    cann: Cann | None
    tried: tuple[str, ...]

    def message(self, what: str | None = "opkit build --target npu") -> str:
        """One message: CANN is missing, what was looked at, and the variable / script to fix it."""
        looked = "; ".join(self.tried)
        return (f"{what + ': ' if what else ''}CANN (the Ascend toolkit) was not found, so the NPU kernels cannot be compiled. "
                f"Looked at: {looked}. Install the CANN toolkit, then `source "
                f"/usr/local/Ascend/ascend-toolkit/set_env.sh` (CANN >= 8.5: /usr/local/Ascend/cann/set_env.sh; it sets "
                f"ASCEND_HOME_PATH), or set "
                f"ASCEND_HOME_PATH=<toolkit>/latest yourself. To check the generated NPU glue without CANN: "
                f"`opkit build --target npu --check-only`.")


def _check_root(root: Path) -> tuple[Path | None, str]:
    if not root.is_dir():
        return None, "folder does not exist"
    for rel in ASCENDC_CMAKE:
        if (root / rel).is_file():
            return root / rel, ""
    return None, f"no {ASCENDC_CMAKE[0]} (is this a CANN toolkit folder?)"


def find_cann(env: dict[str, str] | None = None) -> Search:
    env = os.environ if env is None else env
    tried: list[str] = []
    candidates: list[tuple[str, Path]] = []
    for var in ENV_VARS:
        if env.get(var):
            candidates.append((f"${var}", Path(env[var]).expanduser()))
        else:
            tried.append(f"${var} (unset)")
    candidates += [(d, Path(d).expanduser()) for d in DEFAULT_ROOTS]
    for label, root in candidates:
        cmake, why = _check_root(root)
        if cmake is None:
            tried.append(f"{label}={root} ({why})" if label.startswith("$") else f"{root} ({why})")
            continue
        return Search(Cann(root.resolve(), cann_version(root), cmake, label), tuple(tried))
    return Search(None, tuple(tried))


def cann_version(root: Path) -> str:
    arch = _platform.machine()
    for f, key in ((root / f"{arch}-linux" / "ascend_toolkit_install.info", "version"),
                   (root / "compiler" / "version.info", "version_dir")):
        try:
            for line in f.read_text(errors="replace").splitlines():
                k, _, v = line.partition("=")
                if k.strip() == key and v.strip():
                    return v.strip().strip('"')
        except OSError:
            continue
    name = root.resolve().name        # ascend-toolkit/latest -> ascend-toolkit/8.1.RC1
    return name if re.match(r"\d", name) else "unknown"


# -- SoC -------------------------------------------------------------------------------------------

def detect_soc(explicit: str | None = None) -> tuple[str, str]:
    """(SoC, where it came from): --soc, else `npu-smi info`, else the documented default."""
    if explicit:
        return normalize_soc(explicit), "--soc"
    smi = shutil.which("npu-smi")
    if smi:
        try:
            out = subprocess.run([smi, "info"], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        m = re.search(r"\b(910B\d?C?(?:-1)?|310P\d?|910_93\d\d)\b", out)
        if m:
            return normalize_soc(m.group(1)), "npu-smi info"
    return DEFAULT_SOC, "default (no --soc, no npu-smi)"


def normalize_soc(soc: str) -> str:
    """`910b3`, `ascend910b3`, `Ascend910B3` -> `Ascend910B3`; `910_9392` -> `Ascend910_9392`."""
    s = soc.strip()
    if not s.lower().startswith("ascend"):
        s = "Ascend" + s
    s = "Ascend" + s[6:].upper()
    if s == "Ascend310P":
        s = "Ascend310P3"
    return s


def soc_info(soc: str, cann_root: Path | None = None) -> Soc:
    """What opkit needs about a SoC. Known SoCs come from the table above; with a CANN install, the
    SoC's platform_config ini (vector_core_cnt) overrides the table's core count."""
    s = SOCS.get(soc)
    if s is None:
        raise ValueError(f"--soc {soc}: opkit knows {', '.join(SOCS)}")
    cores = _ini_vector_cores(cann_root, soc) if cann_root else None
    if cores and cores != s.vector_cores:
        s = Soc(s.name, s.family, s.profile, cores, s.arch)
    return s


def _ini_vector_cores(root: Path, soc: str) -> int | None:
    for d in (f"{_platform.machine()}-linux/data/platform_config", "data/platform_config"):
        try:
            text = (Path(root) / d / f"{soc}.ini").read_text(errors="replace")
        except OSError:
            continue
        m = re.search(r"^\s*vector_core_cnt\s*=\s*(\d+)", text, re.MULTILINE)
        if m:
            return int(m.group(1))
    return None


def soc_profile(soc: str) -> tuple[str, int]:
    """(platform profile, vector cores) of a known SoC."""
    s = soc_info(soc)
    return s.profile, s.vector_cores


def npu_arch(soc: str) -> str:
    """bisheng's --npu-arch / CMAKE_ASC_ARCHITECTURES for the SoC."""
    return soc_info(soc).arch


# -- torch_npu ---------------------------------------------------------------------------------------

def dist_version(name: str) -> str | None:
    """An installed distribution's version from its metadata (never imports the package)."""
    from importlib import metadata
    for n in (name, name.replace("_", "-"), name.replace("-", "_")):
        try:
            return metadata.version(n)
        except metadata.PackageNotFoundError:
            continue
    return None


def torch_pair_problem(torch_version: str | None = None, npu_version: str | None = None) -> str | None:
    """A message when torch_npu is installed for another torch than the one installed; else None.

    torch_npu X.Y.* requires torch==X.Y.* (wheel metadata `Requires-Dist: torch==2.13.0.*`); a
    mismatch shows up as undefined symbols in libtorch_npu.so (docs/facts/peers-and-pitfalls.md §C, docs/facts/torch-npu-facts.md §5).
    """
    tv = torch_version or dist_version("torch")
    nv = npu_version or dist_version("torch_npu")
    if not tv or not nv:
        return None
    base = lambda v: tuple(re.findall(r"\d+", v.split("+")[0])[:2])  # noqa: E731
    if base(tv) != base(nv):
        return (f"torch_npu {nv} is built for torch {'.'.join(base(nv))}.*, but torch {tv} is installed; "
                f"install the matching pair (pip install torch=={'.'.join(base(nv))}.* or the torch_npu "
                f"release for torch {'.'.join(base(tv))})")
    return None


def version_macro(torch_version: str) -> str:
    """op-plugin's CURRENT_VERSION macro for a torch version: 2.13.0 -> V2R13 (docs/facts/torch-npu-facts.md §2)."""
    major, minor = re.findall(r"\d+", torch_version)[:2]
    return f"V{major}R{minor}"


# Always Unix Makefiles, never Ninja. CANN's ascendc_library re-runs CMake for its sub-builds with the
# caller's generator (asc-devkit cmake/asc/legacy_modules/function.cmake:103 `-G ${CMAKE_GENERATOR}`), and
# util/extract_host_stub.py keys compile_commands.json by directory + `-o` (:1587) but looks the
# $<TARGET_OBJECTS> paths up as given (:1857); under Ninja a kernel outside the sub-project gets a `/./`
# object path and a KeyError. contracts.check_generator() runs that contract in --check-only.
CMAKE_GENERATOR = "Unix Makefiles"
