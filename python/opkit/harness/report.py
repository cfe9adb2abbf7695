"""Reports of a harness run: JSON (machines), HTML with plots (people), and the console summary.

JSON: ``{"opkit_report": 1, "mode", "seed", "seconds", "standard", "summary", "cases": [...], "opcheck": [...]}``.
Each case: ``op, id, dtype, shapes, distribution, distribution_tag, seed, attrs, kind, verdict ("pass"/"fail"),
reason, metrics (metrics.METRICS, plus violation counts), naive_metrics (same keys, or null), naive_note,
thresholds (T, overrides...), outputs (per output), device_model (roofline.model: modelled 910B time,
estimates), launch_stats, op_seconds, input_range, rerun``.
"""
from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import json
import math
from collections import defaultdict
from pathlib import Path

from ..opspec.distributions import DIST_DOC
from .metrics import METRICS
from ..opspec.standard import CANCEL_K, MARE_RATIO, SMALL_ATOL, SMALL_VALUE, THRESHOLD

STANDARD_DOC = (
    "mere_mare (docs/facts/accuracy-standards.md recommendation): MERE < T and MARE < 10T over elements judged "
    "relatively, T = 2^-10 fp16, 2^-7 bf16, 2^-13 fp32; small-value domain |golden| <= S judged on "
    "|err| <= A; NaN/Inf positions must match; cancelled elements (K*u_c*scale > T*|golden|, K = 64) "
    "judged on |err| <= T*|golden| + K*u_c*scale; integer/bool outputs bit-exact.")


def score(rec: dict) -> float:
    """How far a case is from its limit (>= 1 fails): max(MERE/T, MARE/10T); inf for a failure without
    numbers (crash, NaN mismatch)."""
    m, thr = rec.get("metrics") or {}, rec.get("thresholds") or {}
    t = thr.get("threshold")
    if m.get("mere") is None or not t:
        return math.inf if rec.get("verdict") != "pass" else 0.0
    s = max(m["mere"] / t, m["mare"] / (thr.get("mare_ratio", MARE_RATIO) * t))
    if rec.get("verdict") != "pass" and s < 1:
        return max(s, 1.0)      # failed on another rule (NaN/Inf, cancelled, small values)
    return s


def naive_score(rec: dict) -> float | None:
    m, thr = rec.get("naive_metrics") or {}, rec.get("thresholds") or {}
    t = thr.get("threshold")
    if not m or not t:
        return None
    if m.get("mere") is None or m.get("nonfinite_mismatch"):
        return math.inf
    s = max(m["mere"] / t, m["mare"] / (thr.get("mare_ratio", MARE_RATIO) * t))
    return max(s, 1.0) if not m.get("passed", True) else s


def _group(cases: list[dict]) -> dict:
    by_op: dict[str, dict] = {}
    for c in cases:
        op = by_op.setdefault(c["op"], {"cases": 0, "failed": 0, "by_dtype": defaultdict(lambda: [0, 0]),
                                        "by_distribution": defaultdict(lambda: [0, 0]),
                                        "by_shape": defaultdict(lambda: [0, 0])})
        bad = c.get("verdict") != "pass"
        op["cases"] += 1
        op["failed"] += bad
        lead = next(iter((c.get("shapes") or {"?": []}).values()))
        shape = "x".join(map(str, lead))
        if c.get("kind", "").startswith("edge"):
            shape += f" ({c['kind'][5:]})"
        for key, val in (("by_dtype", c.get("dtype")), ("by_distribution", c.get("distribution_tag")),
                         ("by_shape", shape)):
            op[key][val][0] += bad
            op[key][val][1] += 1
    return {k: {**v, "by_dtype": dict(v["by_dtype"]), "by_distribution": dict(v["by_distribution"]),
                "by_shape": dict(v["by_shape"])} for k, v in by_op.items()}


def _assert_close_count(cases: list[dict]) -> dict:
    """How many float cases torch.testing.assert_close (default tolerances) would pass: shown beside the
    verdict, because users compare against it and it disagrees with the standard in both directions."""
    judged = [(c.get("metrics") or {}).get("assert_close") for c in cases]
    judged = [j for j in judged if j is not None]
    return {"judged": len(judged), "passed": sum(bool(j) for j in judged)}


