"""Prefix reuse for the search's labelled evaluations: a variant whose engine modes equal a reference variant's up
to its first changed module computes the same activations as the reference up to there, so it starts from the
reference's outputs instead of running the model's prefix again.

How (scoring.Scorer drives it, in process only):

- The reference (the base all-INT8 variant, ``Scorer.keep_prefix``) is evaluated through ``Recorder``: hooks on
  every module the engine sees (not inside a module it runs as one op) record, per batch, the order modules start
  and end, who reads each output, and which modules write into (or return a view of) a tensor they were given.
  The first batch records that and the output shapes and makes the plan; while it runs, every module output the
  plan could keep is copied as it is made (``SERVE_FIRST``: each its own clone, taken at the module's end as a
  later batch's is; no copy shared between two modules, so a container's output is copied as well as its
  children's; a module's first call is copied, and dropped when it is called again), and after the plan the
  copies the plan keeps stay, so the first batch is served too -- only when every output the plan keeps was
  copied within the budget; else it runs in full in every evaluation (it is never run a second time: that would
  repeat whatever the forward writes; the status line says which, ``PrefixCache.first``). Later batches copy only
  the outputs the plan keeps. The kept outputs and the kept inputs (to find a batch again) stay within a memory
  budget (``prefix_mb``); the transient memory of a forward is the model's own, plus the copies of that batch's
  kept outputs (the first batch's: of every output it could keep, up to the budget less its input).
- For another variant ``Replayer`` finds the modules whose engine mode (or per-layer override) differs from the
  reference's (``changed``: same type, every dataclass field equal, tensors by identity or equal bits; the
  ``overflow`` notes a run appends aside) -- the policy, op overrides, function modes, patch and naive
  settings must be the same. With k the first changed module to start (execution order), the variant's run is
  given the outputs of the maximal modules that ended before k starts, each called once in a batch, returning
  one tensor and writing into none of its inputs (``Simulator.run(given=...)``): the model's own forward runs as
  before, those calls return a copy of the reference's output (a copy: the forward may write into it in place),
  the rest runs. An in-place module (``ReLU(inplace=True)``, ``x += f(x)``, a view such as Flatten) is never
  given: skipped, its write would miss the other names for its tensor; it reruns on a copy of its input. An
  output nothing that runs reads gets a NaN placeholder (a missed read shows in the logits). A skip connection
  around k needs nothing special: what the forward does with a module's output after k is computed as before.

Why the same bits: up to k both runs execute the same Python with the same engine modes on the same tensors --
the same model object with every parameter and buffer unchanged (``state_key``: non-persistent buffers too;
identity, version, storage, dtype, shape: checked per evaluation, the cache is dropped on a change), the same
batch (compared with torch.equal; a batch not recorded runs in full), the same order of module calls, readers and
in-place writers in every batch (checked while recording; a model whose calls differ between batches is not
reused), no random numbers drawn (the RNG state is compared around each recorded batch). Assumed, as for every
cached run in quant: a module's output depends only on its inputs, parameters and buffers (eval mode; no state
written between calls; tensors kept as plain attributes are not checked), a variant's mode object is not
changed after it is built (the reference's modes are fingerprinted at the recording and checked, ``modes_print``;
a variant's are compared live), the model's code reads tensors through torch's
functions (``__torch_function__``) and passes them in containers pytree walks (a tensor inside an unregistered
object, such as an HF ``Cache``, is not seen as a read: a NaN placeholder would show it), and no forward hooks
(a model with hooks is not reused). Skipped modules add no ``Simulator.notes``: the variant's notes miss the
prefix's (quant does not report them). Off with ``scoring.REUSE_PREFIX = False`` or ``prefix_mb=0``.
"""
from __future__ import annotations

import bisect
import dataclasses
import math
import weakref

import torch
import torch.nn as nn
from torch.utils._pytree import tree_leaves

from ..accuracy.simulate import atomic_modules, inside
from ..evaluate.variants import SimVariant

