"""The one accuracy-target rule: ``opkit quant --target-drop``, ``opkit experiment --target-drop``, overflow fixes
and the CI gate's threshold all ask whether a top-1 reaches a floor.

A top-1 (percent) meets ``Target(floor)`` when it is at most ``EPS_POINTS`` below the floor: accuracies are
ratios of sample counts, so a drop of exactly the allowed points must pass despite float rounding.
"""
from __future__ import annotations

from dataclasses import dataclass

EPS_POINTS = 1e-9


@dataclass(frozen=True)
class Target:
    floor: float | None            # top-1 percent to reach; None: no target (every result meets it)

    @classmethod
    def drop(cls, ref_top1: float, points: float) -> "Target":
        """At most ``points`` below ``ref_top1`` (the FP32 top-1, or the gate's best)."""
        return cls(ref_top1 - points)

    def met(self, top1: float) -> bool:
        return self.floor is None or top1 >= self.floor - EPS_POINTS
