"""CANN's operator test kit (TTK, hicann/ops-test-kit) kernel-mode CSVs, read as TTK reads them and judged by TTK's
comparison methods, for `opkit test --ttk FILE.csv` (docs/cann.md "TTK cases").

ops-math / ops-nn ship their cases as `tests/st/**/ttk_kernel_<op>*.csv` (one row per case). Read here (TTK
read, not copied; hicann/ops-test-kit@157e09c):

- columns (ttk/core_modules/testcase_manager/testcase_op.py, TestcaseOp.*_headers): `testcase_name`, `op_name`,
  `input_shapes`, `input_dtypes`, `output_shapes`, `output_dtypes` (Python tuple literals, one entry per
  tensor), `attributes` (a dict literal, the op's attrs by name), `input_data_ranges` (per input `(lo, hi)`; TTK
  draws each input from its range, ttk/core_modules/framework_api/input_generation.py generate_np_storages ->
  RandomData(dtype, shape, range); here uniformly), `precision_tolerances` (per output `(rtol, ptol)`),
  `absolute_precision` (atol, one or per output), `is_enabled` (0 skips the row). Format columns must be ND.
- comparison (ttk/core_modules/comparison/resolve.py resolve_tolerance): an integer or bool output is judged
  `binary_equal`; a float output by the method asked for (`--ttk-compare`), else TTK's default `stat_rel_err`:
    stat_rel_err (comparison/stat_rel_err.py): NaN/Inf positions and signs must match; over the finite
      elements rel = |a - g| / (|g| + 1e-7), pass iff mean(rel) < T and max(rel) < 10 T, T = 2^-10 float16,
      2^-7 bfloat16, 2^-13 float32 (resolve.py THRESHOLDS).  = opkit's mere_mare (opspec/standard.py) steps 1
      and 4, without its cancellation and small-value rules.
    isclose (comparison/is_close.py): numpy.isclose(a, g, rtol, atol, equal_nan) per element, pass iff the
      share of failing elements <= ptol; rtol/ptol from `precision_tolerances`, atol from
      `absolute_precision` (defaults rtol = ptol = 1e-3 for float16/bfloat16, 1e-4 otherwise, atol 1e-8).
    binary_equal: equal everywhere (NaN equal to NaN) = opkit's bit_exact.
The golden is the op's reference.py (TTK takes its golden from the op's golden function; opkit from the op's
reference): inputs upcast (fp16/bf16 -> fp32, fp32 -> fp64), the result cast to the output dtype.
Tensor lists (the foreach ops' CSVs): a DYNAMIC input's `input_shapes` entry is a tuple of shapes, its
`input_dtypes` / `input_data_ranges` entries a one-element tuple for the whole list (`('bfloat16',)`,
`((-2.0, 2.0),)`), a list output's `precision_tolerances` entry likewise (`((1e-4, 1e-4),)`). The op gets the list
as one DYNAMIC input; the reference gets every list's tensors flat, in order (as an imported op's reference takes
`x_0 ... x_<n-1>`), and returns the list outputs' tensors flat; each output tensor is judged on its own.
"""
from __future__ import annotations

import ast
import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from ..errors import OpkitError

THRESHOLDS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -13}
DEFAULT_THRESHOLD = 2.0 ** -13
MARE_RATIO = 10.0
FLOOR = 1e-7
METHODS = ("stat_rel_err", "isclose", "binary_equal")
_DTYPES = {"float16": torch.float16, "float32": torch.float32, "bfloat16": torch.bfloat16, "float": torch.float32,
           "half": torch.float16, "int32": torch.int32, "int64": torch.int64, "int8": torch.int8,
           "uint8": torch.uint8, "int16": torch.int16, "bool": torch.bool, "float64": torch.float64}
_REQUIRED = ("testcase_name", "op_name", "input_shapes", "input_dtypes", "output_dtypes")