_QUANTIZED = {torch.qint8, torch.quint8, torch.qint32, torch.quint4x2, torch.quint2x4}
DEFAULT_MB = 256.0        # memory the kept outputs may take (scoring.Run.prefix_mb)
# True: while the reference's first batch runs (it makes the plan), every module output the plan could keep (not an
# in-place writer or view, not quantized, not a module called again) is copied as it is made, each its own clone,
# up to the budget less the batch's input; after the plan the copies it keeps stay and the first batch is served
# too, if none is missing. False: the first batch only plans and runs in full in every evaluation (tests and the
# benchmark compare the two).
SERVE_FIRST = True


class _Held:
    """A tensor in a state key, equal only to a part holding the same tensor. It keeps the tensor and its storage
    alive (an alias), so while a key lives no other tensor gets its id or data pointer: with ids and pointers alone,
    ``p.data = t`` twice could give a key equal to a kept one over other weights (a freed block reused)."""
    __slots__ = ("t", "alias")

    def __init__(self, t: torch.Tensor):
        self.t, self.alias = t, t.detach()

    def __eq__(self, other) -> bool:
        return isinstance(other, _Held) and other.t is self.t

    def __hash__(self) -> int:
        return id(self.t)

    def __reduce__(self):
        # a key copied to another process would carry every weight and never equal the original: refuse it
        raise TypeError("a prefix state key holds the model's tensors by identity; it is not pickled")


def state_key(model: nn.Module) -> tuple:
    """What a run depends on in the model's tensors (an in-place op on a parameter, ``p.data = t``, ``.half()`` or a
    transposed ``.data`` changes it): every parameter and buffer, non-persistent buffers included (``state_dict``
    leaves those out: rotary tables, masks). Not seen: tensors kept as plain attributes (assumed constant), and writes
    through ``p.data`` or a NumPy view (they bump another version counter) -- after such an edit, use a new Scorer.
    Shared with ``Scorer.run_key``."""
    named = list(model.named_parameters(remove_duplicate=False)) + list(model.named_buffers(remove_duplicate=False))
    return tuple((n, _Held(t), t._version, t.data_ptr(), t.dtype, tuple(t.shape), t.stride(), t.storage_offset())
                 for n, t in named)


def _nbytes(shape: tuple, dtype: torch.dtype) -> int:
    return math.prod(shape) * dtype.itemsize


def _poison(shape: tuple, dtype: torch.dtype) -> torch.Tensor:
    """A placeholder's value: NaN (an integer dtype's extreme: its minimum, an unsigned one's maximum), so a read the
    recording missed shows in the logits instead of computing on whatever memory held. One element expanded to the
    shape: it takes no memory, and a write into it (nothing may write into a dead output) raises."""
    if dtype.is_floating_point or dtype.is_complex:
        v = float("nan")
    elif dtype == torch.bool:
        v = True
    else:
        info = torch.iinfo(dtype)
        v = info.max if info.min == 0 else info.min
    return torch.full((), v, dtype=dtype).expand(shape)


def _same(a, b) -> bool:
    if a is b:
        return True
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype == b.dtype
                and a.shape == b.shape and bool(torch.equal(a, b)))
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys() and \
            all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b)
    except Exception:         # noqa: BLE001 - a value without a plain equality is not known to be the same
        return False


def same_mode(a, b) -> bool:
    """Whether two engine modes run a module the same way: the same object, or the same dataclass type with every
    field equal (tensors by identity or equal bits) except ``overflow`` (the notes a run appends)."""
    if a is b:
        return True
    if a is None or b is None or type(a) is not type(b) or not dataclasses.is_dataclass(a):
        return False
    return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a) if f.name != "overflow")


def _print(x):
    """A value's fingerprint: tensors by (identity, version, storage, dtype, shape), containers walked, other
    values by repr (a field changed in place after the recording shows)."""
    if isinstance(x, torch.Tensor):
        return ("T", id(x), x._version, x.data_ptr(), x.dtype, tuple(x.shape))
    if isinstance(x, dict):
        return ("D",) + tuple((k, _print(v)) for k, v in x.items())
    if isinstance(x, (list, tuple)):
        return (type(x).__name__,) + tuple(_print(v) for v in x)
    return repr(x)


