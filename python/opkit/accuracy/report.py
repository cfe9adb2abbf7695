"""DiagnoseReport: the per-layer table, rescue table, recommendation; as text, JSON and HTML."""
from __future__ import annotations

import html
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import OpkitError
from ..toolchain.files import write_json, write_report
from .layers import LayerRow


@dataclass
class DiagnoseReport:
    policy: dict
    threshold: float
    layers: list[LayerRow]
    input_hash: str = ""
    input_shapes: list = field(default_factory=list)
    result: dict = field(default_factory=dict)              # below, min/output cosine, first divergence, top1
    notes: list[str] = field(default_factory=list)
    op_types: dict = field(default_factory=dict)            # op type -> calls, lowered, policy io/compute
    kernels: dict = field(default_factory=dict)
    rescue: dict = field(default_factory=dict)              # op type -> result with it alone in FP32 (best first)
    recommend: list[str] = field(default_factory=list)
    recommend_result: dict = field(default_factory=dict)
    recommend_ok: bool | None = None
    recommend_layers: list[LayerRow] | None = None
    patched_layers: list[LayerRow] | None = None
    patched_result: dict = field(default_factory=dict)
    patch_swapped: list = field(default_factory=list)
    fallback_source: str = ""
    seconds: float = 0.0

    @property
    def first_divergence(self) -> LayerRow | None:
        return next((r for r in self.layers if r.below), None)

    @property
    def diverged(self) -> bool:
        return self.first_divergence is not None

    def to_dict(self) -> dict:
        fd = self.first_divergence
        return {
            "opkit_diagnose": 1, "policy": self.policy, "threshold": self.threshold,
            "input_hash": self.input_hash, "input_shapes": self.input_shapes, "result": self.result,
            "first_divergence": fd.as_dict() if fd else None,
            "layers": [r.as_dict() for r in self.layers], "op_types": self.op_types, "kernels": self.kernels,
            "rescue": self.rescue, "recommend": self.recommend, "recommend_result": self.recommend_result,
            "recommend_ok": self.recommend_ok,
            "patched": None if self.patched_layers is None else {
                "result": self.patched_result, "swapped": self.patch_swapped,
                "layers": [r.as_dict() for r in self.patched_layers]},
            "fallback_source": self.fallback_source, "notes": self.notes,
            "uncertain": self.policy.get("uncertain", []), "seconds": round(self.seconds, 2)}

    def write_json(self, path: str | Path) -> Path:
        return write_json(path, self.to_dict())

    def write_html(self, path: str | Path) -> Path:
        return write_report(path, _html(self))

    def __str__(self) -> str:
        return text(self)


def _pct(x) -> str:
    return "-" if x is None else f"{x:.1%}"


def _f(x, fmt="{:.6f}") -> str:
    return "-" if x is None else fmt.format(x)


def layer_table(rows: list[LayerRow], patched: list[LayerRow] | None = None, *, blocks: bool = True) -> list[str]:
    pat = {r.name: r for r in patched or []}
    fallback = any(r.fallback for r in rows)
    head = (f"{'layer':32s} {'op type':12s} {'io':8s} {'compute':9s} {'cosine':>9s} {'max abs':>9s} "
            f"{'max rel':>9s} {'nonfin':>6s} {'msprobe':7s}" + (f" {'patched':>9s}" if patched else "")
            + (" fallback" if fallback else ""))
    lines = [head]
    for r in rows:
        if r.op_type == "block" and not blocks:
            continue
        mark = "  <" if r.below else ""
        p = pat.get(r.name)
        lines.append(f"{(r.name or '(model)')[:32]:32s} {r.op_type[:12]:12s} {r.io_dtype[:8]:8s} "
                     f"{r.compute_dtype[:9]:9s} {_f(r.cosine):>9s} {_f(r.max_abs, '{:.3g}'):>9s} "
                     f"{_f(r.max_rel, '{:.3g}'):>9s} {r.nonfinite:6.2g} {r.msprobe:7s}"
                     + (f" {_f(p.cosine if p else None):>9s}" if patched else "")
                     + (f" {r.fallback or '-'}" if fallback else "") + mark)
    return lines


