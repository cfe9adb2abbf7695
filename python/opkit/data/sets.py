"""Labelled sets: samples by index, each an input tensor (no batch dim) and a class index.

Two kinds, one interface (``LabelledSet``):
- ``TensorSet``: a ``.pt`` (``torch.save`` of a dict) or ``.npz`` file holding ``x`` (N, ...) and ``y`` (N,)
  integer labels, optionally ``classes`` (names by label index).
- ``FolderSet``: an ImageFolder-style directory ``ROOT/<class>/<file>`` with ``.jpg/.jpeg/.png`` images or
  ``.npy``/``.pt`` tensors; labels are the class folders in sorted order (torchvision's ImageFolder
  convention), or the ``classes`` list of a golden-set ``manifest.json`` at ROOT, which also fixes the files
  and their sha256 (golden.py).

Sets are picklable and light (paths and a transform *spec*, resolved where the samples are read), so a
runner can ship them to worker processes or Ray workers. ``hash()`` identifies the data as the model sees
it: every sample's label and content (sha256) in order, plus the transform's spec.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from ..errors import OpkitError
from .transforms import DEFAULT_SPEC, resolve as resolve_transform

IMAGE_EXTS = (".jpg", ".jpeg", ".png")
TENSOR_EXTS = (".npy", ".pt")
MANIFEST = "manifest.json"


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class LabelledSet:
    """Samples by index. Subclasses implement ``__len__``, ``labels``, ``sample`` and ``_content_hashes``."""

    source: str = ""
    classes: list[str] = []
    transform: str = ""

    def __len__(self) -> int:
        raise NotImplementedError

    def labels(self) -> torch.Tensor:
        """All labels (int64, data order) without reading the inputs."""
        raise NotImplementedError

    def sample(self, i: int) -> torch.Tensor:
        """Input ``i`` as the model takes it, without the batch dim."""
        raise NotImplementedError

    def where(self, i: int) -> str:
        """Where sample ``i`` comes from (for error messages)."""
        return f"{self.source}[{i}]"

    def batch(self, indices) -> tuple[torch.Tensor, torch.Tensor]:
        """(inputs stacked along a new batch dim, labels) of ``indices``; every sample must have one shape."""
        xs = []
        for i in indices:
            x = self.sample(int(i))
            if xs and x.shape != xs[0].shape:
                raise OpkitError(
                    f"{self.where(int(i))}: input shape {list(x.shape)} differs from {self.where(int(indices[0]))}'s "
                    f"{list(xs[0].shape)}; a labelled set needs one input shape"
                    + (f" (the transform {self.transform} must return a fixed shape: resize or crop)"
                       if self.transform else ""))
            xs.append(x)
        y = self.labels()[torch.as_tensor([int(i) for i in indices], dtype=torch.long)]
        return torch.stack(xs), y

    def _content_hashes(self) -> list[str]:
        raise NotImplementedError

    def hash(self) -> str:
        """sha256 (16 hex digits) of the data as the model sees it: labels, contents, class names, transform."""
        h = hashlib.sha256(b"opkit-labelled-set-1\n")
        h.update(json.dumps({"classes": list(self.classes), "transform": transform_label(self.transform)}).encode())
        for y, c in zip(self.labels().tolist(), self._content_hashes()):
            h.update(f"\n{y}\t{c}".encode())
        return h.hexdigest()[:16]

    def describe(self) -> dict:
        return {"source": self.source, "n": len(self), "classes": len(self.classes),
                "transform": self.transform, "hash": self.hash()}

    def check_labels(self, num_classes: int, where: str = "the model") -> None:
        """Labels must index ``num_classes`` model outputs."""
        y = self.labels()
        if len(y) and (int(y.min()) < 0 or int(y.max()) >= num_classes):
            bad = int(((y < 0) | (y >= num_classes)).nonzero()[0, 0])
            raise OpkitError(f"{self.where(bad)}: label {int(y[bad])} is out of range: {where} has "
                             f"{num_classes} outputs (classes 0..{num_classes - 1})")
        if self.classes and len(self.classes) > num_classes:
            raise OpkitError(f"{self.source}: {len(self.classes)} classes, but {where} has only {num_classes} "
                             "outputs")


class TensorSet(LabelledSet):
    """Inputs and labels held in memory (from a ``.pt``/``.npz`` file, or given as tensors)."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor, classes: list[str] | None = None, source: str = "(tensors)"):
        self.source = source
        if not isinstance(x, torch.Tensor) or x.dim() < 1:
            raise OpkitError(f"{source}: 'x' must be a tensor (N, ...) of inputs")
        if not isinstance(y, torch.Tensor) or y.dim() != 1 or y.is_floating_point() or y.is_complex():
            raise OpkitError(f"{source}: 'y' must be a 1-D integer tensor of class indices"
                             + (f"; got dtype {y.dtype}, shape {list(y.shape)}" if isinstance(y, torch.Tensor) else ""))
        if len(y) != len(x):
            raise OpkitError(f"{source}: 'x' holds {len(x)} samples but 'y' holds {len(y)} labels")
        if len(y) and int(y.min()) < 0:
            raise OpkitError(f"{source}[{int((y < 0).nonzero()[0, 0])}]: negative label {int(y.min())}")
        self.x = x.float() if x.is_floating_point() else x
        self.y = y.long()
        n = int(self.y.max()) + 1 if len(self.y) else 0
        self.classes = list(classes) if classes is not None else [str(i) for i in range(n)]
        if len(self.y) and n > len(self.classes):
            raise OpkitError(f"{source}: label {n - 1} has no entry in 'classes' ({len(self.classes)} names)")
        self.transform = ""

    def __len__(self) -> int:
        return len(self.y)

    def labels(self) -> torch.Tensor:
        return self.y

    def sample(self, i: int) -> torch.Tensor:
        return self.x[i]

    def batch(self, indices) -> tuple[torch.Tensor, torch.Tensor]:
        idx = torch.as_tensor([int(i) for i in indices], dtype=torch.long)
        return self.x[idx], self.y[idx]

    def _content_hashes(self) -> list[str]:
        x = self.x.detach().contiguous()
        return [hashlib.sha256(x[i].numpy().tobytes()).hexdigest()[:16] for i in range(len(x))]