@dataclass
class Case:
    name: str
    op_name: str
    input_shapes: tuple
    input_dtypes: tuple
    output_shapes: tuple | None
    output_dtypes: tuple
    attributes: dict = field(default_factory=dict)
    input_data_ranges: tuple = ()
    precision_tolerances: tuple = ()
    absolute_precision: object = None
    enabled: bool = True
    where: str = ""       # file:row, for messages


def op_key(name: str) -> str:
    """TTK names the op in lower case without separators (`mvnv2`, `abs`); an OpType or snake name -> the same."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def is_arch35(path: Path) -> bool:
    """A CSV of the Ascend 950 kernels (tests/st/arch35/...): A2 is arch22."""
    return "arch35" in Path(path).parts


def _literal(text: str, where: str, column: str):
    text = (text or "").strip()
    if text == "":
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError) as e:
        raise OpkitError(f"{where}: column {column}: not a Python literal ({e.__class__.__name__}): {text[:80]}") \
            from None


def _tuple(v):
    if v is None:
        return ()
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


def is_list(shape) -> bool:
    """A tensor list's entry: a non-empty tuple of shapes (a shape is a tuple of ints; () is a 0-d tensor)."""
    return isinstance(shape, (tuple, list)) and len(shape) > 0 and all(isinstance(d, (tuple, list)) for d in shape)


def _per_list(v):
    """A list's one-element wrapper (`('bfloat16',)`, `((-2.0, 2.0),)`) -> its entry; anything else unchanged."""
    if isinstance(v, (tuple, list)) and len(v) == 1 and isinstance(v[0], (tuple, list, str)):
        return v[0]
    return v


def _list_dtype(d, where: str):
    """A tensor list's dtype entry: one for the list (`('float16',)`) or one per tensor, all the same."""
    ds = set(d) if isinstance(d, (tuple, list)) else {d}
    if len(ds) != 1:
        raise OpkitError(f"{where}: column input_dtypes: a tensor list of mixed dtypes {tuple(d)} (a DYNAMIC input "
                         "has one dtype)")
    return ds.pop()


def read_csv(path: Path) -> list[Case]:
    """Every row of a TTK kernel-mode CSV; bad input names the file, row and column."""
    path = Path(path)
    try:
        rows = list(csv.DictReader(path.read_text(encoding="utf-8-sig").splitlines()))
    except OSError as e:
        raise OpkitError(f"{path}: cannot read the TTK CSV: {e.strerror}") from None
    if not rows:
        raise OpkitError(f"{path}: no cases (a TTK CSV has a header line and one row per case)")
    missing = [c for c in _REQUIRED if c not in rows[0]]
    if missing:
        raise OpkitError(f"{path}: not a TTK kernel-mode CSV: no column {', '.join(missing)}")
    cases = []
    for i, row in enumerate(rows, start=2):
        where = f"{path}:{i}"
        lit = lambda col: _literal(row.get(col, ""), where, col)  # noqa: E731
        for col in ("input_formats", "output_formats"):
            fmts = _tuple(lit(col))
            if any(f != "ND" for f in _flat([list(f) if isinstance(f, (tuple, list)) else f for f in fmts])):
                raise OpkitError(f"{where}: column {col}: {fmts}: only ND is supported (opkit runs ND tensors)")
        shapes = _tuple(lit("input_shapes"))
        dtypes = _tuple(lit("input_dtypes"))
        if len(shapes) != len(dtypes):
            raise OpkitError(f"{where}: {len(shapes)} input_shapes but {len(dtypes)} input_dtypes")
        out_dtypes = tuple(_list_dtype(d, where) if isinstance(d, (tuple, list)) else d
                           for d in _tuple(lit("output_dtypes")))
        dtypes = tuple(_list_dtype(d, where) if is_list(s) else d for s, d in zip(shapes, dtypes))
        for d in dtypes + out_dtypes:
            if not isinstance(d, str) or d not in _DTYPES:
                raise OpkitError(f"{where}: dtype {d!r} is not supported here (known: {', '.join(_DTYPES)})")
        attrs = lit("attributes") or {}
        if not isinstance(attrs, dict):
            raise OpkitError(f"{where}: column attributes: expected a dict literal, got {attrs!r}")
        enabled = (row.get("is_enabled") or "1").strip() not in ("0", "False", "false")
        cases.append(Case(name=row["testcase_name"], op_name=row["op_name"], input_shapes=shapes,
                          input_dtypes=dtypes, output_shapes=lit("output_shapes"),
                          output_dtypes=out_dtypes, attributes=attrs,
                          input_data_ranges=tuple(_per_list(r) if r and isinstance(r[0], (tuple, list)) else r
                                                  for r in _tuple(lit("input_data_ranges"))),
                          precision_tolerances=tuple(_per_list(t) if t and isinstance(t[0], (tuple, list)) else t
                                                     for t in _tuple(lit("precision_tolerances"))),
                          absolute_precision=lit("absolute_precision"), enabled=enabled, where=where))
    return cases


