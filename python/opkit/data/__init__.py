"""Labelled data for model-level accuracy (`opkit eval`, `opkit golden-set`, `opkit quant` calibration).

- sets.py: ``load_dataset(path, transform)`` -> a ``LabelledSet`` (``TensorSet`` from .pt/.npz with x/y,
  ``FolderSet`` from ROOT/<class>/<file>); ``len``, ``labels()``, ``sample(i)``, ``batch(indices)``, ``hash()``.
- transforms.py: the default sample transform and ``--transform pkg.module:function``.
- golden.py: ``golden_set(src, out, per_class, seed)``, manifests with file / class / sha256.
Docs: docs/eval.md.
"""
from .golden import golden_set, read_manifest
from .sets import FolderSet, LabelledSet, TensorSet, load_dataset, load_inputs

__all__ = ["load_dataset", "load_inputs", "LabelledSet", "TensorSet", "FolderSet", "golden_set", "read_manifest"]