def modes_print(v: SimVariant) -> tuple:
    """The reference's modes as they were recorded with (``overflow`` aside): ``same_mode`` compares the live
    objects, so a mode changed in place after the recording is caught here."""
    return tuple((n, type(m).__name__, tuple((f.name, _print(getattr(m, f.name))) for f in dataclasses.fields(m)
                                             if f.name != "overflow") if dataclasses.is_dataclass(m) else repr(m))
                 for n, m in sorted(v.layers.items()))


def changed(ref: SimVariant, v: SimVariant) -> set[str] | None:
    """The modules ``v`` runs otherwise than ``ref`` (engine mode or per-layer override), or None when the two
    differ in what applies to every op (policy, op overrides, function modes, patch, naive kernels)."""
    if (ref.policy is not v.policy and not (isinstance(ref.policy, str) and ref.policy == v.policy)) \
            or ref.functions or v.functions or ref.patch or v.patch or ref.naive != v.naive \
            or ref.mixlist != v.mixlist or not _same(ref.overrides, v.overrides):
        return None
    names = set(ref.layers) | set(v.layers) | set(ref.layer_overrides) | set(v.layer_overrides)
    return {n for n in names if not same_mode(ref.layers.get(n), v.layers.get(n))
            or not _same(ref.layer_overrides.get(n), v.layer_overrides.get(n))}


def _hooked(model: nn.Module) -> bool:
    """Whether a forward hook sits on the model or globally (a hook could change what a kept output is)."""
    from torch.nn.modules import module as M
    if M._global_forward_hooks or M._global_forward_pre_hooks:
        return True
    return any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())


def eligible(v: SimVariant, model: nn.Module) -> bool:
    """A variant and model prefix reuse can serve: run by the engine (a policy or modes), no function modes or
    patch, and the model without forward hooks (``prepare`` puts it in eval mode)."""
    if v.patch or v.functions or v.policy is None:   # the policy's mode sees the model's own ops (Recorder)
        return False
    return not _hooked(model)


def between(events: list) -> float:
    """Where a read by a function op or the caller sits: after the last event, before the next (a module call
    reads at its own start event, an integer)."""
    return len(events) - 0.5


def _storage(t: torch.Tensor) -> int:
    try:
        return t.untyped_storage().data_ptr()
    except RuntimeError:      # a tensor without storage (sparse, a wrapper subclass): shares nothing we can see
        return 0