def assemble(cases: list[dict], opchecks: list[dict], *, mode: str, seed: int, seconds: float) -> dict:
    cases = sorted(cases, key=lambda c: (c.get("op", ""), c.get("dtype", ""), c.get("id", "")))
    failed = sum(c.get("verdict") != "pass" for c in cases)
    op_failed = sum(c.get("verdict") != "pass" for c in opchecks)
    return {
        "opkit_report": 1,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "mode": mode, "seed": seed, "seconds": round(seconds, 3),
        "standard": {"doc": STANDARD_DOC, "threshold": THRESHOLD, "mare_ratio": MARE_RATIO,
                     "small_value": SMALL_VALUE, "small_atol": SMALL_ATOL, "cancel_k": CANCEL_K,
                     "distributions": DIST_DOC},
        "summary": {"cases": len(cases), "passed": len(cases) - failed, "failed": failed,
                    "assert_close": _assert_close_count(cases),
                    "opcheck": len(opchecks), "opcheck_failed": op_failed,
                    "verdict": "pass" if not failed and not op_failed and cases else "fail",
                    "by_op": _group(cases)},
        "cases": cases,
        "opcheck": opchecks,
    }


def _clean(v):
    """Strict JSON: non-finite floats become strings ("inf", "nan")."""
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


def write_json(data: dict, path: Path) -> Path:
    path = Path(path)
    path.write_text(json.dumps(_clean(data), indent=1, default=str, allow_nan=False))
    return path


def _fails_line(groups: dict) -> str:
    bad = [(k, v) for k, v in groups.items() if v[0]]
    return ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in sorted(bad, key=lambda kv: -kv[1][0]))


def summary_text(data: dict, json_path, html_path, extra_json, collect_errors) -> str:
    s = data["summary"]
    lines = [f"opkit test: {s['cases']} cases, {s['passed']} passed, {s['failed']} failed; opcheck "
             f"{s['opcheck'] - s['opcheck_failed']}/{s['opcheck']} passed (mode {data['mode']}, seed "
             f"{data['seed']}, {data['seconds']:.1f} s)"]
    for op, g in s["by_op"].items():
        if not g["failed"]:
            lines.append(f"  {op}: all {g['cases']} cases pass")
            continue
        lines.append(f"  {op}: FAILED {g['failed']} of {g['cases']} cases")
        for key, label in (("by_dtype", "dtypes"), ("by_distribution", "distributions"), ("by_shape", "shapes")):
            lines.append(f"    failing {label}: {_fails_line(g[key])}")
        worst = sorted((c for c in data["cases"] if c["op"] == op and c.get("verdict") != "pass"),
                       key=score, reverse=True)
        for c in worst[:8]:
            lines.append(f"    [{c['id']}] {c.get('reason', '')[:240]}")
            lines.append(f"        rerun alone: {c.get('rerun', '')}")
        if len(worst) > 8:
            lines.append(f"    ... {len(worst) - 8} more in the report")
    # One line per op and reason (a missing backward op fails every dtype's opcheck the same way).
    failed: dict[tuple[str, str], list[dict]] = {}
    for c in data["opcheck"]:
        if c.get("verdict") != "pass":
            failed.setdefault((c["op"], c.get("reason", "")), []).append(c)
    for (op, reason), cs in failed.items():
        lines.append(f"  {op} opcheck ({', '.join(str(c.get('dtype')) for c in cs)}): {reason[:300]}")
        lines.append(f"        rerun alone: {cs[0].get('rerun', '')}")
    for e in collect_errors:
        lines.append(f"  collection error: {e[:600]}")
    lines.append(f"report: {json_path}")
    if extra_json:
        lines.append(f"json: {extra_json}")
    if html_path:
        lines.append(f"html report: {html_path}")
    ac = s.get("assert_close") or {}
    note = (f" (torch.testing.assert_close with default tolerances: {ac['passed']} of {ac['judged']} float cases "
            "pass; not part of the verdict)") if ac.get("judged") else ""
    lines.append("verdict: " + ("PASS" if s["verdict"] == "pass" and not collect_errors else "FAIL") + note)
    return "\n".join(lines)


# -- HTML ----------------------------------------------------------------------------------------

def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    import matplotlib.pyplot as plt
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _cap(v, hi=1e4, lo=1e-6):
    if v is None:
        return None
    return min(max(v, lo), hi)


