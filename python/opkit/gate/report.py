"""``accuracy_report.html``: every baseline entry with its history, and this run's results against it."""
from __future__ import annotations

import datetime
from pathlib import Path

from jinja2 import Environment

from ..toolchain.files import write_report as write_html


def write_report(path: Path, baseline: dict, results: list[dict], baseline_path: Path, threshold: float) -> Path:
    run = {(r["key"], r["data_hash"]): r for r in results}
    rows = []
    for eid, e in sorted(baseline["entries"].items()):
        r = run.pop((e["key"], e.get("data_hash", "")), None)
        rows.append({"key": e["key"], "data_hash": e.get("data_hash", ""), "best": e["best"],
                     "history": e.get("history", []), "run": r})
    for (key, dh), r in sorted(run.items()):          # recorded, not (yet) in the baseline
        rows.append({"key": key, "data_hash": dh, "best": None, "history": [], "run": r})
    page = Environment(autoescape=True).from_string(_PAGE).render(
        rows=rows, baseline=str(baseline_path), threshold=threshold,
        when=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        failed=sum(1 for r in results if not r["ok"]), n=len(results))
    return write_html(path, page)


_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>opkit accuracy report</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1em}td,th{border:1px solid #ccc;
padding:2px 8px;text-align:right}th{background:#eee}td.l,th.l{text-align:left}.fail{color:#b00;font-weight:bold}
.pass{color:#070}</style></head><body>
<h1>opkit accuracy report</h1>
<p>{{ when }}: {{ n }} result(s), {{ failed }} below the threshold; baseline <code>{{ baseline }}</code>, threshold
{{ threshold }} points of top-1 below the best.</p>
<table><tr><th class="l">model/variant</th><th class="l">data hash</th><th>best</th><th>this run</th><th>vs best</th>
<th class="l">verdict</th></tr>
{% for r in rows %}<tr><td class="l">{{ r.key }}</td><td class="l"><code>{{ r.data_hash }}</code></td>
<td>{% if r.best is not none %}{{ '%.2f'|format(r.best) }}%{% else %}-{% endif %}</td>
<td>{% if r.run %}{{ '%.2f'|format(r.run.top1) }}%{% else %}-{% endif %}</td>
<td>{% if r.run and r.best is not none %}{{ '%+.2f'|format(r.run.top1 - r.best) }}{% endif %}</td>
<td class="l">{% if r.run %}<span class="{{ 'pass' if r.run.ok else 'fail' }}">{{ 'PASS' if r.run.ok else 'FAIL' }}</span>
{{ r.run.message }}{% else %}not run{% endif %}</td></tr>{% endfor %}
</table>
<h2>History</h2>
{% for r in rows %}<h3>{{ r.key }} <small><code>{{ r.data_hash }}</code></small></h3>
{% if r.history %}<table><tr><th class="l">time</th><th class="l">commit</th><th>top-1</th></tr>
{% for h in r.history %}<tr><td class="l">{{ h.time }}</td><td class="l">{{ h.commit }}</td><td>{{ '%.2f'|format(h.top1) }}%</td></tr>{% endfor %}
{% if r.run %}<tr><td class="l">this run</td><td class="l"></td><td>{{ '%.2f'|format(r.run.top1) }}%</td></tr>{% endif %}
</table>{% else %}<p>no stored history{% if r.run %}; this run {{ '%.2f'|format(r.run.top1) }}%{% endif %}</p>{% endif %}
{% endfor %}
</body></html>
"""