class PrefixCache:
    """The reference variant's module outputs per batch, and the plan of which outputs serve which variant."""

    def __init__(self, model: nn.Module, ref: SimVariant, batches: int, budget_mb: float = DEFAULT_MB):
        self.model, self.ref, self.batches, self.budget = model, ref, batches, budget_mb * 2 ** 20
        self.state = state_key(model)
        self.modes = modes_print(ref)
        atomic = atomic_modules(model)
        self.atomic = set(atomic)
        # the model itself too: a variant whose modes all equal the reference's gets its output whole
        self.visible = [(n, m) for n, m in model.named_modules() if not inside(n, atomic)]
        self.children = {n: [f"{n}.{c}" if n else c for c, _ in m.named_children()]
                         for n, m in model.named_modules() if not inside(n, atomic) and n not in atomic}
        self.events: tuple | None = None   # batch 0's module starts and ends, in order
        self.start: dict[str, int] = {}
        self.end: dict[str, int] = {}
        self.calls: dict[str, int] = {}
        self.writes: frozenset = frozenset()   # modules that write into or alias a tensor they were given
        self.cacheable: set[str] = set()       # called once, one tensor out, no write into their inputs
        self.keep: set[str] | None = None   # outputs kept (after the first batch)
        self.xs: list[torch.Tensor] = []
        self.outs: list[dict[str, torch.Tensor]] = []
        self.held = 0                       # bytes of xs and outs: never above the budget
        self.uses: tuple = ()
        self.metas: list[dict[str, tuple]] = []   # per batch: name -> (shape, dtype) of an output not kept
        self.placed: set[str] = set()             # outputs some plan hands out as a placeholder
        # first change's start event -> (outputs given, placeholders); its module: ``served``
        self.plans: dict[float, tuple[set, set]] = {}
        self.served_k: dict[float, str] = {}
        self._empty: dict[tuple, torch.Tensor] = {}
        self.valid = True
        self.why = ""
        self.served = 0                     # batches a variant ran from kept outputs
        self.first = ""                     # how batch 0 runs in a served evaluation, and why (the status line)

    # -- recording ----------------------------------------------------------------------------------------
    @property
    def full(self) -> bool:
        """Every batch recorded (a second evaluation of the reference records nothing more)."""
        return len(self.xs) >= self.batches

    def record(self, x: torch.Tensor, events: list, outs: dict, uses: list, metas: dict, writes=()) -> None:
        """One batch of the reference: module ``events`` (("s" | "e", name) in order), ``outs`` (name -> a copy of
        its output; for the first batch, which makes the plan, whatever ``first_room`` let it copy), ``uses``
        ((producer, event index, consumer) for every module output read by a module call, a function op of the
        model's own code (consumer None) or returned ("<return>")), ``metas`` (name -> the output's shape and
        dtype), ``writes`` (modules that wrote into or returned a view of a tensor they were given)."""
        if not self.valid or self.full:
            return
        ev, us, ws = tuple(events), tuple(uses), frozenset(writes)
        if self.events is None:
            self.events, self.uses, self.writes = ev, us, ws
            self._plan(metas, x.nbytes)
            if not self.valid:
                return
            if not (self.keep <= outs.keys()):   # no copies (SERVE_FIRST off) or one missing: never served,
                self.xs.append(None)              # batch 0 runs in full in every evaluation
                self.outs.append({})
                self.metas.append({})
                self.first = "batch 0 in full: SERVE_FIRST off" if not SERVE_FIRST else \
                    f"batch 0 in full: its copies passed the room ({self._room(x) / 2 ** 20:.3g} MB, prefix_mb " \
                    "less its input)"
                return
            self.first = "batch 0 served"
            # the plan fits every batch's input and kept outputs in the budget: batch 0's too
        elif ev != self.events or us != self.uses or ws != self.writes:
            self._drop("the module calls differ between batches")
            return
        kept = {n: t for n, t in outs.items() if n in self.keep}
        size = x.nbytes + sum(t.nbytes for t in kept.values())
        if self.held + size > self.budget:     # a later batch larger than the first: nothing past the budget
            self._drop(f"the kept outputs would exceed the prefix budget ({self.budget / 2 ** 20:g} MB)")
            return
        self.held += size
        self.xs.append(x.clone())
        self.outs.append(kept)
        self.metas.append({n: metas[n] for n in self.placed if n in metas})

    def first_room(self, x: torch.Tensor) -> int | None:
        """Bytes the first batch may copy while it runs (every output, before the plan says which to keep): the
        budget less the batch's input; None: it copies nothing (``SERVE_FIRST`` off, or not the first batch)."""
        if not SERVE_FIRST or self.events is not None or not self.valid:
            return None
        return self._room(x)

    def _room(self, x: torch.Tensor) -> int:
        return max(int(self.budget) - x.nbytes, 0)

    def _plan(self, metas: dict, x_bytes: int) -> None:
        for i, (what, n) in enumerate(self.events):
            if what == "s":
                self.start.setdefault(n, i)
                self.calls[n] = self.calls.get(n, 0) + 1
            else:
                self.end[n] = i
        # a module writing into its input (an in-place ReLU, ``x += f(x)``) or returning a view of it is never
        # skipped: skipped, its write would miss the other names for that tensor. It reruns on its input's copy.
        # a quantized tensor (torch.ao) has no placeholder value: such an output is never skipped
        self.cacheable = {n for n in metas if self.calls.get(n) == 1 and n not in self.writes
                          and metas[n][1] not in _QUANTIZED}
        per_batch = {n: _nbytes(*metas[n]) for n in self.cacheable}
        budget = self.budget - x_bytes * self.batches      # each batch's input is kept too (to find it again)
        keep: set[str] = set()
        # Which first changes to serve, within the budget. Candidates: the modules the reference runs in a mode of
        # its own or with an override (what a variant changes: quantized layers and what is folded into them;
        # a variant changing another module uses the plan of the latest served first change before it), and
        # nothing changed (the model's output, k = "" at event infinity). Served first: the one adding the fewest
        # bytes to what is kept (ties: the later, which skips more) -- as many as fit, spread over the model.
        # Of the modules a plan skips, only the outputs read by what still runs are kept; the others get a
        # placeholder (nothing reads them).
        cands = {}
        for k in [""] + [n for n in set(self.ref.layers) | set(self.ref.layer_overrides) if n in self.start]:
            at = math.inf if k == "" else self.start[k]
            skip = self.skip_for(at)
            if skip:                             # the first module: nothing before it to skip
                cands[k] = (at, skip, self.live(skip, at))
        size = lambda names: sum(per_batch[n] for n in names) * self.batches       # noqa: E731
        while cands:
            k = min(cands, key=lambda n: (size(cands[n][2] - keep), -cands[n][0]))
            at, skip, live = cands.pop(k)
            if size(keep | live) > budget:
                break
            keep |= live
            self.plans[at] = (live, skip - live)
            self.served_k[at] = k
            self.placed |= skip - live
        self.keep = keep
        self.plans = dict(sorted(self.plans.items()))
        if not self.plans:    # nothing to serve: record no inputs either
            self._drop(f"the kept outputs would exceed the prefix budget ({self.budget / 2 ** 20:g} MB)")

    def skip_for(self, k_start: int) -> set[str]:
        """The outermost modules that ended before event ``k_start``, called once, with one tensor out (the model
        itself when nothing changed: ``k_start`` infinite)."""
        if k_start == math.inf and "" in self.cacheable:
            return {""}
        got: set[str] = set()
        todo = list(self.children.get("", []))
        while todo:
            n = todo.pop()
            if n not in self.start or self.start[n] >= k_start:
                continue
            if self.end.get(n, math.inf) < k_start and n in self.cacheable:
                got.add(n)
            else:
                todo.extend(self.children.get(n, []))
        return got

    def live(self, skip: set[str], at: float) -> set[str]:
        """Of the modules ``skip`` (all ended before event ``at``), those whose output something that still runs
        reads: a module call or function op outside every skipped module, anything at or after ``at``, or the
        caller (the model's output)."""
        spans = [(self.start[g], self.end[g]) for g in skip]
        need = set()
        for prod, i, _ in self.uses:
            if prod in skip and prod not in need and (i >= at or not any(a <= i <= b for a, b in spans)):
                need.add(prod)
        return need

    def _drop(self, why: str) -> None:
        self.valid, self.why = False, why
        self.state = None           # nothing reads it once dropped; it held the recorded weights alive
        self.xs, self.outs, self.held, self._empty = [], [], 0, {}

    @property
    def covered(self) -> list[tuple[float, str]]:
        """(start event, module) of the first changes a plan serves, in order."""
        return [(at, self.served_k[at]) for at in self.plans]

    # -- serving ------------------------------------------------------------------------------------------
    def plan_for(self, v: SimVariant) -> set[str] | None:
        """The modules ``v``'s run is given (a kept output, or a placeholder where nothing reads it), or None
        (runs in full)."""
        if not self.valid or self.events is None:
            return None
        if state_key(self.model) != self.state:
            self._drop("the model's parameters or buffers changed")
            return None
        if modes_print(self.ref) != self.modes:
            self._drop("the reference's engine modes changed")
            return None
        if _hooked(self.model):        # a hook added since the recording
            return None
        diff = changed(self.ref, v)
        if diff is None:
            return None
        k_start = min((self.start[n] for n in diff if n in self.start), default=math.inf)
        starts = list(self.plans)               # sorted
        i = bisect.bisect_right(starts, k_start)
        if i == 0:
            return None
        live, dead = self.plans[starts[i - 1]]
        return (live | dead) or None

    def given(self, i: int, skip: set[str]) -> dict:
        """Batch ``i``'s outputs for the modules ``skip``: a copy of a kept one (the forward may write into it), a
        placeholder of the output's shape and dtype for one nothing that runs reads (NaN: a missed read shows)."""
        kept, metas = self.outs[i], self.metas[i]
        out = {}
        for n in skip:
            if n in kept:
                out[n] = kept[n].clone
            else:
                shape, dtype = metas[n]
                t = self._empty.get((shape, dtype))
                if t is None:
                    t = self._empty[(shape, dtype)] = _poison(shape, dtype)
                out[n] = lambda t=t: t
        return out

    def find(self, x: torch.Tensor, hint: int) -> int | None:
        """The recorded batch equal to ``x`` (tried at ``hint`` first: batches run in the same order)."""
        order = [hint] + [i for i in range(len(self.xs)) if i != hint] if hint < len(self.xs) else range(len(self.xs))
        for i in order:
            r = self.xs[i]
            if r is not None and r.dtype == x.dtype and r.shape == x.shape and torch.equal(r, x):
                return i
        return None


