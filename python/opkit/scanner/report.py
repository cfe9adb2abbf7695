"""``ScanReport``: the scan's result per op (and per module), as a console table, JSON and HTML.

JSON (``{"opkit_scan": 1, ...}``): ``torch_npu``, ``op_list``, ``inputs`` (one tag per example input),
``amp``, ``backward``, ``summary`` ({fallback, unknown, supported, precision_sensitive}), ``note``,
``ops`` (one record per op and status: ``op``, ``status``, ``reason``, ``phases``, ``via``, ``calls``,
``shapes`` {input tag: [[arg shapes], ...]}, ``dtypes``, ``modules``, ``covered_by``, ``amp``) and
``modules`` ({module path: [{op, status, calls}]}; "" is the model itself).
"""
from __future__ import annotations

import datetime as _dt
import html
import json
from collections import defaultdict
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from ..errors import OpkitError
from ..toolchain.files import write_json, write_report
from . import amp as amp_table
from .classify import COVERED_BY, FALLBACK, SUPPORTED, UNKNOWN, base_name
from .trace import Call

NOTE = ("A listed op can still fall back, or raise, for dtypes or shapes its NPU kernel refuses; only the device "
        "shows that (run it with TORCH_NPU_FALLBACK_CPU_DISABLE=1 to make every fallback an error).")
_ORDER = {FALLBACK: 0, UNKNOWN: 1, SUPPORTED: 2}


@dataclass
class OpRecord:
    op: str                                   # aten::lgamma.out
    status: str                               # fallback | unknown | supported
    reason: str
    phases: list[str] = field(default_factory=list)
    via: list[str] = field(default_factory=list)          # composite ops that led here (aten::lgamma)
    calls: int = 0
    shapes: dict[str, list[list[list[int]]]] = field(default_factory=dict)   # input tag -> distinct arg shapes
    dtypes: list[str] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)
    module_calls: dict[str, int] = field(default_factory=dict)   # module path -> calls made directly in it
    entry_args: list[dict] = field(default_factory=list)     # distinct argument sets of the entry op
    covered_by: str | None = None             # opkit op computing it: "reduce_mean_fp32", "hypot_fp32 (workspace)"
    amp: dict | None = None                   # {"category", "dtypes", "fp16", "logits"} under amp="npu-o1"

    @property
    def entry(self) -> str:
        """The op as the model calls it: the outermost composite (``aten::lgamma``) or the op itself."""
        return self.via[0] if self.via else self.op

    @property
    def precision_sensitive(self) -> bool:
        return bool(self.amp and self.amp.get("fp16"))


@dataclass
class ScanReport:
    torch_npu: str | None
    op_list: str
    inputs: list[str]
    amp: str | None
    backward: bool
    records: list[OpRecord]
    created: str = field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))

    @property
    def fallbacks(self) -> list[OpRecord]:
        return [r for r in self.records if r.status == FALLBACK]

    @property
    def unknown(self) -> list[OpRecord]:
        return [r for r in self.records if r.status == UNKNOWN]

    @property
    def supported(self) -> list[OpRecord]:
        return [r for r in self.records if r.status == SUPPORTED]

    @property
    def precision_sensitive(self) -> list[OpRecord]:
        return [r for r in self.records if r.precision_sensitive]

    def by_module(self) -> dict[str, list[dict]]:
        """Module path -> the ops that ran directly in it (for per-layer tables)."""
        out: dict[str, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))
        for r in self.records:
            for m, n in r.module_calls.items():
                out[m][(r.op, r.status)] += n
        return {m: [{"op": op, "status": st, "calls": n} for (op, st), n in sorted(d.items())]
                for m, d in sorted(out.items())}

    def summary(self) -> dict:
        return {"fallback": len(self.fallbacks), "unknown": len(self.unknown), "supported": len(self.supported),
                "precision_sensitive": len(self.precision_sensitive)}

    def to_json(self) -> dict:
        return {"opkit_scan": 1, "created": self.created, "torch_npu": self.torch_npu, "op_list": self.op_list,
                "inputs": self.inputs, "amp": self.amp, "backward": self.backward, "summary": self.summary(),
                "note": NOTE, "ops": [_record_json(r) for r in self.records], "modules": self.by_module()}

    @classmethod
    def from_json(cls, data: dict | str | Path) -> ScanReport:
        """A report written by ``write_json`` (or its dict), e.g. for a per-layer fallback column."""
        if not isinstance(data, dict):
            try:
                data = json.loads(Path(data).read_text())
            except (OSError, ValueError) as e:
                raise OpkitError(f"{data}: not a readable opkit scan JSON ({e})") from None
        if data.get("opkit_scan") != 1:
            raise OpkitError("not an opkit scan report (no \"opkit_scan\": 1)")
        names = {f.name for f in fields(OpRecord)}
        records = [OpRecord(**{k: v for k, v in r.items() if k in names}) for r in data["ops"]]
        return cls(torch_npu=data["torch_npu"], op_list=data["op_list"], inputs=data["inputs"], amp=data["amp"],
                   backward=data["backward"], records=records, created=data["created"])

    def write_json(self, path: str | Path) -> Path:
        return write_json(path, self.to_json())

    def write_html(self, path: str | Path) -> Path:
        return write_report(path, _html(self))


