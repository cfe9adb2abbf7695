"""Model variants: how a model runs when it is evaluated -- always through the one simulation engine.

A variant is any picklable object with ``name``, ``describe() -> dict`` and
``prepare(model) -> fn`` where ``fn(batch) -> output`` runs one input batch (``notes`` may list what the
preparation had to assume); optionally ``warm()``, run once in the calling process before worker processes
start (build kernels into the cache they load from). ``SimVariant`` covers FP32 (no policy), a device precision policy
(``opkit.accuracy.simulate.Simulator``, the engine `opkit diagnose` uses, with per-op-type ``overrides``), the
model with ``opkit.patch`` applied (under the policy, if any), and per-layer engine modes (``layers``: an INT8
deployment of `opkit quant`, built by ``QuantVariant.as_variant()``). Every engine run of every command is made
by ``SimVariant.simulator()``: one place decides the engine's settings (the naive kernels among them), so the
same model, policy and data give the same predictions in eval, quant, diagnose and experiment. Other variants
(experiment's shape variants) implement the same members and wrap a SimVariant.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn as nn

from ..accuracy.policy import Entry, Policy, load_policy
from ..accuracy.simulate import Simulator  # noqa: F401 - the type simulator() returns
from ..errors import OpkitError


@dataclass
class SimVariant:
    """FP32 (``policy=None``), a precision policy with optional op-type overrides, and/or opkit.patch."""

    name: str = "fp32"
    policy: str | Policy | None = None      # built-in name, policy .yaml path, or a loaded Policy
    overrides: dict[str, Entry] = field(default_factory=dict)
    patch: bool = False
    naive: bool = True                      # fp16-internal ops on opkit's naive kernels (as diagnose does)
    mixlist: str | None = None
    notes: list[str] = field(default_factory=list)
    layers: dict = field(default_factory=dict)            # layer path -> LayerMode (INT8, folded: opkit quant)
    layer_overrides: dict[str, Entry] = field(default_factory=dict)   # layer path -> Entry (one layer in FP32)
    functions: dict = field(default_factory=dict)         # "matmul#k" -> LayerMode (function-level what-ifs)
    info: dict = field(default_factory=dict)              # what the variant's maker adds to describe()

    def _policy(self) -> Policy | None:
        if self.policy is None or isinstance(self.policy, Policy):
            return self.policy
        return load_policy(self.policy, self.mixlist)

    def describe(self) -> dict:
        pol = self.policy.name if isinstance(self.policy, Policy) else self.policy
        return {**self.info, "name": self.name, "policy": pol, "patch": self.patch,
                "fp32_op_types": sorted(t for t, e in self.overrides.items() if e.io == e.compute == "float32"),
                "overrides": {t: {"io": e.io, "compute": e.compute} for t, e in sorted(self.overrides.items())},
                "notes": list(self.info.get("notes", [])) + list(self.notes)}

    def warm(self) -> None:
        """Build or load opkit's naive kernels once, here, before worker processes load them from the cache."""
        from ..accuracy.diagnose import naive_for
        naive_for(self._policy(), [], self.naive)

    def simulator(self) -> Simulator:
        """The engine as this variant runs the model (the one place every command builds it)."""
        from ..accuracy.diagnose import simulator_for
        return simulator_for(self._policy(), self.overrides, notes=self.notes, naive=self.naive, layers=self.layers,
                             layer_overrides=self.layer_overrides, functions=self.functions)

    def prepare(self, model: nn.Module) -> Callable[[torch.Tensor], object]:
        model.eval()
        pol = self._policy()
        if self.patch:
            from ..patching import patch as opkit_patch
            model = copy.deepcopy(model)
            rep = opkit_patch(model)
            if not rep.swapped:
                from ..accuracy.diagnose import nothing_swapped
                self.notes.append(nothing_swapped(rep))
        if pol is None and not (self.layers or self.layer_overrides or self.functions):
            def run(x):
                with torch.no_grad():
                    return model(x)
            return run
        sim = self.simulator()
        return lambda x: sim.run(model, (x,), record=False)[0]


FP32 = SimVariant("fp32")


def logits(out, where: str) -> torch.Tensor:
    """The model output as [N, classes] (first tensor of a tuple/list/dict; trailing 1-dims dropped)."""
    t = out
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (list, tuple)):
        t = next((o for o in out if isinstance(o, torch.Tensor)), None)
    if not isinstance(t, torch.Tensor):
        raise OpkitError(f"{where}: the model returned {type(out).__name__}, not a tensor of class scores")
    while t.dim() > 2 and t.shape[-1] == 1:
        t = t.squeeze(-1)
    if t.dim() != 2:
        raise OpkitError(f"{where}: model output shape {list(t.shape)} is not [batch, classes]; opkit eval "
                         "scores classifiers (one score per class)")
    return t.float()
