"""`opkit eval` output: the text summary, and the HTML page (summary, per-class accuracy, changed samples)."""
from __future__ import annotations

import html
from pathlib import Path

from ..toolchain.files import write_report
from .result import EvalResult


def summary_lines(res: EvalResult, ks=(1, 5), primary: str | None = None, changed_max: int = 10) -> list[str]:
    d = res.data
    lines = [f"opkit eval: {res.model} on {d['source']} ({res.n} samples, {len(res.classes)} classes, "
             f"data hash {d['hash']})"]
    head = f"  {'variant':<24}" + "".join(f"{'top-' + str(k):>9}" for k in ks) + "   vs fp32"
    lines.append(head)
    for name in res.names:
        row = f"  {name:<24}" + "".join(f"{res.topk(name, k):8.2f}%" for k in ks)
        if name != "fp32":
            ch = res.changed(name)
            lost = sum(c["effect"] == "lost" for c in ch)
            gained = sum(c["effect"] == "gained" for c in ch)
            row += (f"   {res.topk(name, ks[0]) - res.topk('fp32', ks[0]):+.2f} points top-{ks[0]}; "
                    f"{len(ch)} sample(s) changed ({lost} lost, {gained} gained)")
        lines.append(row)
    primary = primary or res.names[-1]
    if primary != "fp32":
        per = {p["label"]: p for p in res.per_class(primary)}
        ref = {p["label"]: p for p in res.per_class("fp32")}
        worst = sorted(per, key=lambda c: (per[c]["top1"] - ref[c]["top1"], c))[:5]
        worst = [c for c in worst if per[c]["top1"] < ref[c]["top1"]]
        if worst:
            lines.append(f"  classes that lost most ({primary} vs fp32, top-1):")
            for c in worst:
                lines.append(f"    {per[c]['class']:<22} {ref[c]['top1']:6.1f}% -> {per[c]['top1']:6.1f}%  "
                             f"({per[c]['n']} samples)")
        ch = res.changed(primary)
        if ch:
            lines.append(f"  changed samples ({primary} vs fp32, first {min(changed_max, len(ch))} of {len(ch)}; "
                         "-1 = NaN/inf output):")
            for c in ch[:changed_max]:
                lines.append(f"    #{c['index']:<6} {c['class']:<16} fp32 {c['fp32']:>4} -> {c[primary]:>4}  {c['effect']}")
    for n in res.notes:
        lines.append(f"  note: {n}")
    lines.append(f"  run: {res.backend}, {res.shards} shard(s), {res.reruns} rerun(s), {res.seconds:.1f} s, "
                 f"{res.samples_per_s:.1f} sample-variants/s")
    return lines


def write_html(res: EvalResult, path: str | Path, primary: str | None = None, ks=(1, 5)) -> Path:
    """A self-contained page: the summary table, per-class accuracy per variant, the changed samples."""
    from jinja2 import Environment
    primary = primary or res.names[-1]
    per = {name: {p["label"]: p for p in res.per_class(name)} for name in res.names}
    rows = []
    for c, cname in enumerate(res.classes):
        if c in per["fp32"]:
            rows.append({"class": cname, "n": per["fp32"][c]["n"],
                         "acc": [per[name][c]["top1"] for name in res.names]})
    page = Environment(autoescape=True).from_string(_PAGE).render(
        res=res, ks=ks, primary=primary, rows=rows, changed=res.changed(primary) if primary != "fp32" else [],
        topk=res.topk, esc=html.escape)
    return write_report(path, page)


_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>opkit eval: {{ res.model }}</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;
padding:2px 8px;text-align:right}th{background:#eee}td.l,th.l{text-align:left}.bad{color:#b00}</style></head><body>
<h1>opkit eval</h1>
<p>model <code>{{ res.model }}</code>; data <code>{{ res.data.source }}</code> ({{ res.n }} samples,
{{ res.classes|length }} classes, hash <code>{{ res.data.hash }}</code>, transform <code>{{ res.data.transform or '-' }}</code>);
run: {{ res.backend }}, {{ res.shards }} shards, {{ '%.1f'|format(res.seconds) }} s</p>
<table><tr><th class="l">variant</th>{% for k in ks %}<th>top-{{ k }}</th>{% endfor %}<th>vs fp32 (top-{{ ks[0] }})</th></tr>
{% for name in res.names %}<tr><td class="l">{{ name }}</td>{% for k in ks %}<td>{{ '%.2f'|format(topk(name, k)) }}%</td>{% endfor %}
<td>{% if name != 'fp32' %}{{ '%+.2f'|format(topk(name, ks[0]) - topk('fp32', ks[0])) }} points{% endif %}</td></tr>{% endfor %}
</table>
{% for n in res.notes %}<p>note: {{ n }}</p>{% endfor %}
<h2>Per-class top-1</h2>
<table><tr><th class="l">class</th><th>samples</th>{% for name in res.names %}<th>{{ name }}</th>{% endfor %}</tr>
{% for r in rows %}<tr><td class="l">{{ r.class }}</td><td>{{ r.n }}</td>{% for a in r.acc %}
<td{% if a < r.acc[0] %} class="bad"{% endif %}>{{ '%.1f'|format(a) }}%</td>{% endfor %}</tr>{% endfor %}
</table>
{% if changed %}<h2>Samples whose top-1 changed ({{ primary }} vs fp32): {{ changed|length }}</h2>
<table><tr><th>index</th><th class="l">class</th><th>fp32</th><th>{{ primary }}</th><th class="l">effect</th></tr>
{% for c in changed %}<tr><td>{{ c.index }}</td><td class="l">{{ c.class }}</td><td>{{ c.fp32 }}</td><td>{{ c[primary] }}</td>
<td class="l">{{ c.effect }}</td></tr>{% endfor %}</table><p>-1: the output held a NaN or inf.</p>{% endif %}
</body></html>
"""
