"""Golden sets: N samples per class chosen reproducibly, written with a manifest (file, class, sha256).

The choice does not depend on file names or listing order: within a class, samples are ranked by
sha256(seed, the sample's content hash) and the first N are kept, so the same source and seed give the same
set on any machine. OUT is a folder set (``OUT/<class>/<file>``) plus ``OUT/manifest.json``::

    {"opkit_golden_set": 1, "source": ..., "source_hash": ..., "seed": 0, "per_class": 10,
     "classes": [names by label index], "data_hash": ...,
     "samples": [{"file": "cat/0001.jpg", "class": "cat", "label": 3, "sha256": ...}, ...]}

Loading OUT (``load_dataset``) takes exactly the files the manifest lists and checks every sha256, so each
later run proves it used the same data. Folder sources are copied byte for byte; a ``.pt``/``.npz`` source
becomes one ``.npy`` per sample (named by its index in the source).
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np

from ..errors import OpkitError
from ..toolchain.files import write_json
from .sets import FORMAT, MANIFEST, FolderSet, LabelledSet, TensorSet, file_sha256, load_dataset
from .sets import read_manifest  # noqa: F401 - opkit.data.golden.read_manifest, next to the writer


def _rank_key(seed: int, content: str) -> str:
    return hashlib.sha256(f"{seed}\0{content}".encode()).hexdigest()


def choose(ds: LabelledSet, per_class: int, seed: int = 0) -> list[int]:
    """Indices of up to ``per_class`` samples of each class, ranked by sha256(seed, content); data order."""
    if per_class < 1:
        raise OpkitError(f"--per-class must be at least 1; got {per_class}")
    by_class: dict[int, list[tuple[str, int]]] = {}
    for i, (y, c) in enumerate(zip(ds.labels().tolist(), ds._content_hashes())):
        by_class.setdefault(y, []).append((_rank_key(seed, c), i))
    chosen = []
    for y in sorted(by_class):
        chosen += [i for _, i in sorted(by_class[y])[:per_class]]
    return sorted(chosen)


def _safe_dir(name: str) -> str:
    s = re.sub(r"[^0-9A-Za-z_.-]", "_", name).strip(".") or "_"
    return s


def golden_set(src: str | Path | LabelledSet, out: str | Path, per_class: int = 10, seed: int = 0) -> dict:
    """Write the golden set of ``src`` to ``out`` (a new or empty folder); returns the manifest."""
    ds = load_dataset(src)
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise OpkitError(f"{out}: exists and is not an empty folder; a golden set is written to a new folder "
                         "(nothing there is overwritten)")
    idx = choose(ds, per_class, seed)
    y = ds.labels()
    counts = {c: 0 for c in range(len(ds.classes))}
    for i in idx:
        counts[int(y[i])] += 1
    dirs = [_safe_dir(c) for c in ds.classes]
    if len(set(dirs)) != len(dirs):
        dirs = [f"{k:0{len(str(len(dirs)))}d}_{d}" for k, d in enumerate(dirs)]
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))     # renamed into place at the end
    try:
        samples = []
        for i in idx:
            label = int(y[i])
            d = tmp / dirs[label]
            d.mkdir(exist_ok=True)
            if isinstance(ds, FolderSet):
                srcf = ds.root / ds.files[i]
                rel = f"{dirs[label]}/{srcf.name}"
                shutil.copyfile(srcf, tmp / rel)
            elif isinstance(ds, TensorSet):
                rel = f"{dirs[label]}/{i:0{len(str(len(ds)))}d}.npy"
                np.save(tmp / rel, ds.x[i].numpy())
            else:
                raise OpkitError(f"golden-set: cannot copy samples of a {type(ds).__name__}")
            samples.append({"file": rel, "class": ds.classes[label], "label": label, "source_index": i,
                            "sha256": file_sha256(tmp / rel)})
        manifest = {"opkit_golden_set": FORMAT, "source": str(ds.source), "source_hash": ds.hash(), "seed": seed,
                    "per_class": per_class, "classes": list(ds.classes), "samples": samples,
                    "short_classes": sorted(ds.classes[c] for c, n in counts.items() if n < per_class)}
        write_json(tmp / MANIFEST, manifest)
        manifest["data_hash"] = FolderSet(tmp).hash()
        write_json(tmp / MANIFEST, manifest)
        if out.exists():
            out.rmdir()                       # empty (checked above)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest
