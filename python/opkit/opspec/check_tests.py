"""The ``tests:`` and ``accuracy:`` sections of op.yaml (check.py reads the rest). Allowed names come from
their owners: distributions from the harness's registry, accuracy settings from the standard."""
from __future__ import annotations

from .distributions import DECLARABLE as DISTRIBUTIONS
from .standard import OVERRIDE_KEYS
from .model import DTYPES, AccuracySpec, AttrSpec, InputSpec, TestSpec, attr_value_ok
from .yaml_nodes import Checker as _Checker
from .yaml_nodes import Node as _Node
from .yaml_nodes import kind as _kind

STANDARDS = ("mere_mare", "bit_exact")


def _tests(c: _Checker, node: _Node | None, inputs: list[InputSpec], attrs: list[AttrSpec]) -> TestSpec:
    named = []
    for i in inputs:
        for t in i.shape:
            if isinstance(t, str) and t not in named:
                named.append(t)
    if node is None or node.value is None:
        if named:
            c.error(None, f"missing; expected tests.dims with a [min, max] range for {', '.join(named)}",
                    line=1, field="tests")
        return TestSpec(dims={})
    m = c.mapping(node, ("dims", "max_numel", "shapes", "distributions", "attrs"))
    if m is None:
        return TestSpec(dims={})
    dims: dict[str, tuple[int, int]] = {}
    if "dims" in m:
        dn = m["dims"]
        if not isinstance(dn.value, dict):
            c.error(dn, f"expected a mapping dim name -> [min, max]; got {_kind(dn.value)}")
        else:
            for k, v in dn.value.items():
                if k not in named:
                    c.error(v, f"dim {k!r} appears in no input shape (shape dims: {', '.join(named) or 'none'})")
                lst = v.value
                if (not isinstance(lst, list) or len(lst) != 2
                        or any(isinstance(x.value, bool) or not isinstance(x.value, int) for x in lst)):
                    c.error(v, f"expected [min, max] (two integers); got {v.value!r}" if not isinstance(lst, list)
                            else f"expected [min, max] (two integers); got {[x.value for x in lst]!r}")
                    continue
                lo, hi = lst[0].value, lst[1].value
                if lo < 1 or hi < lo:
                    c.error(v, f"expected 1 <= min <= max; got [{lo}, {hi}]")
                    continue
                dims[k] = (lo, hi)
    for n in named:
        if n not in dims:
            c.error(m.get("dims", node), f"no range for shape dim {n!r}; expected {n}: [min, max]",
                    field=f"{node.path}.dims")
    max_numel = 4_000_000
    if "max_numel" in m:
        max_numel = c.integer(m["max_numel"], "an element count", minimum=1) or max_numel
    shapes: list[tuple[int, ...]] = []
    if "shapes" in m:
        lead = inputs[0].shape if inputs else ()
        for s in c.seq(m["shapes"], "shapes (lists of ints)", allow_empty=True) or []:
            dims_ = c.seq(s, "dim sizes", allow_empty=True)
            if dims_ is None:
                continue
            vals = [c.integer(d, "a dim size", minimum=0) for d in dims_]
            if any(v is None for v in vals):
                continue
            fixed = len([t for t in lead if t != "..."])
            if ("..." in lead and len(vals) < fixed) or ("..." not in lead and len(vals) != fixed):
                c.error(s, f"shape {vals} does not fit the lead input's shape {list(lead)}")
            shapes.append(tuple(vals))
    dists = DISTRIBUTIONS
    if "distributions" in m:
        got = [c.string(d, "a distribution", DISTRIBUTIONS) for d in c.seq(m["distributions"], "distributions") or []]
        dists = tuple(d for d in got if d)
    attr_values = _attr_values(c, m["attrs"], attrs) if "attrs" in m else {}
    return TestSpec(dims=dims, max_numel=max_numel, shapes=tuple(shapes), distributions=dists, attrs=attr_values)


def _attr_values(c: _Checker, node: _Node, attrs: list[AttrSpec]) -> dict[str, tuple]:
    """tests.attrs: {attr: [values]}, the values the case matrix tries (the default is always tried)."""
    if not isinstance(node.value, dict):
        c.error(node, f"expected a mapping attr name -> [values]; got {_kind(node.value)}")
        return {}
    by_name = {a.name: a for a in attrs}
    out: dict[str, tuple] = {}
    for k, v in node.value.items():
        a = by_name.get(k)
        if a is None:
            c.error(v, f"{k!r} is not an attr of this op ({', '.join(by_name) or 'none'})", field=f"{node.path}.{k}")
            continue
        vals = []
        for x in c.seq(v, f"values of {k}") or []:
            value = [y.value if isinstance(y, _Node) else y for y in x.value] if isinstance(x.value, list) else x.value
            ok = attr_value_ok(a.type, value)
            if not ok:
                c.error(x, f"{x.value!r} is {_kind(x.value)}; expected a {a.type} (the attr's type)")
            elif a.choices and x.value not in a.choices:
                c.error(x, f"{x.value!r} is not one of the attr's choices {list(a.choices)}")
            else:
                vals.append(float(value) if a.type == "float" else value)
        out[k] = tuple(vals)
    return out


def _accuracy(c: _Checker, node: _Node | None) -> AccuracySpec:
    if node is None or node.value is None:
        return AccuracySpec()
    m = c.mapping(node, ("standard", "overrides", "baseline_tolerance"))
    if m is None:
        return AccuracySpec()
    tolerance = None
    if "baseline_tolerance" in m:
        t = m["baseline_tolerance"]
        if isinstance(t.value, bool) or not isinstance(t.value, (int, float)) or t.value < 1:
            c.error(t, f"expected a number >= 1 (allowed growth factor of MERE/MARE/max rel); got {t.value!r}")
        else:
            tolerance = float(t.value)
    standard = "mere_mare"
    if "standard" in m:
        standard = c.string(m["standard"], "an accuracy standard", STANDARDS) or standard
    overrides: dict[str, dict[str, float]] = {}
    if "overrides" in m and m["overrides"].value is not None:
        on = m["overrides"]
        if not isinstance(on.value, dict):
            c.error(on, f"expected a mapping dtype -> {{setting: number}}; got {_kind(on.value)}")
        else:
            for dt, v in on.value.items():
                if dt not in DTYPES:
                    c.error(v, f"{dt!r} is not a dtype; expected one of {', '.join(DTYPES)}", field=f"{on.path}.{dt}")
                if not isinstance(v.value, dict):
                    c.error(v, f"expected a mapping setting -> number; got {_kind(v.value)}")
                    continue
                entry = {}
                for k, x in v.value.items():
                    if k not in OVERRIDE_KEYS:
                        c.error(x, f"unknown accuracy setting {k!r}; expected one of {', '.join(OVERRIDE_KEYS)}",
                                field=f"{v.path}.{k}")
                    elif isinstance(x.value, bool) or not isinstance(x.value, (int, float)):
                        c.error(x, f"expected a number; got {_kind(x.value)} {x.value!r}")
                    else:
                        entry[k] = float(x.value)
                overrides[dt] = entry
    return AccuracySpec(standard=standard, overrides=overrides, baseline_tolerance=tolerance)
