"""The value distributions of the case matrix: one registry feeds op.yaml's checker (which names may be
listed in ``tests.distributions``), the case ids and pytest markers (``offset200``, ``scale1e4``...), the
report's legend and the sampler.

Each law draws float64 values for a data input (``values: weight|bias|grad`` inputs have their own laws in
cases.py). ``special`` plants +-0, +-inf, NaN and subnormals into N(0,1) data, in every shape kind; every op
gets it (declared or not) in every mode: the data inputs carry them, each at its own places, and each other
floating input (weight, bias, grad) carries them alone in a case of its own (cases.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

OFFSET = {"float16": 200.0, "bfloat16": 200.0, "float32": 1000.0}
BIG_SCALE = {"float16": 1e4, "bfloat16": 1e6, "float32": 1e6}
TINY = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -10, "float32": 2.0 ** -20}
# Smallest positive subnormal per dtype (IEEE binary16: 2^-24; bfloat16: 2^-133; binary32: 2^-149).
SUBNORMAL = {"float16": 2.0 ** -24, "bfloat16": 2.0 ** -133, "float32": 2.0 ** -149}


@dataclass(frozen=True)
class Distribution:
    name: str
    doc: str                                   # the law, as shown in failures and the report
    draw: Callable                             # (shape, dtype, torch.Generator) -> float64 tensor
    tag: Callable[[str], str] | None = None    # dtype -> name in ids/markers (None: the name)
    declarable: bool = True                    # may be listed in op.yaml tests.distributions
    implied_by: str | None = None              # added before this declared distribution
    quick: bool = False                        # part of --quick

    def tag_for(self, dtype: str) -> str:
        return self.tag(dtype) if self.tag else self.name


def _randn(shape, g):
    import torch
    return torch.randn(shape, generator=g, dtype=torch.float64)


def _mixed(shape, dtype, g):
    import torch
    mag = torch.exp2(torch.rand(shape, generator=g, dtype=torch.float64) * 16 - 8)
    sign = (torch.rand(shape, generator=g, dtype=torch.float64) < 0.5).to(torch.float64) * 2.0 - 1.0
    return mag * sign


def plant_specials(z, dtype: str, turn: int = 0):
    """``z`` with special values planted, in every shape kind (1-D and few-row inputs included).

    "Row" = a row of the flattened-to-2D view (last dim kept). With 4 or more rows: NaN in row 0, +inf in
    row 1, -inf in row 2, so each row op sees one special at a time, and +-0/subnormals along row 3. With
    fewer rows (a 1-D input is one row): NaN, +inf, -inf go to odd columns, dealt round the rows, and
    +-0/subnormals to the even columns of row 0; a single column (one element) holds the specials only. Subnormals: the dtype's smallest positive one times 1..3.
    ``turn`` k (the k-th data input of an op) moves the rows by 4k and the columns by k (few rows: by 3k
    odd columns), so two inputs of one case do not carry their specials at the same places (one would
    hide the other's NaN).
    """
    x = z.clone()
    if x.numel() == 0:
        return x
    v = x.reshape(-1, x.shape[-1]) if x.dim() >= 1 else x.reshape(1, 1)
    sub = SUBNORMAL.get(dtype, SUBNORMAL["float16"])
    rows, n = v.shape
    specials = (float("nan"), float("inf"), float("-inf"))
    if rows >= 4:
        r0 = 4 * turn
        for (r, c), val in zip(((r0, n // 2 + turn), (r0 + 1, turn), (r0 + 2, n - 1 + turn)), specials):
            v[r % rows, c % n] = val
        row = v[(r0 + 3) % rows]
    elif n == 1:                 # one column (one element): the specials go down it, nothing else
        for r in range(rows):
            v[r, 0] = specials[(r + turn) % 3]
        return x
    else:
        odd = n // 2                # odd columns 1, 3, ...: the k-th special on odd column k // rows, moved
        for k, val in enumerate(specials):
            if k // rows < odd:
                v[k % rows, 2 * ((k // rows + 3 * turn) % odd) + 1] = val
        row = v[0]
    # +-0 and subnormals along one row (every other element), so the rest stays normal data.
    for j in range(0, n, 2):
        row[j] = (0.0, -0.0, sub, -2 * sub, 3 * sub)[(j // 2) % 5]
    return x


def _sci(v: float) -> str:
    return f"{v:.0e}".replace("+0", "").replace("+", "")


REGISTRY: dict[str, Distribution] = {d.name: d for d in (
    Distribution("normal", "N(0,1)", lambda s, dt, g: _randn(s, g), quick=True),
    Distribution("offset", "N(0,1) + 200 (fp16/bf16) or + 1000 (fp32)",
                 lambda s, dt, g: _randn(s, g) + OFFSET.get(dt, 200.0),
                 tag=lambda dt: f"offset{OFFSET.get(dt, 200.0):g}", quick=True),
    Distribution("scale50", "N(0,1) * 50", lambda s, dt, g: _randn(s, g) * 50.0,
                 declarable=False, implied_by="scale", quick=True),
    Distribution("scale", "N(0,1) * 1e4 (fp16) or * 1e6 (bf16/fp32)",
                 lambda s, dt, g: _randn(s, g) * BIG_SCALE.get(dt, 1e4),
                 tag=lambda dt: "scale" + _sci(BIG_SCALE.get(dt, 1e4))),
    Distribution("tiny", "N(0,1) * small-value boundary (2^-10 fp16/bf16, 2^-20 fp32)",
                 lambda s, dt, g: _randn(s, g) * TINY.get(dt, 2.0 ** -10), quick=True),
    Distribution("mixed", "random sign * 2^U(-8,8)", _mixed),
    Distribution("special", "N(0,1) with +-0, +-inf, NaN, subnormals planted (every shape kind, every input)",
                 lambda s, dt, g: plant_specials(_randn(s, g), dt), quick=True),
)}

DECLARABLE: tuple[str, ...] = tuple(n for n, d in REGISTRY.items() if d.declarable)
DIST_DOC: dict[str, str] = {n: d.doc for n, d in REGISTRY.items()}


def dist_tag(dist: str, dtype: str) -> str:
    """The distribution's name in test ids: ``offset200``, ``scale1e4``, ..."""
    d = REGISTRY.get(dist)
    return d.tag_for(dtype) if d else dist


def all_tags(dtypes) -> list[str]:
    """Every tag a case may carry (pytest markers), in registry order."""
    out: list[str] = []
    for d in REGISTRY.values():
        for dt in dtypes:
            t = d.tag_for(dt)
            if t not in out:
                out.append(t)
    return out


ALWAYS = ("special",)     # run for every op, declared or not: NaN/inf semantics are part of the standard


def expand(declared, mode: str) -> list[str]:
    """The distributions a case matrix runs: the declared ones, each preceded by those it implies
    (``scale`` brings ``scale50``), in declared order, then ``special`` if not declared; ``quick`` keeps
    the quick ones."""
    out: list[str] = []
    for name in list(declared) + [a for a in ALWAYS if a not in declared]:
        out += [d.name for d in REGISTRY.values() if d.implied_by == name and d.name not in out]
        if name not in out:
            out.append(name)
    return [n for n in out if REGISTRY[n].quick] if mode == "quick" else out


def draw(dist: str, dtype: str, shape, g):
    """float64 values of ``dist`` for a data input of ``shape``."""
    if dist not in REGISTRY:
        raise ValueError(f"unknown distribution {dist!r}; expected one of {', '.join(REGISTRY)}")
    return REGISTRY[dist].draw(shape, dtype, g)
