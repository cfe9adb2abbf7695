"""Evaluating model variants on labelled data: one per-shard function, three runners, merged by sample index.

- variants.py: ``SimVariant`` (FP32, a precision policy through the one simulation engine, opkit.patch);
  the variant protocol (``name``, ``describe()``, ``prepare(model) -> fn``) other variants implement.
- shard.py: ``run_shard`` -- batches of a shard through each variant, top-k predictions keyed by index.
- runner.py: ``evaluate(model, data, variants, ...)`` in process / local processes; ray_runner.py: Ray.
- target.py: ``Target``, the one rule for "does this top-1 meet the target".
- result.py: ``EvalResult`` (top-k, per class, changed samples, JSON) and the index-keyed ``Merger``.
Docs: docs/eval.md.
"""
from .result import EvalResult
from .runner import evaluate
from .shard import ModelRef, run_shard
from .target import EPS_POINTS, Target
from .variants import FP32, SimVariant

__all__ = ["evaluate", "EvalResult", "SimVariant", "FP32", "ModelRef", "run_shard", "Target", "EPS_POINTS"]