def text(rep: DiagnoseReport) -> str:
    pol = rep.policy
    out = [f"opkit diagnose: policy {pol['name']} vs FP32, threshold cosine {rep.threshold:g} "
           f"(input {rep.input_shapes}, hash {rep.input_hash})"]
    out += layer_table(rep.layers, rep.patched_layers)
    fd = rep.first_divergence
    r = rep.result
    out.append("")
    out.append(f"first divergence: {fd.name} ({fd.op_type}, {fd.module}) cosine {_f(fd.cosine)}" if fd
               else "first divergence: none (every layer at or above the threshold)")
    out.append(f"layers below threshold: {r.get('below')}; output cosine {_f(r.get('output_cosine'))}"
               + (f"; top-1 agreement {r['top1']:.1%}" if r.get("top1") is not None else ""))
    if rep.rescue:
        out.append("")
        out.append("rescue (one op type kept in FP32; best first):")
        out.append(f"  {'op type':16s} {'below':>5s} {'min cosine':>10s} {'out cosine':>10s} {'top-1':>6s}  first divergence")
        for t, x in rep.rescue.items():
            top1 = _pct(x.get("top1"))
            out.append(f"  {t:16s} {x['below']:5d} {_f(x['min_cosine']):>10s} {_f(x['output_cosine']):>10s} "
                       f"{top1:>6s}  {x['first_divergence'] or '-'}")
        verdict = "every layer above the threshold" if rep.recommend_ok else "NOT enough: layers stay below"
        out.append(f"recommend: keep {', '.join(rep.recommend) or '(nothing)'} in FP32 -> {verdict} "
                   f"(min cosine {_f(rep.recommend_result.get('min_cosine'))})")
    elif not rep.diverged:
        out.append("recommend: nothing to keep in FP32")
    if rep.patched_layers is not None:
        p = rep.patched_result
        out.append(f"with opkit.patch ({len(rep.patch_swapped)} modules swapped): {p.get('below')} layer(s) below, "
                   f"min cosine {_f(p.get('min_cosine'))}, output cosine {_f(p.get('output_cosine'))}"
                   + (f", top-1 agreement {p['top1']:.1%}" if p.get("top1") is not None else ""))
    for n in rep.notes:
        out.append(f"note: {n}")
    if pol.get("uncertain"):
        out.append("uncertain policy facts:")
        out += [f"  - {u}" for u in pol["uncertain"]]
    return "\n".join(out)


def fallback_layers(scan) -> dict[str, str]:
    """Module path -> "cpu: aten::op, ..." for the layers an ``opkit scan`` JSON report says fall back
    (ops run directly in the module or in any module below it)."""
    if isinstance(scan, dict):
        data = scan
    else:
        p = Path(scan)
        try:
            data = json.loads(p.read_text())
        except (OSError, ValueError) as e:
            raise OpkitError(f"--scan {p}: cannot read the opkit scan JSON report: {e}") from None
    mods = data.get("modules") if isinstance(data, dict) else None
    if not isinstance(mods, dict):
        raise OpkitError(f"--scan {scan}: not an `opkit scan` JSON report (no 'modules' mapping)")
    direct: dict[str, list[str]] = {}
    for path, ops in mods.items():
        bad = [o.get("op", "?") for o in ops if o.get("status") in ("fallback", "unknown")]
        if bad:
            direct[path] = bad
    marks = {}
    for path in list(mods):
        hits = sorted({op for q, ops in direct.items() if q == path or q.startswith(path + ".") or path == ""
                       for op in ops})
        if hits:
            marks[path] = "cpu: " + ", ".join(hits)
    return marks