def _record_json(r: OpRecord) -> dict:
    d = asdict(r)
    d["entry"] = r.entry
    d["precision_sensitive"] = r.precision_sensitive
    return d


def assemble(calls: list[Call], *, torch_npu: str | None, op_list: str, inputs: list[str], amp: str | None,
             backward: bool, workspace_ops: dict[str, str] | None = None) -> ScanReport:
    """Group calls by (op, status); ``workspace_ops``: aten op (``aten::hypot``) -> workspace opkit op."""
    groups: dict[tuple[str, str], OpRecord] = {}
    shapes: dict[tuple[str, str], dict[str, dict]] = {}
    amp_dtypes: dict[tuple[str, str], set] = defaultdict(set)
    logits: set[tuple[str, str]] = set()
    for c in calls:
        key = (c.op, c.status)
        r = groups.get(key)
        if r is None:
            r = groups[key] = OpRecord(op=c.op, status=c.status, reason=c.reason)
            shapes[key] = defaultdict(dict)
        r.calls += 1
        r.module_calls[c.module] = r.module_calls.get(c.module, 0) + 1
        for lst, v in ((r.phases, c.phase), (r.modules, c.module), *((r.via, v) for v in c.via[:1])):
            if v not in lst:
                lst.append(v)
        for d in c.dtypes:
            if d not in r.dtypes:
                r.dtypes.append(d)
        shapes[key][c.input_tag][c.shapes] = None        # ordered set
        if c.entry_args not in r.entry_args and len(r.entry_args) < 16:
            r.entry_args.append(c.entry_args)
        if c.amp_dtype:
            amp_dtypes[key].add(c.amp_dtype)
        if c.logits:
            logits.add(key)
    ws = workspace_ops or {}
    for key, r in groups.items():
        r.shapes = {tag: [[list(s) for s in args] for args in seen] for tag, seen in shapes[key].items()}
        names = [r.op, *r.via]
        r.covered_by = next((f"{ws[n.split('.')[0]]} (workspace)" for n in names if n.split(".")[0] in ws), None) or \
            next((COVERED_BY[base_name(n)] for n in names if base_name(n) in COVERED_BY), None)
        if amp:
            cat = next((amp_table.category(base_name(n)) for n in names if amp_table.category(base_name(n))), None)
            if key in logits:
                cat = "logits matmul"
            if cat:
                dts = sorted(amp_dtypes[key])
                r.amp = {"category": cat, "dtypes": dts, "logits": key in logits,
                         "fp16": any(d in ("float16", "bfloat16") for d in dts)}
    records = sorted(groups.values(), key=lambda r: (_ORDER.get(r.status, 3), not r.precision_sensitive,
                                                     -r.calls, r.op))
    return ScanReport(torch_npu=torch_npu, op_list=op_list, inputs=inputs, amp=amp, backward=backward,
                      records=records)


# -- rendering ---------------------------------------------------------------------------------------

def shapes_text(r: OpRecord, limit: int = 3) -> str:
    parts = []
    for tag, seen in r.shapes.items():
        txt = "; ".join(", ".join("x".join(map(str, s)) or "scalar" for s in args) for args in seen[:limit])
        more = f" (+{len(seen) - limit})" if len(seen) > limit else ""
        parts.append(f"{tag}: {txt}{more}")
    return " | ".join(parts)


def cover_text(r: OpRecord) -> str:
    if r.covered_by and r.covered_by.endswith(" (workspace)"):
        return (f"workspace op {r.covered_by.split()[0]}: once written and built, "
                "opkit.load(override_aten=True) replaces the fallback")
    if r.covered_by:
        return f"covered by opkit op {r.covered_by}"
    if r.status == FALLBACK or r.precision_sensitive:
        return "no opkit op"
    return ""