class _Wrapped:
    """A variant run another way in this process; never sent to a worker (its cache would fill the worker's copy)."""

    def __init__(self, inner: SimVariant, cache: PrefixCache):
        self.inner, self.cache, self.name = inner, cache, inner.name

    def describe(self) -> dict:
        return self.inner.describe()

    def warm(self) -> None:
        self.inner.warm()

    def __reduce__(self):
        raise TypeError(f"{type(self).__name__} ({self.name}): prefix reuse runs in process only; it cannot be "
                        "sent to a worker (see evaluate.runner.in_process)")


class Recorder(_Wrapped):
    """The reference variant, run as usual while its batch's module order and outputs go into the cache. The first
    batch records the module order, reads and output shapes, and makes the plan; with ``SERVE_FIRST`` it copies
    every module output as it is made (within ``first_room``) and the plan's stay (it runs once: running it twice
    would repeat whatever the forward writes); later batches copy the outputs the plan keeps (no copy of anything
    else is held past its batch). A forward that writes the model's parameters or buffers drops the cache."""

    def prepare(self, model: nn.Module):
        model.eval()
        sim = self.inner.simulator()
        cache = self.cache
        plain = lambda x: sim.run(model, (x,), record=False)[0]       # noqa: E731
        if model is not cache.model:
            return plain

        def run(x):
            if not cache.valid or cache.full:
                return plain(x)
            rng = torch.random.get_rng_state()
            out = self._record(sim, model, x, cache.keep, cache.first_room(x))
            if not torch.equal(rng, torch.random.get_rng_state()):   # a skipped draw would shift every later one
                cache._drop("the model draws random numbers")
            elif cache.valid and state_key(model) != cache.state:   # a skipped module's write would be missed
                cache._drop("the model's forward writes its parameters or buffers")
            return out
        return run

    def _record(self, sim, model: nn.Module, x: torch.Tensor, want, room: int | None = None) -> torch.Tensor:
        """One batch of the reference, run with hooks that put its module order, reads, writes and (``want``)
        output copies into the cache. ``room`` (the first batch, before the plan): every module's output copied
        at its end while the copies fit ``room`` bytes -- each its own clone, as a later batch's kept output is (a
        copy shared with another module, e.g. a container returning its child's output, would miss a write made
        between the two ends that moves no version counter: ``.data``, NumPy)."""
        cache = self.cache
        first = None if room is None else _Room(room)     # the first batch's copies (None: a later batch)
        events: list = []
        outs: dict = {}
        uses: list = []
        metas: dict = {}
        writes: set = set()
        # id of a module's output -> (a weak reference to it, the modules that returned that object); weak: an
        # output is freed when the forward drops it, and an id reused afterwards is told apart by the reference
        made: dict[int, tuple] = {}
        given: dict[str, list] = {}          # module -> per open call, its inputs (tensor, version, storage)

        def read(obj, consumer):
            # a module call reads at its own start event; a function op or the caller between two events
            at = len(events) if consumer is not None and consumer != "<return>" else between(events)
            for t in tree_leaves(obj):
                if isinstance(t, torch.Tensor):
                    got = made.get(id(t))
                    if got is not None and got[0]() is t:
                        for prod in got[1]:
                            uses.append((prod, at, consumer))

        def pre(name):
            def hook(m, args, kwargs):
                sim.depth += 1        # what the hook reads is no op of the model: the mode lets it by
                try:
                    read((args, kwargs), name)
                    given.setdefault(name, []).append(
                        [(t, t._version, _storage(t)) for t in tree_leaves((args, kwargs))
                         if isinstance(t, torch.Tensor)])
                finally:
                    sim.depth -= 1
                events.append(("s", name))
            return hook

        def post(name):
            def hook(m, args, out):
                events.append(("e", name))
                sim.depth += 1        # what the hook reads and copies is no op of the model: the mode lets it by
                try:
                    ins = given[name].pop()
                    outs_ptr = {_storage(t) for t in tree_leaves(out) if isinstance(t, torch.Tensor)} - {0}
                    if any(t._version != v or p in outs_ptr for t, v, p in ins):
                        writes.add(name)
                    if not isinstance(out, torch.Tensor):
                        return
                    got = made.get(id(out))
                    if got is not None and got[0]() is out:
                        got[1].append(name)
                    else:
                        made[id(out)] = (weakref.ref(out), [name])
                    metas[name] = (tuple(out.shape), out.dtype)
                    _copy_out(name, out, outs, want, first, writes)
                finally:
                    sim.depth -= 1
            return hook
        hs = []
        try:
            for n, m in cache.visible:
                hs.append(m.register_forward_pre_hook(pre(n), with_kwargs=True))
                hs.append(m.register_forward_hook(post(n)))
            sim.observe = lambda args, kwargs: read((args, kwargs), None)
            out = sim.run(model, (x,), record=False)[0]
            read(out, "<return>")
        finally:
            sim.observe = None
            for h in hs:
                h.remove()
        cache.record(x, events, outs, uses, metas, writes)
        return out