def _plot_svg(rep: DiagnoseReport) -> str:
    import matplotlib
    matplotlib.use("Agg")
    import math

    import matplotlib.pyplot as plt

    rows = [r for r in rep.layers if r.op_type != "block"]
    names = [r.name or "(model)" for r in rows]

    def nines(c):
        if c is None:
            return 0.0
        return min(8.0, -math.log10(max(1.0 - c, 1e-8)))
    series = [("FP32", [8.0] * len(rows), "#999999")]
    series.append((rep.policy["name"], [nines(r.cosine) for r in rows], "#d62728"))
    if rep.patched_layers is not None:
        pat = {r.name: r for r in rep.patched_layers}
        series.append((f"{rep.policy['name']} + opkit.patch", [nines(pat[n].cosine if n in pat else None)
                                                                for n in [r.name for r in rows]], "#2ca02c"))
    if rep.recommend_layers is not None and rep.recommend:
        rec = {r.name: r for r in rep.recommend_layers}
        series.append((f"{rep.policy['name']}, {'+'.join(rep.recommend)} in FP32",
                       [nines(rec[n].cosine if n in rec else None) for n in [r.name for r in rows]], "#1f77b4"))
    fig, ax = plt.subplots(figsize=(max(8, 0.28 * len(rows)), 4.2))
    for label, ys, color in series:
        ax.plot(range(len(rows)), ys, marker="o", ms=3, label=label, color=color)
    ax.axhline(nines(rep.threshold), ls="--", color="black", lw=0.8, label=f"threshold {rep.threshold:g}")
    ax.set_ylabel("cosine as nines: -log10(1 - cos)")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(names, rotation=90, fontsize=7)
    ax.set_ylim(-0.2, 8.4)
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    s = buf.getvalue()
    return s[s.find("<svg"):]


def _html(rep: DiagnoseReport) -> str:
    e = html.escape
    try:
        plot = _plot_svg(rep)
    except Exception as ex:  # noqa: BLE001 - the table still stands
        plot = f"<p>(plot unavailable: {e(str(ex))})</p>"
    rows = "".join(
        f"<tr class='{'bad' if r.below else ''}'><td>{e(r.name or '(model)')}</td><td>{e(r.op_type)}</td>"
        f"<td>{e(r.io_dtype)}</td><td>{e(r.compute_dtype)}</td><td>{e(r.kernel)}</td><td>{_f(r.cosine)}</td>"
        f"<td>{_f(r.max_abs, '{:.3g}')}</td><td>{_f(r.max_rel, '{:.3g}')}</td><td>{r.nonfinite:.2g}</td>"
        f"<td>{r.msprobe}</td><td>{e(r.fallback or '-')}</td></tr>" for r in rep.layers)
    resc = "".join(f"<tr><td>{e(t)}</td><td>{x['below']}</td><td>{_f(x['min_cosine'])}</td>"
                   f"<td>{_f(x['output_cosine'])}</td><td>{_pct(x.get('top1'))}</td>"
                   f"<td>{e(x['first_divergence'] or '-')}</td></tr>" for t, x in rep.rescue.items())
    summary = e(text(rep).split("\n\n", 1)[-1])
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>opkit diagnose: {e(rep.policy['name'])}</title>
<style>body{{font-family:sans-serif;margin:1.5em}}table{{border-collapse:collapse;font-size:13px}}
td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}td:first-child{{text-align:left}}
tr.bad{{background:#fdd}}pre{{background:#f6f6f6;padding:.6em}}</style></head><body>
<h1>opkit diagnose: {e(rep.policy['name'])} vs FP32</h1>
<p>{e(rep.policy.get('summary', ''))}</p>
<p>threshold cosine {rep.threshold:g}; input {e(str(rep.input_shapes))} (hash {e(rep.input_hash)})</p>
<h2>Per-layer cosine</h2>{plot}
<h2>Summary</h2><pre>{summary}</pre>
<h2>Layers</h2><table><tr><th>layer</th><th>op type</th><th>io</th><th>compute</th><th>kernel</th><th>cosine</th>
<th>max abs</th><th>max rel</th><th>non-finite</th><th>msprobe</th><th>fallback</th></tr>{rows}</table>
<h2>Rescue (one op type in FP32)</h2><table><tr><th>op type</th><th>below</th><th>min cosine</th>
<th>output cosine</th><th>top-1</th><th>first divergence</th></tr>{resc}</table>
</body></html>"""
