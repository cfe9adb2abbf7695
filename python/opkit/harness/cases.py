"""The case matrix: dtypes x shapes x value distributions (x attr variants), one seed per case.

Shapes are drawn for the lead input's shape tokens (``[..., C]``: ``...`` = the leading dims, whose product
has a declared range; named dims bind across inputs). Per dtype the matrix holds:
- explicit ``tests.shapes`` from op.yaml;
- edge shapes: one element, fewer than 32 bytes, a last dim that is a multiple of neither 16 nor 8,
  one less / one more than a 32-byte and a 256-byte tile of the dtype, row counts that do not divide by the
  910B's 48 vector cores (and fewer rows than cores), the largest declared sizes (capped by ``max_numel``,
  and by DEFAULT_CAP outside ``--full``);
- random draws inside the declared ranges (log-uniform).
Distributions: the registry in distributions.py (data inputs only; ``values: weight|bias|grad`` inputs get
their own fixed laws in make_inputs).

Modes: ``quick`` (edit loop: the first explicit shape, a tail shape, one element; normal/scale50/offset/tiny),
``default`` (core shapes x all distributions, edge shapes x two distributions), ``full`` (everything x
everything, more random draws, largest sizes up to max_numel).
"""
from __future__ import annotations

import math
import random
import zlib
from dataclasses import dataclass, field
from typing import Any

from ..opspec import DTYPES, OpSpec
from ..opspec.distributions import DIST_DOC, dist_tag, draw, expand, plant_specials  # noqa: F401 - DIST_DOC re-exported

CORES_910B = 48           # vector cores of the 910B (opkit/platform.h kAscend910B)
BLOCK_BYTES = 32          # UB alignment / DataCopy unit
REPEAT_BYTES = 256        # one vector repeat
FLOATS = ("float16", "bfloat16", "float32")
DEFAULT_CAP = 1 << 18     # largest lead numel outside --full (keeps the default run fast)
# Shapes every distribution and attr value meets in the default mode ("edge:rows%48" covers rows%48b).
CORE_KINDS = ("explicit", "edge:tail", "edge:rows%48", "edge:numel%48")


@dataclass(frozen=True)
class Case:
    op: str                                  # snake name
    dtype: str                               # lead dtype name (float16 ...)
    shapes: dict[str, tuple[int, ...]]       # input name -> shape
    distribution: str                        # key of DIST_DOC
    seed: int
    attrs: dict[str, Any] = field(default_factory=dict)
    kind: str = "random"                     # explicit | edge:<what> | random
    variant: str = ""                        # attr variant tag ("" = defaults)
    planted: str = ""                        # special: the non-data input carrying them ("" = the data inputs)

    @property
    def lead_shape(self) -> tuple[int, ...]:
        return next(iter(self.shapes.values()))

    @property
    def shape_tag(self) -> str:
        return "x".join(str(d) for d in self.lead_shape) or "scalar"

    @property
    def id(self) -> str:
        parts = [DTYPES[self.dtype][2], self.shape_tag, dist_tag(self.distribution, self.dtype)]
        if self.planted:
            parts.append(self.planted)
        if self.variant:
            parts.append(self.variant)
        return "-".join(parts)

    @property
    def name(self) -> str:
        return f"{self.op}[{self.id}]"

    def as_dict(self) -> dict:
        return {"op": self.op, "id": self.id, "dtype": self.dtype, "shapes": {k: list(v) for k, v in self.shapes.items()},
                "distribution": self.distribution, "distribution_tag": dist_tag(self.distribution, self.dtype),
                "seed": self.seed, "attrs": dict(self.attrs), "kind": self.kind, "variant": self.variant,
                "planted": self.planted}


# -- shapes ---------------------------------------------------------------------------------------

