"""The aten ops torch_npu implements for the NPU, read from its published wheel (or a file).

The wheel carries ``torch_npu/csrc/aten/npu_native_functions.yaml`` (torch_npu's own ops) and
``npu_native_functions_by_codegen.yaml`` (that list merged with op-plugin's ops for this PyTorch version).
Sections ``supported``, ``symint``, ``quant`` become ``TORCH_LIBRARY_IMPL(aten, PrivateUse1)`` kernels for
that exact overload and ``autograd`` an ``AutogradPrivateUse1`` kernel; ``custom`` ops live in the ``npu``
namespace (torchnpugen/gen_backend_stubs.py in github.com/Ascend/pytorch). The wheel is fetched once with
``pip download --no-deps`` into opkit's cache (the same copy ``opkit build --target npu --check-only`` uses)
and never installed; the parsed list is cached beside it.
"""
from __future__ import annotations

import io
import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..errors import OpkitError
from ..toolchain.files import write_json

DEFAULT_VERSION = "2.13.0"
YAMLS = ("torch_npu/csrc/aten/npu_native_functions.yaml", "torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml")
ATEN_SECTIONS = ("supported", "symint", "quant", "autograd")
_CACHE_FORMAT = 1


@dataclass(frozen=True)
class OpList:
    """Overload names torch_npu registers: ``aten`` ({"add.Tensor", "lgamma", ...}; the default overload is
    the bare name, as in the yaml) and ``npu`` (custom ``torch.ops.npu.*`` ops). ``source`` says where from."""

    aten: frozenset[str]
    npu: frozenset[str]
    source: str
    version: str | None = None

    def has(self, namespace: str, overload: str) -> bool:
        """``overload`` as the yaml writes it: ``add.Tensor``, ``lgamma`` (default overload)."""
        if namespace == "aten":
            return overload in self.aten
        if namespace == "npu":
            return overload in self.npu or overload.split(".")[0] in self.npu
        return False

    def to_json(self) -> dict:
        return {"format": _CACHE_FORMAT, "source": self.source, "version": self.version,
                "aten": sorted(self.aten), "npu": sorted(self.npu)}


def _name(entry) -> str:
    """A yaml entry (``name`` or ``{func: "name(args) -> ret", ...}``) -> ``name.overload``."""
    func = entry.get("func", "") if isinstance(entry, dict) else entry
    return str(func).split("(", 1)[0].strip()


def parse_native_functions(texts: list[tuple[str, str]], source: str, version: str | None = None) -> OpList:
    """``texts``: (file name, yaml text) pairs in the npu_native_functions format."""
    aten: set[str] = set()
    npu: set[str] = set()
    for where, text in texts:
        try:
            doc = yaml.safe_load(text) or {}
        except yaml.YAMLError as e:
            raise OpkitError(f"{where}: not valid YAML: {e}") from None
        if not isinstance(doc, dict) or not any(k in doc for k in (*ATEN_SECTIONS, "custom")):
            raise OpkitError(f"{where}: not an npu_native_functions yaml (no supported:/custom: section)")
        for sec in ATEN_SECTIONS:
            aten.update(n for n in map(_name, doc.get(sec) or []) if n)
        npu.update(n for n in map(_name, doc.get("custom") or []) if n)
    return OpList(frozenset(aten), frozenset(npu), source, version)


def from_wheel(wheel: Path, version: str | None = None) -> OpList:
    try:
        with zipfile.ZipFile(wheel) as z:
            names = set(z.namelist())
            texts = [(f"{wheel}!{m}", z.read(m).decode()) for m in YAMLS if m in names]
    except (OSError, zipfile.BadZipFile) as e:
        raise OpkitError(f"{wheel}: cannot read the torch-npu wheel ({e})") from None
    if not texts:
        raise OpkitError(f"{wheel}: no {YAMLS[1]} inside; is it a torch_npu wheel (>= 2.1)?")
    return parse_native_functions(texts, str(wheel), version)


def from_file(path: str | Path) -> OpList:
    """``--op-list FILE``: a torch_npu wheel, an npu_native_functions*.yaml, a JSON list saved by opkit
    (``opkit scan --save-op-list``), or plain text with one overload per line (``add.Tensor``; # comments)."""
    p = Path(path)
    if not p.is_file():
        raise OpkitError(f"--op-list {path}: no such file")
    if p.suffix == ".whl":
        return from_wheel(p)
    text = p.read_text()
    if p.suffix in (".yaml", ".yml"):
        return parse_native_functions([(str(p), text)], str(p))
    if p.suffix == ".json":
        try:
            d = json.loads(text)
            return OpList(frozenset(d["aten"]), frozenset(d.get("npu", [])), str(p), d.get("version"))
        except (ValueError, KeyError, TypeError) as e:
            raise OpkitError(f"{p}: not an opkit op list JSON (needs an \"aten\" list): {e}") from None
    names = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
    names = [n.removeprefix("aten::") for n in names if n]
    if not names:
        raise OpkitError(f"{p}: no op names in it (one overload per line, e.g. add.Tensor)")
    return OpList(frozenset(n for n in names if not n.startswith("npu::")),
                  frozenset(n.removeprefix("npu::") for n in names if n.startswith("npu::")), str(p))


def for_version(version: str = DEFAULT_VERSION, log=None) -> OpList:
    """The list of torch-npu ``version``, from its wheel (downloaded once into the cache)."""
    from ..targets.npu import wheel       # the fetcher `opkit build --target npu --check-only` uses

    cache = wheel.cache_root() / f"torch_npu-{version}"
    local = os.environ.get("OPKIT_TORCH_NPU_WHEEL")
    saved = cache / "npu_op_list.json"
    if saved.is_file() and not local:
        try:
            d = json.loads(saved.read_text())
            if d.get("format") == _CACHE_FORMAT:
                return OpList(frozenset(d["aten"]), frozenset(d["npu"]), d["source"], version)
        except (ValueError, KeyError):
            pass                                  # a damaged cache is rebuilt below
    try:
        wheel.torch_npu_root(log, version)        # fetch (once, under the fetcher's lock)
    except Exception as e:                        # BuildError: message says how to work offline
        raise OpkitError(f"{e}\nOr pass --op-list FILE (a torch_npu wheel or its npu_native_functions*.yaml).") \
            from None
    found = [Path(local)] if local else sorted(cache.glob(f"torch_npu-{version}-*.whl"))
    if not found:
        raise OpkitError(f"no torch_npu-{version} wheel in {cache} after fetching it; pass --op-list FILE")
    ops = from_wheel(found[0], version)
    if not local:
        write_json(saved, ops.to_json(), indent=None)
    return ops


def resolve(torch_npu: str | OpList | None = DEFAULT_VERSION, op_list: str | Path | None = None, log=None) -> OpList:
    if isinstance(torch_npu, OpList):
        return torch_npu
    if op_list is not None:
        return from_file(op_list)
    return for_version(torch_npu or DEFAULT_VERSION, log)


def dump_text(ops: OpList) -> str:
    """One overload per line (the plain ``--op-list`` format)."""
    buf = io.StringIO()
    buf.write(f"# aten ops with an NPU kernel, from {ops.source}\n")
    for n in sorted(ops.aten):
        buf.write(n + "\n")
    for n in sorted(ops.npu):
        buf.write("npu::" + n + "\n")
    return buf.getvalue()