def amp_text(r: OpRecord) -> str:
    if not r.amp:
        return ""
    dts = "/".join(r.amp["dtypes"]) or "?"
    flag = "PRECISION-SENSITIVE" if r.amp["fp16"] else "ok"
    return f"{r.amp['category']}: {dts} ({flag})"


def rows(report: ScanReport, all_ops: bool = False) -> list[list[str]]:
    out = []
    for r in report.records:
        if r.status == SUPPORTED and not all_ops and not r.precision_sensitive:
            continue
        op = r.op + (f" (via {', '.join(r.via)})" if r.via else "")
        mods = ", ".join(m or "(model)" for m in r.modules[:4]) + (" ..." if len(r.modules) > 4 else "")
        row = [r.status, op, shapes_text(r), ",".join(r.dtypes), str(r.calls), mods, cover_text(r)]
        if report.amp:
            row.insert(6, amp_text(r))
        out.append(row)
    return out


def headers(report: ScanReport) -> list[str]:
    h = ["status", "op", "shapes seen (per input)", "dtypes", "calls", "modules", "opkit"]
    if report.amp:
        h.insert(6, f"amp {report.amp}")
    return h


def print_console(report: ScanReport, console, all_ops: bool = False) -> None:
    from rich.console import Console
    from rich.table import Table

    s = report.summary()
    t = Table(title=f"opkit scan vs torch-npu {report.torch_npu or report.op_list}", show_lines=False)
    for i, h in enumerate(headers(report)):
        t.add_column(h, overflow="fold", no_wrap=i < 2)
    for row in rows(report, all_ops):
        style = {FALLBACK: "red", UNKNOWN: "yellow"}.get(row[0])
        t.add_row(*row, style=style)
    # Not a terminal (CI logs, pipes): a wide table rather than one squeezed into 80 columns.
    if console.is_terminal:
        console.print(t)
    else:
        Console(file=console.file, width=max(console.width, 220), highlight=False).print(t)
    hidden = 0 if all_ops else sum(1 for r in report.supported if not r.precision_sensitive)
    console.print(f"{s['fallback']} op(s) fall back to the CPU, {s['unknown']} unknown, {s['supported']} supported"
                  + (f" ({hidden} not shown; --all lists them)" if hidden else "")
                  + (f"; {s['precision_sensitive']} precision-sensitive under {report.amp}" if report.amp else ""),
                  markup=False)
    for r in report.unknown:
        console.print(f"unknown {r.op}: {r.reason}", markup=False)
    console.print(f"inputs: {'; '.join(report.inputs)}", markup=False)
    console.print(f"note: {NOTE}", markup=False)


def _html(report: ScanReport) -> str:
    e = html.escape
    s = report.summary()
    verdict = "FALLBACKS" if s["fallback"] else "NO FALLBACK"
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>opkit scan report</title><style>",
             "body{font-family:sans-serif;margin:1.5em;font-size:13px}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 5px;text-align:left}"
             "tr.fallback{background:#fdd}tr.unknown{background:#ffd}.note{color:#555}",
             "</style></head><body>",
             f"<h1>opkit scan report — {verdict}</h1>",
             f"<p>{s['fallback']} op(s) fall back to the CPU, {s['unknown']} unknown, {s['supported']} supported"
             + (f", {s['precision_sensitive']} precision-sensitive under {e(report.amp)}" if report.amp else "")
             + f". torch-npu {e(str(report.torch_npu))} (op list: {e(report.op_list)}); backward "
             f"{'traced' if report.backward else 'not traced'}; {e(report.created)}.</p>",
             f"<p>Inputs: {e('; '.join(report.inputs))}</p>",
             f"<p class='note'>{e(NOTE)}</p><h2>Ops</h2><table><tr>"]
    parts.append("".join(f"<th>{e(h)}</th>" for h in [*headers(report), "reason"]) + "</tr>")
    for r, row in zip([r for r in report.records], rows(report, all_ops=True)):
        parts.append(f"<tr class='{e(r.status)}'>" + "".join(f"<td>{e(v)}</td>" for v in [*row, r.reason]) + "</tr>")
    parts.append("</table><h2>Modules</h2><table><tr><th>module</th><th>ops (calls)</th></tr>")
    for m, ops in report.by_module().items():
        cells = ", ".join(f"{o['op']} ({o['calls']})" + (" FALLBACK" if o["status"] == FALLBACK else "")
                          for o in ops)
        parts.append(f"<tr><td>{e(m or '(model)')}</td><td>{e(cells)}</td></tr>")
    parts.append("</table></body></html>")
    return "\n".join(parts)
