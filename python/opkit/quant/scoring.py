"""Running the variants quant builds: top-1/top-5 on the labelled set through ``opkit.evaluate`` (in process,
local worker processes or Ray, as asked), and the engine queries on the fixed batch (per-layer rows against
FP32, the share of non-finite outputs, one layer's input). Every run goes through the variant's
``SimVariant.simulator()``: the engine as every other command builds it."""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn as nn

from ..accuracy.layers import compare_runs
from ..data import LabelledSet
from ..evaluate import FP32, SimVariant, evaluate
from ..evaluate.runner import in_process, layout
from . import prefix
from .modes import FoldedBatchNorm, QuantLayer
from .variant import QuantVariant

# True: an evaluation after the first runs only its variants -- FP32's predictions on the labelled set are
# cached from the first and are the same on every run -- and the set's description (its content hash: a read of
# every sample) is taken once. False: both on every evaluation, as before (tests and benchmarks compare the two).
REUSE_FP32 = True
# True: per-layer rows are computed once per deployment (the same engine modes, overrides and policy: the
# overflow trace, the fusion rows and the layer table ask for the same ones), and the overflow trace's scan for
# the first non-finite layer computes only the non-finite shares, not cosines and errors. False: every query runs
# the engine and compares every layer again, as before (tests and the benchmark compare the two).
REUSE_ROWS = True
# True: a deployment equal by value to one already run on the fixed batch (every engine mode of the same type with
# every field equal, tensors by identity or equal bits -- prefix.changed finds no module -- the same policy, no
# function modes, the model's tensors unchanged) gets that run's rows and overflow scan: the recommendation
# rebuilt from its recalibrated config is often the base deployment again, in new mode objects. False: by the
# modes' identity only (REUSE_ROWS alone).
ROWS_BY_VALUE = True
# True: a variant evaluated in this process starts from the kept module outputs of the reference variant
# (keep_prefix: the base all-INT8 deployment) up to its first changed module (quant/prefix.py). False: every
# evaluation runs the whole model (tests and the benchmark compare the two).
REUSE_PREFIX = True


@dataclass(frozen=True)
class Score:
    top1: float
    top5: float
    predictions: list[int] = field(default_factory=list, compare=False, repr=False)   # top-1 class per sample


@dataclass
class Run:
    """How the labelled evaluations run: batch size, worker processes, Ray, and the model's factory spec
    (worker processes reload the model from it; without one they run in this process)."""
    batch_size: int = 64
    workers: int | None = 1         # None: the machine's cores (evaluate's default)
    ray: str | None = None
    model_spec: str | None = None
    prefix_mb: float = prefix.DEFAULT_MB   # memory for the reference's kept outputs (prefix reuse; 0: off)


def placed_workers(workers: int | None, ray: str | None, search: bool, servable: bool) -> int | None:
    """The ``workers`` quant's labelled evaluations run with. Given (a number, or Ray): as given. Not given (None,
    `opkit quant`'s default): 1 -- this process, torch's intra-op threads over the cores -- when a search runs
    and prefix reuse can serve it (``servable``: a budget, and a base variant that can be recorded), else None
    (evaluate's default, one worker process per core). Why: every evaluation starts its own pool (each worker
    imports torch and opkit and builds the model again), a search makes dozens of evaluations, and only an
    evaluation in this process can start from the base variant's kept outputs; figures in docs/quant.md "Where
    the evaluations run"."""
    if workers is not None or ray or not search or not servable:
        return workers
    return 1


def servable(model: nn.Module, base, prefix_mb: float) -> bool:
    """Whether prefix reuse could serve evaluations that start from ``base`` (a variant) in this process: it is
    on, has a budget, and the base can be recorded (prefix.eligible: no forward hooks, no patch, a policy)."""
    return REUSE_PREFIX and prefix_mb > 0 and prefix.eligible(_sim_variant(base), model)