def make_inputs(case: Case, seed: int) -> list:
    """Each input drawn uniformly from its input_data_ranges entry (default [-1, 1]); integers in [lo, hi]. A tensor
    list's entry is a list of tensors, all of the list's dtype and range."""
    g = torch.Generator().manual_seed(seed)

    def draw(shape, dtype, lo, hi):
        if dtype == torch.bool:
            return torch.rand(shape, generator=g) < 0.5
        if dtype.is_floating_point:
            return (torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dtype)
        return torch.randint(int(lo), int(hi) + 1, shape, generator=g).to(dtype)

    xs = []
    for i, (shape, dt) in enumerate(zip(case.input_shapes, case.input_dtypes)):
        r = case.input_data_ranges[i] if i < len(case.input_data_ranges) and case.input_data_ranges[i] else (-1, 1)
        lo, hi = r if not is_list(r) else (-1, 1)       # a tuple of ranges: one per tensor of a list (below)
        dtype = _DTYPES[dt]
        if is_list(shape):
            per = case.input_data_ranges[i] if is_list(case.input_data_ranges[i:i + 1] and
                                                        case.input_data_ranges[i]) else None
            xs.append([draw(tuple(s), dtype, *(per[k] if per and k < len(per) else (lo, hi)))
                       for k, s in enumerate(shape)])
        else:
            xs.append(draw(tuple(shape), dtype, lo, hi))
    return xs


def _flat(xs) -> list:
    return [t for x in xs for t in (x if isinstance(x, list) else [x])]


def method_for(dtype: torch.dtype, asked: str | None) -> str:
    """resolve.py: integers and bool -> binary_equal; floats -> the method asked for, else stat_rel_err."""
    if not dtype.is_floating_point:
        return "binary_equal"
    return asked or "stat_rel_err"