class _Room:
    """The first batch's copies, made before the plan says which to keep: ``left`` bytes may still be copied;
    ``passed`` once a copy would have passed them (then no more: batch 0 is kept only if the plan needs none of the
    outputs left uncopied). A module called a second time is never kept (the plan keeps modules called once), so
    its first call's copy is dropped and its bytes count as room again, and no later call of it is copied."""

    def __init__(self, left: int):
        self.left, self.passed = left, False
        self.seen: set[str] = set()

    def copy(self, name: str, out: torch.Tensor, outs: dict, writes: set) -> None:
        if name in self.seen:
            dropped = outs.pop(name, None)
            if dropped is not None:
                self.left += dropped.nbytes
            return
        self.seen.add(name)
        # not an in-place writer or view, not a torch.ao quantized tensor: the plan could keep it
        if self.passed or name in writes or out.dtype in _QUANTIZED:
            return
        nb = out.nbytes
        if nb <= self.left:
            self.left -= nb
            outs[name] = out.detach().clone()
        else:
            self.passed = True


def _copy_out(name: str, out: torch.Tensor, outs: dict, want, first: _Room | None, writes: set) -> None:
    """At ``name``'s end: a copy of its output if the plan keeps it (``want``, a later batch), or -- the first
    batch -- whatever ``first`` (its room) lets it copy; each its own clone."""
    if want:
        if name in want:
            outs[name] = out.detach().clone()
    elif first is not None:
        first.copy(name, out, outs, writes)


class Replayer(_Wrapped):
    """A variant run from the reference's kept outputs of ``skip`` (the modules before its first change)."""

    def __init__(self, inner: SimVariant, cache: PrefixCache, skip: set[str]):
        super().__init__(inner, cache)
        self.skip = skip

    def prepare(self, model: nn.Module):
        model.eval()
        sim = self.inner.simulator()
        cache, skip = self.cache, sorted(self.skip)
        calls = [0]

        def run(x):
            i = cache.find(x, calls[0]) if model is cache.model else None
            calls[0] += 1
            if i is None:
                return sim.run(model, (x,), record=False)[0]
            cache.served += 1
            return sim.run(model, (x,), record=False, given=cache.given(i, skip))[0]
        return run