def nonfinite_share(out: torch.Tensor, ref: torch.Tensor) -> float:
    """The ``nonfinite`` of accuracy.layers.metrics(out, ref), alone: the share of elements non-finite in
    ``out`` where ``ref`` is finite (1.0 when the shapes differ)."""
    if tuple(out.shape) != tuple(ref.shape):
        return 1.0
    n = max(out.numel(), 1)
    return float(((~torch.isfinite(out.detach().reshape(-1))) & torch.isfinite(ref.detach().reshape(-1))).sum()) / n


def _sim_variant(v) -> SimVariant:
    return v.as_variant() if isinstance(v, QuantVariant) else v


class Scorer:
    def __init__(self, model: nn.Module, data: LabelledSet, table_x: torch.Tensor, run: Run,
                 log: Callable[[str], None]):
        self.model, self.data, self.table_x, self.run, self.log = model, data, table_x, run, log
        _, self.ref = FP32.simulator().run(model, (table_x,))      # FP32 per-layer outputs on the fixed batch
        self._scores: dict[str, Score] = {}
        self.evals = 0
        self.eval_seconds = 0.0
        self.backends: set[str] = set()      # where the evaluations ran (evaluate's backend: in-process, local ...)
        self._described: dict | None = None  # data.describe(), once (quant never changes its labelled set)
        self._rows: dict[tuple, tuple] = {}  # run_key(v) -> (the key's objects, v's rows): kept so its ids stay theirs
        self._scans: dict[tuple, tuple] = {}  # run_key(v) -> (the key's objects, first_nonfinite(v))
        self._ran: dict[tuple, object] = {}   # run_key(v) -> v as evaluate runs it, for ROWS_BY_VALUE
        self._rows_state: tuple | None = None  # the model's state_key the three caches above were made on
        self._prefix_from: str | None = None  # the variant whose module outputs later evaluations start from
        self.prefix: prefix.PrefixCache | None = None
        self.replayed = 0                     # evaluations run from the reference's kept outputs
        self._prefix_why = ""                 # why the reference could not be recorded (the status line says it)

    def keep_prefix(self, v) -> None:
        """Keep the module outputs of ``v`` (by name) when it is evaluated, for later variants that equal it up to
        their first changed module (quant/prefix.py); in process only, within ``Run.prefix_mb``."""
        self._prefix_from = v.name

    def reuse_allowed(self) -> bool:
        """Whether prefix reuse is on: allowed, a budget, and the evaluations in this process (evaluate's rule)."""
        r = self.run
        return REUSE_PREFIX and r.prefix_mb > 0 and \
            in_process(len(self.data), r.batch_size, r.workers, r.ray, r.model_spec)

    def prefix_status(self) -> str:
        """One line for the log and the report: whether prefix reuse is on, why not, or what it served."""
        r = self.run
        if not REUSE_PREFIX:
            return "prefix reuse: off (scoring.REUSE_PREFIX False)"
        if r.prefix_mb <= 0:
            return "prefix reuse: off (prefix_mb 0)"
        if not self.reuse_allowed():
            if r.ray:
                return "prefix reuse: off (evaluations on Ray; without a Ray address and with workers=1 it is on)"
            n = layout(len(self.data), r.batch_size, r.workers)[0]
            return f"prefix reuse: off (evaluations in {n} worker processes; workers=1 turns it on)"
        c = self.prefix
        if c is None:
            return f"prefix reuse: off ({self._prefix_why})" if self._prefix_why else \
                f"prefix reuse: on ({r.prefix_mb:g} MB), nothing recorded yet"
        if not c.valid:
            return f"prefix reuse: off ({c.why}); served {c.served} batches of {self.replayed} evaluations before"
        first = f" ({c.first})" if c.first else ""       # batch 0 served, or in full and why
        return (f"prefix reuse: served {c.served} batches of {self.replayed} evaluations{first}, "
                f"{c.held / 2 ** 20:.1f} of {r.prefix_mb:g} MB kept")

    def _prefixed(self, sv):
        """``sv`` as it runs in this evaluation: recording the reference, from its kept outputs, or as it is."""
        r = self.run
        if not self.reuse_allowed() or not isinstance(sv, SimVariant):
            return sv
        if self.prefix is None:
            if sv.name != self._prefix_from:
                return sv
            if not prefix.eligible(sv, self.model):
                self._prefix_why = "the base variant cannot be recorded: forward hooks, a patch, or no policy"
                return sv
            batches = math.ceil(len(self.data) / r.batch_size)
            self.prefix = prefix.PrefixCache(self.model, sv, batches, r.prefix_mb)
            return prefix.Recorder(sv, self.prefix)
        skip = self.prefix.plan_for(sv)
        if not skip:
            return sv
        self.replayed += 1
        return prefix.Replayer(sv, self.prefix, skip)

    # -- labelled evaluation ----------------------------------------------------------------------------------
    def score(self, variants: list, model: nn.Module | None = None) -> dict[str, Score]:
        """Top-1 / top-5 (percent) of each variant on the labelled set, cached by name. ``model``: a changed
        copy of the model (an overflow fix that edits it) -- run in this process."""
        todo = [v for v in variants if v.name not in self._scores]
        if todo:
            t0 = time.monotonic()
            self.log(f"evaluating {', '.join(v.name for v in todo)} on {len(self.data)} samples")
            r = self.run
            # FP32 runs when it is asked for, when it is not cached yet, or beside a changed model (not cached)
            ref = not REUSE_FP32 or "fp32" not in self._scores or model is not None
            svs = [_sim_variant(v) for v in todo]
            if model is None:
                svs = [self._prefixed(sv) for sv in svs]
            res = evaluate(model if model is not None else self.model, self.data, svs,
                           topk=5, batch_size=r.batch_size, workers=r.workers if model is None else 1,
                           ray=r.ray if model is None else None, model_spec=r.model_spec if model is None else None,
                           reference=ref, described=dict(self._described) if REUSE_FP32 and self._described
                           else None)
            self._described = res.data
            self.backends.add(res.backend)
            # the FP32 evaluate() adds is cached too, unless it ran on a changed model (an overflow fix's copy)
            keep = {v.name for v in todo} | ({"fp32"} if model is None else set())
            for name in res.names:
                if name in keep:
                    self._scores[name] = Score(res.topk(name, 1), res.topk(name, 5), res.top1_predictions(name))
            self.evals += len(todo)
            self.eval_seconds += time.monotonic() - t0
        return {v.name: self._scores[v.name] for v in variants}

    def scored(self, name: str) -> Score:
        """The score of a variant already evaluated, by name."""
        return self._scores[name]

    def top1(self, v, model: nn.Module | None = None) -> float:
        return self.score([v], model)[v.name].top1

    # -- engine queries on the fixed batch ------------------------------------------------------------------
    def run_key(self, v: QuantVariant) -> tuple:
        """What a run of ``v`` on this Scorer's model and fixed batch depends on: its engine modes (by identity:
        a variant copied to rename it shares them; a mode is not changed once its variant is built), per-layer
        overrides, function modes, policy, and the model's tensors (an in-place edit, ``p.data = t`` or ``.half()``
        between two queries is a new run; the FP32 reference itself is the model's at construction)."""
        pol = v.policy
        return (pol if isinstance(pol, str) else id(pol),
                tuple((n, id(m)) for n, m in v.layers.items()),
                tuple((n, e.io, e.compute) for n, e in sorted(v.layer_overrides.items())),
                tuple((n, id(m)) for n, m in v.functions.items()),
                prefix.state_key(self.model))

    @staticmethod
    def _keep(v: QuantVariant) -> tuple:
        """The objects whose ids run_key holds, kept alive with the entry so no id is reused while it is cached."""
        return (v.policy, tuple(v.layers.values()), tuple(v.functions.values()))

    def _key(self, v: QuantVariant) -> tuple | None:
        """run_key(v), or (ROWS_BY_VALUE) the key of an earlier run of a deployment equal to ``v`` by value; None
        with REUSE_ROWS off."""
        if not REUSE_ROWS:
            return None
        key = self.run_key(v)
        if self._rows_state is not None and key[-1] != self._rows_state:
            # the model's tensors changed: no entry of the old state can serve again, and each held its weights alive
            self._rows.clear(), self._scans.clear(), self._ran.clear()
        self._rows_state = key[-1]
        if key in self._ran or not ROWS_BY_VALUE:
            return key
        sv = _sim_variant(v)
        for k, seen in self._ran.items():     # all of the model's present state (the caches are emptied on a change)
            if prefix.changed(seen, sv) == set():
                return k
        self._ran[key] = sv
        return key

    def rows(self, v: QuantVariant):
        """Per-layer rows of ``v`` vs FP32 on the fixed batch. A conv with a BatchNorm folded into it is one op on
        the device: its row is compared with the FP32 BatchNorm's output."""
        key = self._key(v)
        if key in self._rows:
            return self._rows[key][1]
        recs, target = self._run_recorded(v)
        rows = compare_runs([dataclasses.replace(r, tensor=t) if t is not r.tensor else r
                             for r, t in ((r, target(r.name)) for r in self.ref)], recs, 0.999)
        if key is not None:
            self._rows[key] = (self._keep(v), rows)
        return rows

    def first_nonfinite(self, v: QuantVariant) -> tuple[str, str, float] | None:
        """(row name, op type, non-finite share) of the first layer row of ``v`` (not a block) whose output holds
        inf/NaN where FP32's is finite -- the row ``rows(v)`` would give, without computing cosines and errors."""
        key = self._key(v)
        if key is None or key in self._rows:
            bad = next((r for r in self.rows(v) if r.nonfinite > 0 and r.op_type != "block"), None)
            return (bad.name, bad.op_type, bad.nonfinite) if bad is not None else None
        if key not in self._scans:
            recs, target = self._run_recorded(v)
            names = {r.name for r in self.ref}
            found = None
            for x in recs:
                if x.name in names and x.op_type != "block":
                    nf = nonfinite_share(x.tensor, target(x.name))
                    if nf > 0:
                        found = (x.name, x.op_type, nf)
                        break
            self._scans[key] = (self._keep(v), found)
        return self._scans[key][1]

    def _run_recorded(self, v: QuantVariant):
        """``v``'s recorded run on the fixed batch, and name -> the FP32 tensor its row is compared with."""
        _, recs = v.simulator().run(self.model, (self.table_x,))
        layers = v.layers
        folded = {m.into: bn for bn, m in layers.items() if isinstance(m, FoldedBatchNorm)}
        by = {r.name: r for r in self.ref}

        def target(name: str):
            m = layers.get(name)
            if isinstance(m, FoldedBatchNorm) and m.into in by:
                name = m.into                  # a folded BatchNorm's row echoes its conv
            t = by[folded[name]].tensor if name in folded and folded[name] in by else by[name].tensor
            m = layers.get(name)
            if isinstance(m, QuantLayer) and m.requant_to is not None and m.requant_to[3]:
                t = t.clamp(min=0)      # AscendRequant hands on ReLU'd codes: compare with the FP32 ReLU output
            return t
        return recs, target

    def nonfinite(self, v: QuantVariant, model: nn.Module | None = None) -> float:
        """Share of ``v``'s outputs on the fixed batch that are inf or NaN."""
        out, _ = v.simulator().run(model if model is not None else self.model, (self.table_x,), record=False)
        o = out if isinstance(out, torch.Tensor) else out[0]
        return float((~torch.isfinite(o.float())).float().mean())

    def input_of(self, v: QuantVariant, layer: str) -> torch.Tensor | None:
        """The input ``layer`` sees in ``v`` on the fixed batch."""
        mod = dict(self.model.named_modules())[layer]
        got = []
        h = mod.register_forward_pre_hook(lambda m, args: got.append(args[0].detach().clone()) if not got else None)
        try:
            v.simulator().run(self.model, (self.table_x,), record=False)
        finally:
            h.remove()
        return got[0] if got else None