def _read_tensor_file(path: Path, keys=(("x", "inputs"), ("y", "labels"))) -> dict:
    try:
        if path.suffix == ".npz":
            with np.load(path, allow_pickle=False) as z:
                data = {k: z[k] for k in z.files}
        else:
            data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - any reader error is the file's fault
        raise OpkitError(f"{path}: cannot read it as a {path.suffix} file: {e}") from None
    if not isinstance(data, dict):
        raise OpkitError(f"{path}: expected a dict with {' and '.join(repr(k) for k, _ in keys)}; "
                         f"got {type(data).__name__}")
    for key, what in keys:
        if key not in data:
            raise OpkitError(f"{path}: no '{key}' ({what}); found {', '.join(map(repr, sorted(data))) or 'nothing'}")
    return data


def load_inputs(data: str | Path | LabelledSet, transform: str | Callable | None = None,
                option: str = "--calib") -> torch.Tensor:
    """Inputs only (N, ...): a ``.pt``/``.npz`` holding ``x`` (labels optional: calibration data), a folder
    ROOT/<class>/<file>, or a labelled set (`opkit quant --calib`). ``option``: the option errors name."""
    p = None if isinstance(data, LabelledSet) else Path(data)
    if p is not None and p.suffix in (".pt", ".npz") and p.is_file():
        if transform is not None:
            raise OpkitError(f"{option} {p}: {_transform_option(option)} applies to folders of files; a {p.suffix} "
                             "file holds inputs as the model takes them")
        x = _read_tensor_file(p, (("x", "inputs"),))["x"]
        x = torch.as_tensor(x) if isinstance(x, np.ndarray) else x
        if not isinstance(x, torch.Tensor) or x.dim() < 1:
            raise OpkitError(f"{option} {p}: 'x' must be a tensor (N, ...) of inputs")
        return x
    ds = load_dataset(data, transform, option=option)
    return ds.batch(list(range(len(ds))))[0] if len(ds) else torch.zeros(0)


def _transform_option(option: str) -> str:
    """The transform option of a data option: --data -> --transform, --calib -> --calib-transform."""
    return "--transform" if option == "--data" else f"{option}-transform"