class _Dims:
    """Binds a lead-shape plan (rows for "...", named dims) into concrete shapes for every input."""

    def __init__(self, spec: OpSpec):
        self.spec = spec
        self.lead = list(spec.lead.shape)
        self.ranges = dict(spec.tests.dims)
        self.has_ellipsis = "..." in self.lead
        self.last = self.lead[-1] if self.lead and self.lead[-1] != "..." else None

    def range(self, tok) -> tuple[int, int]:
        if isinstance(tok, int):
            return tok, tok
        return self.ranges.get(tok, (1, 1))

    def clamp(self, tok, v: int) -> int:
        lo, hi = self.range(tok)
        return max(lo, min(hi, int(v)))

    def named(self) -> list[str]:
        return [t for t in self.lead if isinstance(t, str) and t != "..."]

    def _bind(self, vals: dict[str, int], lead_dims: tuple[int, ...]) -> dict[str, tuple[int, ...]]:
        """Every input's shape from its tokens: "..." -> lead_dims, names -> vals (smallest allowed if unbound)."""
        def dim(t):
            return t if isinstance(t, int) else vals.get(t, self.range(t)[0])
        return {inp.name: tuple(d for t in inp.shape for d in (lead_dims if t == "..." else (dim(t),)))
                for inp in self.spec.inputs}

    def make(self, last: int | None, rows: int | None, lead_split: int = 1, rng: random.Random | None = None,
             others: dict[str, int] | None = None) -> dict[str, tuple[int, ...]] | None:
        """Concrete shapes: ``last`` for the last named dim, ``rows`` for the product of the others."""
        vals: dict[str, int] = dict(others or {})
        names = self.named()
        if self.last is not None and isinstance(self.last, str) and last is not None:
            vals[self.last] = self.clamp(self.last, last)
        # Named dims other than the last: smallest allowed unless given.
        for nm in names:
            vals.setdefault(nm, self.range(nm)[0])
        lead_dims: tuple[int, ...] = ()
        if self.has_ellipsis:
            r = self.clamp("...", rows if rows is not None else 1)
            lead_dims = _split(r, lead_split, rng)
        return self._bind(vals, lead_dims)

    def from_explicit(self, shape: tuple[int, ...]) -> dict[str, tuple[int, ...]]:
        """Bind an explicit lead shape from tests.shapes."""
        vals: dict[str, int] = {}
        fixed = [t for t in self.lead if t != "..."]
        n_lead = len(shape) - len(fixed)
        lead_dims = tuple(shape[:n_lead]) if self.has_ellipsis else ()
        for t, v in zip(fixed, shape[n_lead:]):
            if isinstance(t, str):
                vals[t] = v
        return self._bind(vals, lead_dims)