def _name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def compare(out: torch.Tensor, golden: torch.Tensor, case: Case, idx: int, method: str) -> tuple[bool, dict]:
    """(pass, metrics) for output `idx` by TTK's `method`."""
    if out.shape != golden.shape:
        return False, {"standard": method, "reason": f"shape {tuple(out.shape)} vs golden {tuple(golden.shape)}"}
    a = out.detach().double().reshape(-1).numpy()
    g = golden.detach().to(out.dtype).double().reshape(-1).numpy()
    if a.size == 0:
        return True, {"standard": method, "reason": "empty"}
    if method == "binary_equal":
        bad = ~((a == g) | (np.isnan(a) & np.isnan(g)))
        return not bad.any(), {"standard": method, "mismatches": int(bad.sum())}
    if method == "isclose":
        dt = _name(out.dtype)
        low = dt in ("float16", "bfloat16")
        tol = case.precision_tolerances[idx] if idx < len(case.precision_tolerances) else (None, None)
        rtol = tol[0] if tol and tol[0] is not None else (1e-3 if low else 1e-4)
        ptol = tol[1] if tol and len(tol) > 1 and tol[1] is not None else (1e-3 if low else 1e-4)
        ap = case.absolute_precision
        atol = (ap[idx] if isinstance(ap, (tuple, list)) and idx < len(ap) else
                ap if isinstance(ap, (int, float)) else 1e-8)
        ok = np.isclose(a, g, rtol=rtol, atol=atol, equal_nan=True)
        share = float((~ok).mean())
        return share <= ptol, {"standard": method, "rtol": rtol, "atol": atol, "ptol": ptol, "fail_share": share}
    if method != "stat_rel_err":
        raise OpkitError(f"unknown TTK comparison {method!r}; expected one of {', '.join(METHODS)}")
    th = THRESHOLDS.get(_name(out.dtype), DEFAULT_THRESHOLD)
    fin_a, fin_g = np.isfinite(a), np.isfinite(g)
    same_nan = np.isnan(a) & np.isnan(g)
    same_inf = np.isinf(a) & np.isinf(g) & (np.sign(a) == np.sign(g))
    mismatch = (~fin_a | ~fin_g) & ~same_nan & ~same_inf
    if mismatch.any():
        return False, {"standard": method, "threshold": th, "reason": f"NaN/Inf mismatch at {int(mismatch.sum())}"}
    mask = fin_a & fin_g
    if not mask.any():
        return True, {"standard": method, "threshold": th}
    rel = np.abs(a[mask] - g[mask]) / (np.abs(g[mask]) + FLOOR)
    mere, mare = float(rel.mean()), float(rel.max())
    return mere < th and mare < MARE_RATIO * th, {"standard": method, "threshold": th, "mere": mere, "mare": mare}


def golden(reference, inputs: list, attrs: dict) -> tuple[torch.Tensor, ...]:
    """reference(*inputs upcast, **attrs): fp16/bf16 -> fp32, fp32 -> fp64 (the harness's rule, harness/golden.py);
    a tensor list's tensors are passed flat, in order."""
    flat = _flat(inputs)
    up = [x.double() if x.dtype == torch.float32 else x.float() if x.dtype.is_floating_point else x for x in flat]
    try:
        res = reference(*up, **attrs)
    except TypeError as e:
        if len(flat) == len(inputs):
            raise
        raise OpkitError(f"reference.py: called with the case's {len(flat)} tensors flat (its tensor lists "
                         f"expanded in order) and attrs {sorted(attrs)}: {e}; a reference for tensor lists of any "
                         "length takes them as *xs") from None
    return tuple(_flat(res)) if isinstance(res, (tuple, list)) else (res,)


def run_case(op, reference, case: Case, method: str | None, seed: int = 0) -> dict:
    """One case through the op (a CannOp: its TilingFunc, its kernel), judged per output by TTK's method."""
    inputs = make_inputs(case, seed)
    attrs = dict(case.attributes)
    outs = op(inputs, attrs)
    gold = golden(reference, inputs, attrs)
    # each output tensor with its IR output's index (a list output's tolerances are the list's) and its label
    flat = [(i, f"{i}[{k}]" if isinstance(o, list) else str(i), t)
            for i, o in enumerate(outs) for k, t in enumerate(o if isinstance(o, list) else [o])]
    if len(gold) < len(flat) and any(isinstance(o, list) for o in outs):
        raise OpkitError(f"reference.py returned {len(gold)} tensors; the op's outputs hold {len(flat)} "
                         "(its list outputs' tensors flat, in order)")
    results = []
    for (i, label, o), g in zip(flat, gold):
        m = method_for(o.dtype, method)
        ok, metrics = compare(o, g, case, i, m)
        results.append({"output": label if label != str(i) else i, "pass": ok, **metrics})
    return {"case": case.name, "where": case.where, "pass": bool(results) and all(r["pass"] for r in results),
            "outputs": results}