def load_tensor_file(path: Path) -> TensorSet:
    """A ``.pt`` (dict saved with torch.save) or ``.npz`` with ``x`` and ``y`` (and optional ``classes``)."""
    data = _read_tensor_file(path)
    x, y = (torch.as_tensor(data[k]) if isinstance(data[k], np.ndarray) else data[k] for k in ("x", "y"))
    classes = data.get("classes")
    if classes is not None:
        classes = [str(c) for c in (classes.tolist() if isinstance(classes, np.ndarray) else classes)]
    return TensorSet(x, y, classes, source=str(path))


class FolderSet(LabelledSet):
    """``ROOT/<class>/<file>`` samples (images or tensors) read on demand through a transform."""

    def __init__(self, root: str | Path, transform: str | Callable | None = None, verify: bool = True):
        self.root = Path(root)
        self.source = str(self.root)
        self.transform = _transform_spec(transform)
        self._fn = transform if callable(transform) else None
        self._hashes: list[str] | None = None
        manifest = self.root / MANIFEST
        if manifest.is_file():
            self._from_manifest(manifest, verify)
        else:
            self._scan()

    def _scan(self) -> None:
        dirs = sorted(p.name for p in self.root.iterdir() if p.is_dir() and not p.name.startswith("."))
        if not dirs:
            raise OpkitError(f"{self.root}: no class folders (expected ROOT/<class>/<file> with "
                             f"{'/'.join(IMAGE_EXTS + TENSOR_EXTS)} files)")
        self.classes = dirs
        self.files: list[str] = []
        ys: list[int] = []
        for label, c in enumerate(dirs):
            found = sorted(p for p in (self.root / c).iterdir() if p.is_file()
                           and p.suffix.lower() in IMAGE_EXTS + TENSOR_EXTS)
            if not found:
                raise OpkitError(f"{self.root / c}: class folder without {'/'.join(IMAGE_EXTS + TENSOR_EXTS)} files")
            self.files += [p.relative_to(self.root).as_posix() for p in found]
            ys += [label] * len(found)
        self.y = torch.tensor(ys, dtype=torch.long)

    def _from_manifest(self, manifest: Path, verify: bool) -> None:
        m = read_manifest(manifest)
        self.classes = m["classes"]
        self.files = [s["file"] for s in m["samples"]]
        self.y = torch.tensor([s["label"] for s in m["samples"]], dtype=torch.long)
        self._hashes = [s["sha256"] for s in m["samples"]]
        if verify:
            listed = set(self.files)
            extra = sorted(p.relative_to(self.root).as_posix() for p in self.root.rglob("*")
                           if p.is_file() and p.name != MANIFEST and p.suffix.lower() in IMAGE_EXTS + TENSOR_EXTS
                           and p.relative_to(self.root).as_posix() not in listed)
            if extra:
                raise OpkitError(f"{manifest}: {len(extra)} file(s) not in the manifest, e.g. {extra[0]}; a golden "
                                 "set holds exactly the files its manifest lists")
            for f, want in zip(self.files, self._hashes):
                p = self.root / f
                if not p.is_file():
                    raise OpkitError(f"{manifest}: listed file {f} is missing")
                if file_sha256(p) != want:
                    raise OpkitError(f"{p}: sha256 differs from the one in {manifest}: the golden set was changed")

    def __len__(self) -> int:
        return len(self.files)

    def labels(self) -> torch.Tensor:
        return self.y

    def where(self, i: int) -> str:
        return str(self.root / self.files[i])

    def _transform(self) -> Callable:
        if self._fn is None:
            self._fn = resolve_transform(self.transform)
        return self._fn

    def sample(self, i: int) -> torch.Tensor:
        path = self.root / self.files[i]
        raw = read_sample(path)
        try:
            x = self._transform()(raw)
        except OpkitError:
            raise
        except Exception as e:  # noqa: BLE001 - the user's transform failed on this file
            raise OpkitError(f"{path}: the transform {self.transform} failed: {type(e).__name__}: {e}") from None
        if isinstance(x, np.ndarray):
            x = torch.from_numpy(x)
        if not isinstance(x, torch.Tensor):
            raise OpkitError(f"{path}: the transform {self.transform} returned {type(x).__name__}, not a tensor")
        return x.float() if x.is_floating_point() else x

    def _content_hashes(self) -> list[str]:
        if self._hashes is None:
            self._hashes = [file_sha256(self.root / f) for f in self.files]
        return self._hashes

    def __getstate__(self):
        state = dict(self.__dict__)
        if self.transform != "(callable)":
            state["_fn"] = None          # resolved again where the samples are read
        return state


