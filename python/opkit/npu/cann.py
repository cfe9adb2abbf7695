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
# The usual install folders (root install, then a user install).
DEFAULT_ROOTS = ("/usr/local/Ascend/ascend-toolkit/latest", "~/Ascend/ascend-toolkit/latest",
                 "/usr/local/Ascend/latest", "/usr/local/Ascend/cann")
ASCENDC_CMAKE = ("compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake",
                 "tools/tikcpp/ascendc_kernel_cmake/ascendc.cmake")
DEFAULT_SOC = "Ascend910B1"

# SoC -> (opkit platform profile, vector cores the tiling may launch). 910B1/B2 from the SoC ini
# (vector_core_cnt=48); 910B3/B4 (40) is an unverified figure (docs/facts/ascendc-facts.md §4).
SOCS: dict[str, tuple[str, int]] = {
    "Ascend910B1": ("ascend910b", 48), "Ascend910B2": ("ascend910b", 48),
    "Ascend910B2C": ("ascend910b", 48),
    "Ascend910B3": ("ascend910b", 40), "Ascend910B4": ("ascend910b", 40),
    "Ascend310P1": ("ascend310p", 8), "Ascend310P3": ("ascend310p", 8),
}


@dataclass(frozen=True)
class Cann:
    root: Path              # the toolkit folder (what ASCEND_HOME_PATH points at)
    version: str            # e.g. "8.1.RC1", or "unknown"
    ascendc_cmake: Path     # .../ascendc_kernel_cmake/ascendc.cmake
    found_by: str           # "ASCEND_HOME_PATH" or the default folder

    @property
    def set_env(self) -> Path:
        return self.root.parent / "set_env.sh"


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
                f"/usr/local/Ascend/ascend-toolkit/set_env.sh` (it sets ASCEND_HOME_PATH), or set "
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
        m = re.search(r"\b(910B\d?C?|310P\d?|910_93\w*)\b", out)
        if m:
            return normalize_soc(m.group(1)), "npu-smi info"
    return DEFAULT_SOC, "default (no --soc, no npu-smi)"


def normalize_soc(soc: str) -> str:
    s = soc.strip()
    if not s.lower().startswith("ascend"):
        s = "Ascend" + s
    s = "Ascend" + s[6:].upper()
    if s == "Ascend310P":
        s = "Ascend310P3"
    return s


def soc_profile(soc: str) -> tuple[str, int]:
    """(platform profile, vector cores) for a SoC; unknown 910B/310P variants take their family's."""
    if soc in SOCS:
        return SOCS[soc]
    if soc.startswith("Ascend310P"):
        return SOCS["Ascend310P3"]
    if soc.startswith("Ascend910B"):
        return SOCS["Ascend910B1"]
    raise ValueError(f"--soc {soc}: opkit knows {', '.join(SOCS)} (Ascend910B*, Ascend310P*)")


def npu_arch(soc: str) -> str:
    """bisheng's --npu-arch / CMAKE_ASC_ARCHITECTURES for the SoC."""
    return "dav-2002" if soc_profile(soc)[0] == "ascend310p" else "dav-2201"


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
