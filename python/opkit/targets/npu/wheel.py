"""The published torch-npu wheel's headers and libtorch_npu.so, for --check-only on machines without
CANN: downloaded with `pip download --no-deps` into a cache folder and unpacked there, never installed
(installing torch-npu without CANN makes `import torch` itself fail: docs/facts/torch-npu-facts.md §2).

Env: OPKIT_TORCH_NPU_WHEEL=<path to a .whl> uses a local wheel; OPKIT_CACHE overrides ~/.cache/opkit.
"""
from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from ...errors import BuildError

VERSION = "2.13.0"
# torch_npu 2.13.0 is only published as manylinux_2_28 (manylinux2014 finds <= 2.6.0.post5).
PIP_ARGS = ("--no-deps", "--python-version", "3.11", "--platform", "manylinux_2_28_x86_64",
            "--only-binary=:all:")
_KEEP = ("torch_npu/include/", "torch_npu/lib/libtorch_npu.so", "torch_npu/version.py")


def cache_root() -> Path:
    return Path(os.environ.get("OPKIT_CACHE") or Path.home() / ".cache" / "opkit")


def torch_npu_root(log=None, version: str = VERSION) -> Path:
    """The unpacked wheel's `torch_npu/` folder (include/, lib/libtorch_npu.so); fetched on first use."""
    dest = cache_root() / f"torch_npu-{version}"
    dest.mkdir(parents=True, exist_ok=True)
    with open(dest / ".lock", "w") as lock:          # one fetch at a time (parallel builds, xdist)
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _fetch(dest, version, log)


def _fetch(dest: Path, version: str, log) -> Path:
    done = dest / ".unpacked"
    local = os.environ.get("OPKIT_TORCH_NPU_WHEEL")
    if done.is_file() and (not local or done.read_text().strip() == str(Path(local).resolve())):
        return dest / "torch_npu"
    if local:
        wheel = Path(local).resolve()
        if not wheel.is_file():
            raise BuildError(f"OPKIT_TORCH_NPU_WHEEL={local}: no such file")
    else:
        wheel = _download(dest, version, log)
    _unpack(wheel, dest)
    done.write_text(str(wheel) + "\n")
    return dest / "torch_npu"


def _download(dest: Path, version: str, log) -> Path:
    have = sorted(dest.glob(f"torch_npu-{version}-*.whl"))
    if have:
        return have[0]
    if log:
        log(f"downloading the torch-npu {version} wheel (headers only are used; it is not installed) into {dest}")
    cmd = [sys.executable, "-m", "pip", "download", f"torch-npu=={version}", *PIP_ARGS, "-d", str(dest),
           "--disable-pip-version-check", "-q"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    have = sorted(dest.glob(f"torch_npu-{version}-*.whl"))
    if r.returncode != 0 or not have:
        raise BuildError(f"could not download the torch-npu {version} wheel for --check-only "
                         f"(`{' '.join(cmd)}` exited {r.returncode}):\n{(r.stderr or r.stdout).strip()}\n"
                         f"Offline? Point OPKIT_TORCH_NPU_WHEEL at a local torch_npu-{version}-*.whl.")
    return have[0]


def _unpack(wheel: Path, dest: Path) -> None:
    try:
        with zipfile.ZipFile(wheel) as z:
            members = [m for m in z.namelist() if m.startswith(_KEEP)]
            if not any(m.startswith("torch_npu/include/") for m in members):
                raise BuildError(f"{wheel}: no torch_npu/include/ in this wheel; is it a torch_npu wheel?")
            z.extractall(dest, members)
    except zipfile.BadZipFile as e:
        raise BuildError(f"{wheel}: not a wheel ({e}); delete it and retry") from e


def include_dirs(root: Path) -> list[Path]:
    """The include set op-plugin's extension examples use (docs/facts/torch-npu-facts.md §1a, §2)."""
    inc = root / "include"
    return [inc, inc / "third_party" / "acl" / "inc", inc / "third_party" / "hccl" / "inc",
            inc / "third_party" / "op-plugin", inc / "third_party" / "op-plugin" / "op_plugin" / "include"]