def _split(n: int, parts: int, rng: random.Random | None) -> tuple[int, ...]:
    """n as a product of up to ``parts`` factors (random factorisation when rng is given)."""
    if parts <= 1 or n <= 1:
        return (n,)
    divs = [d for d in range(2, int(math.isqrt(n)) + 1) if n % d == 0]
    if not divs:
        return (n,)
    d = rng.choice(divs) if rng else divs[0]
    return (d, n // d)


def _numel(shape) -> int:
    return math.prod(shape)


def _shape_plans(spec: OpSpec, dtype: str, mode: str, rng: random.Random) -> list[tuple[str, dict]]:
    """(kind, shapes) pairs for one dtype, deduplicated, in a stable order. kind: explicit | edge:* | random."""
    d = _Dims(spec)
    item = _itemsize(dtype)
    cap = spec.tests.max_numel if mode == "full" else min(spec.tests.max_numel, DEFAULT_CAP)
    last_lo, last_hi = d.range(d.last) if d.last is not None else (1, 1)
    rows_lo, rows_hi = d.range("...") if d.has_ellipsis else (1, 1)
    plans: list[tuple[str, dict]] = []

    def add(kind: str, shapes: dict | None):
        if not shapes:
            return
        lead = next(iter(shapes.values()))
        if _numel(lead) > spec.tests.max_numel and not kind.startswith("explicit"):
            return
        plans.append((kind, shapes))

    for s in spec.tests.shapes:
        add("explicit", d.from_explicit(tuple(s)))
    per32, per256 = max(1, BLOCK_BYTES // item), max(1, REPEAT_BYTES // item)
    # Row length that is a multiple of neither 16 nor 8 (odd), mid-sized.
    tail = _odd_in(last_lo, last_hi, 1001)
    add("edge:tail", d.make(tail, 37))
    # Counts of rows (or of elements, for an input without a row dim) that do not divide by the cores.
    rk = "rows" if d.last is not None else "numel"
    add(f"edge:{rk}%48", d.make(_pick(last_lo, last_hi, 256), CORES_910B + 2))
    add("edge:one", d.make(last_lo, rows_lo))
    add("edge:<32B", d.make(min(last_hi, max(last_lo, (BLOCK_BYTES - 1) // item)), 1))
    for name, t in (("32B", per32), ("256B", per256)):
        for delta in (-1, 1):
            v = t + delta
            if last_lo <= v <= last_hi:
                add(f"edge:{name}{delta:+d}", d.make(v, 5))
    add(f"edge:{rk}<48", d.make(_pick(last_lo, last_hi, 100), 5))
    add(f"edge:{rk}%48b", d.make(_odd_in(last_lo, last_hi, 33), 2 * CORES_910B + 1))
    # Largest declared sizes within the cap: the longest row, and the most rows.
    if d.last is not None:
        add("edge:max-last", d.make(last_hi, max(rows_lo, min(rows_hi, cap // max(last_hi, 1)))))
    if d.has_ellipsis:
        rows = rows_hi
        lastv = max(last_lo, min(last_hi, cap // max(rows, 1)))
        add(f"edge:max-{rk}", d.make(lastv, min(rows_hi, max(rows_lo, cap // max(lastv, 1)))))
    n_random = {"quick": 0, "default": 2, "full": 6}[mode]
    for _ in range(n_random):
        for _try in range(50):
            lastv = _loguniform(rng, last_lo, last_hi)
            rows = _loguniform(rng, rows_lo, rows_hi)
            if lastv * rows <= cap:
                break
        add("random", d.make(lastv, rows, lead_split=rng.choice((1, 2)), rng=rng))
    # Dedupe by lead shape, keeping the first kind.
    seen, out = set(), []
    for kind, shapes in plans:
        key = tuple(tuple(v) for v in shapes.values())
        if key not in seen:
            seen.add(key)
            out.append((kind, shapes))
    if mode == "quick":
        wanted = []
        explicit = [p for p in out if p[0] == "explicit"]
        wanted += explicit[:1] or [p for p in out if p[0] == f"edge:{rk}%48"][:1]
        wanted += [p for p in out if p[0] in ("edge:tail", "edge:one")]
        out = wanted
    return out


def _itemsize(dtype: str) -> int:
    return {"float16": 2, "bfloat16": 2, "float32": 4, "int32": 4, "int64": 8, "bool": 1}[dtype]


def _odd_in(lo: int, hi: int, want: int) -> int:
    """A value near ``want`` inside [lo, hi] that is not a multiple of 8 (odd when possible)."""
    v = max(lo, min(hi, want))
    for cand in (v, v - 1, v + 1, v - 2, v + 2):
        if lo <= cand <= hi and cand % 8:
            return cand
    return v


def _pick(lo: int, hi: int, want: int) -> int:
    return max(lo, min(hi, want))


def _loguniform(rng: random.Random, lo: int, hi: int) -> int:
    if hi <= lo:
        return lo
    return max(lo, min(hi, int(round(math.exp(rng.uniform(math.log(lo), math.log(hi + 1)) )))))


# -- distributions and attrs ---------------------------------------------------------------------

def _distributions(spec: OpSpec, mode: str) -> list[str]:
    return expand(spec.tests.distributions, mode)


@dataclass(frozen=True)
class Variant:
    """One attr changed from its default (``attr`` None: all defaults). ``value`` of a dim attr is resolved
    per shape (``"first"``/``"middle"`` or an int, normalised to the rank; a dim equal to the default's is
    skipped). ``wide``: crossed with every shape; else (numeric values) with the core shapes only, outside
    --full."""
    attr: str | None = None
    value: Any = None
    wide: bool = True


def float_values(a) -> tuple[float, ...]:
    """Default values of a float attr without tests.attrs: its default, 10x and 1/10 of it (same sign: safe
    for eps-like attrs; list the values that matter, negative ones too, in tests.attrs)."""
    d = float(a.default)
    return (d, d * 10, d / 10) if d else (0.0, 0.5, 2.0)


def _variants(spec: OpSpec) -> list[Variant]:
    """Defaults; each other choice of a str attr; the other keepdim; each value of tests.attrs (else: a
    float attr's default and two more values, a dim attr's first, middle and last dim)."""
    out = [Variant()]
    for a in spec.attrs:
        listed = spec.tests.attrs.get(a.name)
        if a.type == "str" and a.choices:
            out += [Variant(a.name, ch) for ch in (listed or a.choices) if ch != a.default]
        elif a.type == "bool":
            if a.role == "keepdim" or listed:
                out += [Variant(a.name, v) for v in (listed or (not a.default,)) if v != a.default]
        elif a.role == "dim":
            out += [Variant(a.name, v, wide=False) for v in (listed or ("first", "middle"))]
        elif a.type == "float" and a.default is not None:
            out += [Variant(a.name, v, wide=False) for v in (listed or float_values(a)) if v != a.default]
        elif listed:
            out += [Variant(a.name, v, wide=False) for v in listed if v != a.default]
    return out


def _resolve(spec: OpSpec, v: Variant, rank: int) -> tuple[str, dict] | None:
    """(variant tag, attrs) for a lead shape of ``rank``, or None when the variant does not apply."""
    base = {a.name: a.default for a in spec.attrs if a.default is not None}
    if v.attr is None:
        return "", base
    a = next(x for x in spec.attrs if x.name == v.attr)
    if a.role != "dim":
        tag = (str(v.value) if a.type == "str" else f"{a.name}{int(v.value)}" if a.type == "bool"
               else f"{a.name}{v.value:g}" if a.type == "float" else f"{a.name}{v.value}")
        return tag, {**base, a.name: v.value}
    if rank < 1:
        return None
    pos = {"first": 0, "middle": rank // 2}.get(v.value, v.value)
    if not -rank <= pos < rank or pos % rank == (a.default if a.default is not None else -1) % rank:
        return None
    return f"{a.name}{pos % rank}", {**base, a.name: pos % rank}


def case_seed(base_seed: int, op: str, case_id: str) -> int:
    return zlib.crc32(f"{base_seed}:{op}:{case_id}".encode()) & 0x7FFFFFFF


def build_matrix(spec: OpSpec, mode: str = "default", seed: int = 0) -> list[Case]:
    """Every case of ``spec`` for ``mode`` (quick | default | full), deterministic for a given seed."""
    if mode not in ("quick", "default", "full"):
        raise ValueError(f"unknown mode {mode!r}; expected quick, default or full")
    dists = _distributions(spec, mode)
    variants = _variants(spec)
    cases: list[Case] = []
    for dtype in spec.dtypes:
        rng = random.Random(f"{seed}:{spec.snake}:{dtype}")
        plans = _shape_plans(spec, dtype, mode, rng)
        for i, (kind, shapes) in enumerate(plans):
            core = kind.startswith(CORE_KINDS)
            # Edge and random shapes: N(0,1) plus one other distribution, rotating.
            others = [x for x in dists if x != "normal"]
            two = [x for x in ["normal"] + ([others[i % len(others)]] if others else []) if x in dists] or dists[:1]
            chosen = two if mode == "default" and not core else dists
            rank = len(next(iter(shapes.values())))
            for dist in chosen:
                if dist == "special" and dtype not in FLOATS:
                    continue            # NaN/inf cannot be planted in integer or bool inputs
                for v in variants:
                    if v.attr is not None and mode == "quick" and (dist != "normal" or not v.wide):
                        continue
                    if not v.wide and mode == "default" and (not core or dist not in two):
                        continue
                    got = _resolve(spec, v, rank)
                    if got is None:
                        continue
                    vtag, attrs = got
                    # special: the data inputs carry them; then each other input alone (default attrs),
                    # so a weight's NaN, which reaches every row, does not hide what x or dy do.
                    plants = [""] + ([i.name for i in spec.inputs if i.values != "data"]
                                     if dist == "special" and v.attr is None else [])
                    for planted in plants:
                        c = Case(spec.snake, dtype, shapes, dist, 0, attrs, kind, vtag, planted)
                        cases.append(Case(spec.snake, dtype, shapes, dist, case_seed(seed, spec.snake, c.id),
                                          attrs, kind, vtag, planted))
    # Ids must be unique (pytest ids); keep the first of any duplicate.
    seen, out = set(), []
    for c in cases:
        if c.id not in seen:
            seen.add(c.id)
            out.append(c)
    return out


def make_inputs(spec: OpSpec, case: Case):
    """The case's input tensors (torch, CPU), in op.yaml order, in the case's dtype."""
    import torch

    g = torch.Generator().manual_seed(case.seed)
    tdtype = getattr(torch, DTYPES[case.dtype][0])
    # `special`: the data inputs carry the special values, the k-th at its own places (turn k) -- or only
    # the input the case names (case.planted).
    special = case.distribution == "special" and tdtype.is_floating_point
    turn = 0
    out = []
    for inp in spec.inputs:
        shape = case.shapes[inp.name]
        if inp.values == "weight":
            x = 1.0 + 0.5 * torch.randn(shape, generator=g, dtype=torch.float64)
        elif inp.values == "bias":
            x = 0.5 * torch.randn(shape, generator=g, dtype=torch.float64)
        elif inp.values == "grad":
            x = torch.randn(shape, generator=g, dtype=torch.float64)
        else:
            x = draw("normal" if special else case.distribution, case.dtype, shape, g)
        if special and (inp.name == case.planted if case.planted else inp.values == "data"):
            x = plant_specials(x, case.dtype, turn=turn)
            turn += 1
        out.append(x.to(tdtype))
    return out