def _plots(cases: list[dict]) -> list[tuple[str, str]]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = []
    colors = {"float16": "tab:blue", "bfloat16": "tab:orange", "float32": "tab:green"}
    float_cases = [c for c in cases if (c.get("thresholds") or {}).get("threshold")]
    # 1. error vs shape
    fig, ax = plt.subplots(figsize=(7, 4))
    for dt, col in colors.items():
        cs = [c for c in float_cases if c["dtype"] == dt]
        if not cs:
            continue
        xs = [max(1, math.prod(next(iter(c["shapes"].values())))) for c in cs]
        ax.scatter(xs, [_cap(score(c)) for c in cs], color=col, s=14, label=f"opkit {dt}")
        nv = [(x, _cap(naive_score(c))) for x, c in zip(xs, cs) if naive_score(c) is not None]
        if nv:
            ax.scatter([a for a, _ in nv], [b for _, b in nv], facecolors="none", edgecolors=col, s=14,
                       label=f"naive AMP {dt}")
    ax.axhline(1.0, color="red", lw=1, ls="--", label="limit")
    ax.set(xscale="log", yscale="log", xlabel="elements of the lead input",
           ylabel="max(MERE/T, MARE/10T) (capped 1e4)", title="Error vs shape")
    ax.legend(fontsize=7, ncol=2)
    out.append(("Error vs shape", _png(fig)))
    # 2. error by distribution (worst case per distribution, opkit vs naive)
    dists = sorted({c.get("distribution_tag", "") for c in float_cases})
    if dists:
        fig, ax = plt.subplots(figsize=(7, 4))
        w = 0.4
        for k, (label, fn, hatch) in enumerate((("opkit", score, None), ("naive AMP", naive_score, "//"))):
            vals = []
            for d in dists:
                v = [fn(c) for c in float_cases if c.get("distribution_tag") == d]
                v = [x for x in v if x is not None]
                vals.append(_cap(max(v)) if v else 1e-6)
            ax.bar([i + (k - 0.5) * w for i in range(len(dists))], vals, width=w, label=label, hatch=hatch,
                   color="tab:green" if k == 0 else "tab:gray")
        ax.axhline(1.0, color="red", lw=1, ls="--")
        ax.set_xticks(range(len(dists)), dists, rotation=30, fontsize=8)
        ax.set(yscale="log", ylabel="worst max(MERE/T, MARE/10T)", title="Error by distribution (all dtypes)")
        ax.legend(fontsize=8)
        out.append(("Error by distribution", _png(fig)))
    # 3. worst cases
    worst = sorted(float_cases, key=score, reverse=True)[:15]
    if worst:
        fig, ax = plt.subplots(figsize=(7, 0.3 * len(worst) + 1))
        ax.barh([f"{c['op']}[{c['id']}]" for c in worst][::-1], [_cap(score(c)) for c in worst][::-1],
                color=["tab:red" if c.get("verdict") != "pass" else "tab:green" for c in worst][::-1])
        ax.axvline(1.0, color="red", lw=1, ls="--")
        ax.set(xscale="log", xlabel="max(MERE/T, MARE/10T) (inf capped 1e4)", title="Worst cases")
        ax.tick_params(axis="y", labelsize=7)
        out.append(("Worst cases", _png(fig)))
    # 4. opkit vs naive
    pairs = [(naive_score(c), score(c), c["dtype"]) for c in float_cases if naive_score(c) is not None]
    if pairs:
        fig, ax = plt.subplots(figsize=(5, 5))
        for dt, col in colors.items():
            p = [(_cap(a), _cap(b)) for a, b, d in pairs if d == dt]
            if p:
                ax.scatter([a for a, _ in p], [b for _, b in p], color=col, s=14, label=dt)
        ax.plot([1e-6, 1e4], [1e-6, 1e4], color="gray", lw=1)
        ax.axhline(1.0, color="red", lw=1, ls="--")
        ax.axvline(1.0, color="red", lw=1, ls="--")
        ax.set(xscale="log", yscale="log", xlabel="naive AMP (compute dtype = I/O dtype)", ylabel="opkit",
               title="opkit vs naive AMP: max(MERE/T, MARE/10T)")
        ax.legend(fontsize=8)
        out.append(("opkit vs naive AMP", _png(fig)))
    # 5. modelled device time
    dm = [(c["device_model"]["hbm_floor_s"], c["device_model"]["modelled_s"], c["dtype"]) for c in cases
          if isinstance(c.get("device_model"), dict) and c["device_model"].get("modelled_s")]
    if dm:
        fig, ax = plt.subplots(figsize=(5, 5))
        for dt, col in colors.items():
            p = [(a * 1e6, b * 1e6) for a, b, d in dm if d == dt and a > 0]
            if p:
                ax.scatter([a for a, _ in p], [b for _, b in p], color=col, s=14, label=dt)
        lo = min(a for a, _, _ in dm if a > 0) * 1e6 if any(a > 0 for a, _, _ in dm) else 1e-3
        hi = max(b for _, b, _ in dm) * 1e6
        ax.plot([lo, hi], [lo, hi], color="gray", lw=1, label="= HBM floor")
        ax.plot([lo, hi], [1.3 * lo, 1.3 * hi], color="gray", lw=1, ls=":", label="1.3x floor")
        ax.set(xscale="log", yscale="log", xlabel="HBM floor (us, estimate)", ylabel="modelled 910B time (us, estimate)",
               title="Modelled device time (roofline, estimates)")
        ax.legend(fontsize=8)
        out.append(("Modelled device time", _png(fig)))
    return out