def read_sample(path: Path):
    """An image file as a PIL RGB image; a .npy/.pt file as a tensor."""
    suffix = path.suffix.lower()
    try:
        if suffix in IMAGE_EXTS:
            from PIL import Image
            with Image.open(path) as im:
                return im.convert("RGB")
        if suffix == ".npy":
            return torch.from_numpy(np.load(path, allow_pickle=False))
        t = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001
        raise OpkitError(f"{path}: cannot read the sample: {type(e).__name__}: {e}") from None
    if not isinstance(t, torch.Tensor):
        raise OpkitError(f"{path}: expected a tensor, got {type(t).__name__}")
    return t


def _transform_spec(transform) -> str:
    if transform is None:
        return DEFAULT_SPEC
    if isinstance(transform, str):
        target, _, attr = transform.rpartition(":")
        if target.endswith(".py"):                 # absolute, so worker processes find the file too
            transform = f"{Path(target).resolve()}:{attr}"
        resolve_transform(transform)          # fail early, naming the spec
        return transform
    if callable(transform):
        mod, name = getattr(transform, "__module__", None), getattr(transform, "__qualname__", None)
        return f"{mod}:{name}" if mod and name and "<" not in name else "(callable)"
    raise OpkitError(f"transform: expected pkg.module:function or a callable; got {type(transform).__name__}")


def transform_label(spec: str) -> str:
    """The transform as the data hash knows it: a file transform by file name, not by where the checkout is."""
    target, sep, attr = spec.rpartition(":")
    return f"{Path(target).name}:{attr}" if sep and target.endswith(".py") else spec


def load_dataset(data: str | Path | LabelledSet, transform: str | Callable | None = None,
                 option: str = "--data") -> LabelledSet:
    """A labelled set from a ``.pt``/``.npz`` file (``x``, ``y``) or an ImageFolder-style directory.
    ``option``: the command-line option ``data`` came from, named by the errors."""
    if isinstance(data, LabelledSet):
        return data
    p = Path(data)
    if p.is_dir():
        return FolderSet(p, transform)
    if not p.exists():
        raise OpkitError(f"{option} {p}: no such file or directory")
    if p.suffix not in (".pt", ".npz"):
        raise OpkitError(f"{option} {p}: expected a .pt/.npz file with x and y, or a folder ROOT/<class>/<file>")
    if transform is not None:
        raise OpkitError(f"{option} {p}: {_transform_option(option)} applies to folders of files; a {p.suffix} "
                         "file holds inputs as the model takes them")
    return load_tensor_file(p)


FORMAT = 1          # golden-set manifest format (data/golden.py writes it)


def read_manifest(path: Path) -> dict:
    """A golden-set manifest, checked: classes, and samples with file / class / label / sha256."""
    try:
        m = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise OpkitError(f"{path}: cannot read the golden-set manifest: {e}") from None
    if not isinstance(m, dict) or m.get("opkit_golden_set") != FORMAT:
        raise OpkitError(f"{path}: not an opkit golden-set manifest (field opkit_golden_set: {FORMAT} missing)")
    classes, samples = m.get("classes"), m.get("samples")
    if not isinstance(classes, list) or not isinstance(samples, list):
        raise OpkitError(f"{path}: fields 'classes' and 'samples' must be lists")
    for k, s in enumerate(samples):
        if not isinstance(s, dict) or not {"file", "class", "label", "sha256"} <= set(s):
            raise OpkitError(f"{path}: samples[{k}]: needs file, class, label and sha256")
        if not isinstance(s["label"], int) or not 0 <= s["label"] < len(classes) or classes[s["label"]] != s["class"]:
            raise OpkitError(f"{path}: samples[{k}] ({s['file']}): label {s['label']!r} does not name class "
                             f"{s['class']!r} in 'classes'")
    return m
