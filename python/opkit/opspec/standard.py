"""The accuracy standard opkit adopts (docs/facts/accuracy-standards.md, "recommendation").

Float outputs (``mere_mare``), per output element, after the golden is cast to the output dtype for the
non-finite check (a golden beyond the dtype's range must come out as +-inf):

1. NaN/Inf: positions (and the sign of infinities) must match the golden exactly; matched non-finite
   elements then leave every numeric metric.
2. Cancellation rule (opkit's addition, see docs/harness.md): each element has an *error scale* s_i, the
   magnitude of the terms that were summed to form it (reference.py's ``error_scale()``, else estimated
   from the fp64 reference's sensitivity to relative input perturbations). A correct kernel computing in
   the op's compute dtype (unit roundoff u_c, 2^-24 for FP32) can be off by E_i = K * u_c * s_i through
   rounding alone (K = 2^6 rounding errors: tree reductions of up to 2^24 terms, the per-element ops and
   the golden's own FP32 rounding for fp16/bf16 cases). An element is *cancelled* when that unavoidable
   error exceeds the relative budget, ``E_i > T * |gold_i|``; its relative error is then meaningless, and
   it must instead meet ``|out_i - gold_i| <= T * |gold_i| + E_i`` — or ``<= A`` if that is larger and
   ``|gold_i| <= S`` (an output rounded near zero carries an absolute error). Zero violations allowed.
3. Small-value domain: (not cancelled) elements with ``|gold_i| <= S`` must meet ``|out_i - gold_i| <= A``
   (S = 2^-10 fp16/bf16, 2^-20 fp32; A = 2^-16 fp16/bf16, 2^-30 fp32). Zero violations by default.
4. All other elements: ``rel_i = |out_i - gold_i| / (|gold_i| + 1e-7)``; PASS iff MERE = mean(rel) < T and
   MARE = max(rel) < 10*T, with T = 2^-10 fp16, 2^-7 bf16, 2^-13 fp32.

Integer/bool outputs, and every output of a ``bit_exact`` op: equal to the golden (cast to the output
dtype) everywhere, NaN positions included.

Per-op overrides (op.yaml ``accuracy.overrides: {dtype: {key: value}}``) may set any of OVERRIDE_KEYS;
they are recorded with every case in the report.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace

# Threshold T per output dtype (ecosystem single-benchmark standard, docs/facts/accuracy-standards.md §2.2).
THRESHOLD = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -13, "float64": 2.0 ** -13}
# Small-value domain: boundary S and absolute tolerance A (msprobe, docs/facts/accuracy-standards.md §2.1).
SMALL_VALUE = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -10, "float32": 2.0 ** -20, "float64": 2.0 ** -20}
SMALL_ATOL = {"float16": 2.0 ** -16, "bfloat16": 2.0 ** -16, "float32": 2.0 ** -30, "float64": 2.0 ** -30}
MARE_RATIO = 10.0
REL_EPS = 1e-7            # denominator guard of the MERE/MARE formula
CANCEL_K = 64.0           # rounding errors of the compute dtype a correct kernel may accumulate
# Unit roundoff of a compute dtype (round to nearest: 2^-(mantissa bits + 1)).
UNIT_ROUNDOFF = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24, "float64": 2.0 ** -53}

OVERRIDE_KEYS = ("threshold", "mare_ratio", "small_value", "small_atol", "small_budget", "cancel_k")


@dataclass(frozen=True)
class Thresholds:
    dtype: str
    standard: str            # mere_mare | bit_exact
    threshold: float         # T
    mare_ratio: float        # MARE < mare_ratio * T
    small_value: float       # S
    small_atol: float        # A
    small_budget: float      # allowed share of small-value violations (0 = none)
    cancel_k: float
    compute_unit: float      # unit roundoff of the op's compute dtype
    overridden: tuple[str, ...] = ()   # keys set by op.yaml

    def as_dict(self) -> dict:
        d = asdict(self)
        d["overridden"] = list(self.overridden)
        return d


def thresholds(dtype: str, standard: str = "mere_mare", overrides: dict | None = None,
               compute_dtype: str = "float32") -> Thresholds:
    """The thresholds for one output dtype, with the op's overrides for that dtype applied."""
    if standard not in ("mere_mare", "bit_exact"):
        raise ValueError(f"unknown accuracy standard {standard!r}; expected mere_mare or bit_exact")
    float_like = dtype in THRESHOLD
    t = Thresholds(
        dtype=dtype,
        standard=standard if float_like else "bit_exact",
        threshold=THRESHOLD.get(dtype, 0.0),
        mare_ratio=MARE_RATIO,
        small_value=SMALL_VALUE.get(dtype, 0.0),
        small_atol=SMALL_ATOL.get(dtype, 0.0),
        small_budget=0.0,
        cancel_k=CANCEL_K,
        compute_unit=UNIT_ROUNDOFF.get(compute_dtype, UNIT_ROUNDOFF["float32"]),
    )
    ov = dict((overrides or {}).get(dtype, {}))
    bad = sorted(set(ov) - set(OVERRIDE_KEYS))
    if bad:
        raise ValueError(f"accuracy.overrides.{dtype}: unknown key(s) {', '.join(bad)}; "
                         f"expected some of {', '.join(OVERRIDE_KEYS)}")
    if ov:
        t = replace(t, **{k: float(v) for k, v in ov.items()}, overridden=tuple(sorted(ov)))
    return t