def _fmt(v, spec=".3g") -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return format(v, spec)
    return str(v)


def write_html(data: dict, path: Path) -> Path:
    cases = data["cases"]
    s = data["summary"]
    e = html.escape
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>opkit harness report</title><style>",
             "body{font-family:sans-serif;margin:1.5em;font-size:13px}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 5px;text-align:right}td.l,th.l{text-align:left}"
             "tr.fail{background:#fdd}img{margin:6px;border:1px solid #eee}.note{color:#555}",
             "</style></head><body>",
             f"<h1>opkit harness report — {'PASS' if s['verdict'] == 'pass' else 'FAIL'}</h1>",
             f"<p>{s['cases']} cases, {s['passed']} passed, {s['failed']} failed; opcheck "
             f"{s['opcheck'] - s['opcheck_failed']}/{s['opcheck']} passed. Mode {e(data['mode'])}, seed "
             f"{data['seed']}, {data['seconds']:.1f} s, {e(data['created'])}.</p>",
             f"<p class='note'>Standard: {e(data['standard']['doc'])}</p>"]
    for op, g in s["by_op"].items():
        parts.append(f"<h2>{e(op)}: {g['failed']} of {g['cases']} failed</h2>")
        if g["failed"]:
            for key, label in (("by_dtype", "dtypes"), ("by_distribution", "distributions"), ("by_shape", "shapes")):
                parts.append(f"<p>failing {label}: {e(_fails_line(g[key]))}</p>")
        ov = {c["dtype"]: c["thresholds"].get("overridden") for c in cases
              if c["op"] == op and c.get("thresholds") and c["thresholds"].get("overridden")}
        parts.append(f"<p class='note'>op.yaml accuracy overrides: {e(json.dumps(ov)) if ov else 'none'}</p>")
    if data["opcheck"]:
        parts.append("<h2>torch.library.opcheck</h2><table><tr><th class=l>op</th><th class=l>dtype</th>"
                     "<th class=l>verdict</th><th class=l>reason</th></tr>")
        for c in data["opcheck"]:
            parts.append(f"<tr class='{'fail' if c.get('verdict') != 'pass' else ''}'><td class=l>{e(c['op'])}</td>"
                         f"<td class=l>{e(str(c.get('dtype')))}</td><td class=l>{e(str(c.get('verdict')))}</td>"
                         f"<td class=l>{e(c.get('reason', ''))}</td></tr>")
        parts.append("</table>")
    parts.append("<h2>Plots</h2>")
    try:
        for title, png in _plots(cases):
            parts.append(f"<img alt='{e(title)}' title='{e(title)}' src='data:image/png;base64,{png}'>")
    except ImportError as ex:
        parts.append(f"<p>plots unavailable: {e(str(ex))} (pip install matplotlib)</p>")
    parts.append("<h2>Cases (failures and worst first)</h2><p class='note'>score = max(MERE/T, MARE/10T); "
                 "cancelled = elements judged by the cancellation rule; modelled times are roofline estimates "
                 "for the 910B (python/opkit/roofline.py).</p><table><tr>")
    shown = [m for m in METRICS if m.label]
    cols = (["verdict", "case", "score"] + [m.label for m in shown]
            + ["naive score", "naive MERE", "naive cosine", "model us", "floor us", "reason"])
    parts.append("".join(f"<th class=l>{c}</th>" for c in cols) + "</tr>")
    for c in sorted(cases, key=lambda c: (c.get("verdict") == "pass", -min(score(c), 1e300))):
        m = c.get("metrics") or {}
        nm = c.get("naive_metrics") or {}
        dm = c.get("device_model") if isinstance(c.get("device_model"), dict) else {}
        row = ([c.get("verdict"), f"{c['op']}[{c['id']}]", score(c)] + [m.get(x.key) for x in shown]
               + [naive_score(c), nm.get("mere"), nm.get("cosine"),
                  (dm.get("modelled_s") or 0) * 1e6 if dm.get("modelled_s") else None,
                  (dm.get("hbm_floor_s") or 0) * 1e6 if dm.get("hbm_floor_s") else None, c.get("reason", "")])
        cls = "fail" if c.get("verdict") != "pass" else ""
        parts.append(f"<tr class='{cls}'>" + "".join(
            f"<td class='{'l' if i in (0, 1, len(row) - 1) else ''}'>{e(_fmt(v))}</td>" for i, v in enumerate(row))
            + "</tr>")
    parts.append("</table></body></html>")
    path = Path(path)
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
