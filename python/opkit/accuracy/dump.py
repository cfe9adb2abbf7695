"""``opkit dump`` / ``opkit compare``: per-layer outputs on disk, and the table between two dumps.

An opkit dump folder::

    index.json              {"opkit_dump": 1, "model", "device", "input_hash", "inputs": [...], "layers": [...]}
    input_0.npy ...         the fixed input(s), so another machine (the NPU) can dump the same run
    layers/0000_<name>.npy  one float32 array per module call, in call order

``compare`` also reads msprobe's PyTorch dump (``dump.json`` + ``dump_tensor_data/*.pt``, module level L0 or
mix; a folder holding ``step*/rank*/dump.json`` is searched for the first one): module entries
``Module.<path>.<Class>.forward.<n>`` become layer ``<path>`` (``#<n+1>`` from the second call on); other
entries (API level) keep their msprobe names.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import torch

from ..errors import OpkitError
from .layers import metrics, msprobe_verdict
from .simulate import Simulator

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64}


# -- inputs from the command line (the model: opkit.toolchain.user_code.load_model) -----------------------------------------------------------

def make_inputs(specs: list[str], seed: int = 0, dtype: str = "float32") -> tuple:
    """Each ``--input``: a shape ``2x3x64x64`` (normal values, seeded) or a ``.pt`` / ``.npy`` file."""
    if not specs:
        raise OpkitError("give the model's input: --input 2x3x224x224 (random, seeded) or --input file.npy/.pt")
    out = []
    for i, s in enumerate(specs):
        if re.fullmatch(r"\d+(x\d+)*", s):
            shape = [int(v) for v in s.split("x")]
            g = torch.Generator().manual_seed(seed + i)
            out.append(torch.randn(shape, generator=g).to(DTYPES[dtype]))
            continue
        p = Path(s)
        if not p.is_file():
            raise OpkitError(f"--input {s}: neither a shape like 2x3x224x224 nor an existing .pt/.npy file")
        if p.suffix == ".npy":
            out.append(torch.from_numpy(np.load(p)))
        else:
            t = torch.load(p, map_location="cpu", weights_only=True)
            if not isinstance(t, torch.Tensor):
                raise OpkitError(f"--input {p}: expected a tensor, got {type(t).__name__}")
            out.append(t)
    return tuple(out)


def model_device(model: torch.nn.Module) -> torch.device:
    for p in model.parameters():
        return p.device
    return torch.device("cpu")


# -- dump ---------------------------------------------------------------------------------------------

def _safe(name: str) -> str:
    return re.sub(r"[^0-9A-Za-z_.#-]", "_", name or "model")[:120]


def dump(model: torch.nn.Module, inputs: tuple, out: str | Path, *, model_spec: str = "") -> Path:
    """Run ``model`` once on ``inputs`` (moved to the model's device) and write every layer's output."""
    from .diagnose import input_hash

    out = Path(out)
    if out.exists() and any(out.iterdir()) and not (out / "index.json").is_file():
        raise OpkitError(f"--out {out}: exists and is not an opkit dump folder; refusing to write into it")
    (out / "layers").mkdir(parents=True, exist_ok=True)
    for old in (out / "layers").glob("*.npy"):
        old.unlink()
    dev = model_device(model)
    model.eval()
    moved = tuple(t.to(dev) if isinstance(t, torch.Tensor) else t for t in inputs)
    _, recs = Simulator(None).run(model, moved)
    index = {"opkit_dump": 1, "model": model_spec, "device": str(dev), "torch": torch.__version__,
             "input_hash": input_hash(inputs), "inputs": [], "layers": []}
    for i, t in enumerate(inputs):
        np.save(out / f"input_{i}.npy", t.detach().cpu().numpy())
        index["inputs"].append({"file": f"input_{i}.npy", "shape": list(t.shape), "dtype": _dn(t.dtype)})
    for k, r in enumerate(recs):
        f = f"layers/{k:04d}_{_safe(r.name)}.npy"
        np.save(out / f, r.tensor.detach().cpu().numpy())
        index["layers"].append({"name": r.name, "module": r.module, "op_type": r.op_type, "file": f,
                                "shape": list(r.tensor.shape), "dtype": r.io_dtype})
    (out / "index.json").write_text(json.dumps(index, indent=1) + "\n")
    return out


def _dn(dt) -> str:
    return str(dt).replace("torch.", "")


# -- reading dumps ------------------------------------------------------------------------------------

class Dump:
    """Layers of a dump folder (opkit or msprobe), in order: name -> loader."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.input_hash = ""
        self.kind = ""
        self.layers: list[tuple[str, dict, object]] = []     # (name, info, load())
        if (self.path / "index.json").is_file():
            self._opkit()
        else:
            found = self._find_msprobe()
            if found is None:
                raise OpkitError(f"{self.path}: not a dump folder (no index.json from `opkit dump`, no msprobe "
                                 "dump.json)")
            self._msprobe(found)

    def _opkit(self) -> None:
        try:
            idx = json.loads((self.path / "index.json").read_text())
        except ValueError as e:
            raise OpkitError(f"{self.path / 'index.json'}: {e}") from None
        self.kind, self.input_hash = "opkit", idx.get("input_hash", "")
        for e in idx.get("layers", []):
            f = self.path / e["file"]
            self.layers.append((e["name"], e, lambda f=f: torch.from_numpy(np.load(f))))

    def _find_msprobe(self) -> Path | None:
        if (self.path / "dump.json").is_file():
            return self.path
        hits = sorted(self.path.glob("step*/rank*/dump.json"))
        return hits[0].parent if hits else None

    def _msprobe(self, folder: Path) -> None:
        try:
            data = json.loads((folder / "dump.json").read_text()).get("data", {})
        except ValueError as e:
            raise OpkitError(f"{folder / 'dump.json'}: {e}") from None
        self.kind = "msprobe"
        tensors = folder / "dump_tensor_data"
        for key, entry in data.items():
            if not key.endswith(".forward") and ".forward." not in key:
                continue
            outs = entry.get("output")
            rec = _first_record(outs)
            if rec is None or not rec.get("data_name"):
                continue
            f = tensors / rec["data_name"]
            self.layers.append((_msprobe_name(key), {"module": key, "dtype": rec.get("dtype", ""),
                                                     "shape": rec.get("shape")},
                                lambda f=f: torch.load(f, map_location="cpu", weights_only=True)))

    def names(self) -> list[str]:
        return [n for n, _, _ in self.layers]


def _first_record(obj):
    if isinstance(obj, dict):
        return obj if "data_name" in obj or "type" in obj else None
    if isinstance(obj, list):
        for o in obj:
            r = _first_record(o)
            if r is not None:
                return r
    return None


def _msprobe_name(key: str) -> str:
    m = re.fullmatch(r"Module\.(.+)\.([A-Za-z_][A-Za-z0-9_]*)\.forward\.(\d+)", key)
    if not m:
        return key
    path, _, n = m.groups()
    return path if int(n) == 0 else f"{path}#{int(n) + 1}"


def compare(a: str | Path, b: str | Path, threshold: float = 0.999) -> dict:
    """Per-layer table of dump ``b`` against dump ``a`` (the golden), matched by layer name."""
    da, db = Dump(a), Dump(b)
    bmap = {n: (info, load) for n, info, load in db.layers}
    rows, missing = [], []
    for name, info, load in da.layers:
        if name not in bmap:
            missing.append(name)
            continue
        ta, tb = load(), bmap[name][1]()
        m = metrics(tb.float(), ta.float())
        below = bool(m["mismatch"] or m["nonfinite"] > 0 or m["cosine"] is None or m["cosine"] < threshold)
        rows.append({"name": name, "module": info.get("module", ""), "op_type": info.get("op_type", ""),
                     "shape": list(ta.shape), "cosine": m["cosine"], "max_abs": m["max_abs"],
                     "max_rel": m["max_rel"], "nonfinite": m["nonfinite"], "msprobe": msprobe_verdict(m),
                     "below": below, **({"error": m["error"]} if "error" in m else {})})
    first = next((r for r in rows if r["below"]), None)
    notes = []
    if da.input_hash and db.input_hash and da.input_hash != db.input_hash:
        notes.append(f"the dumps ran on different inputs (hash {da.input_hash} vs {db.input_hash})")
    if missing:
        notes.append(f"{len(missing)} layer(s) of {a} not in {b}: {', '.join(missing[:5])}"
                     + (" ..." if len(missing) > 5 else ""))
    return {"a": str(a), "b": str(b), "kinds": [da.kind, db.kind], "threshold": threshold, "layers": rows,
            "first_divergence": first, "notes": notes}


def compare_text(res: dict) -> str:
    from .report import _f
    lines = [f"opkit compare: {res['b']} vs {res['a']} (golden), threshold cosine {res['threshold']:g}",
             f"{'layer':36s} {'cosine':>9s} {'max abs':>9s} {'max rel':>9s} {'nonfin':>6s} msprobe"]
    for r in res["layers"]:
        lines.append(f"{(r['name'] or '(model)')[:36]:36s} {_f(r['cosine']):>9s} {_f(r['max_abs'], '{:.3g}'):>9s} "
                     f"{_f(r['max_rel'], '{:.3g}'):>9s} {r['nonfinite']:6.2g} {r['msprobe']}"
                     + ("  <" if r["below"] else ""))
    fd = res["first_divergence"]
    lines.append(f"first divergence: {fd['name'] or '(model)'} cosine {_f(fd['cosine'])}" if fd
                 else "first divergence: none")
    lines += [f"note: {n}" for n in res["notes"]]
    return "\n".join(lines)
