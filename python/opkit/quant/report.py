"""QuantReport: the strategy table, recommendation, per-layer table, fusions, overflow -- as text, JSON, HTML
(with weight and activation plots), plus the files the real tools take: AMCT config + record, fusion_switch.cfg."""
from __future__ import annotations

import html
import io
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from ..errors import OpkitError
from ..toolchain.files import write_json, write_report
from .config import QuantConfig
from .records import write_record

MB = 1 << 20


@dataclass
class StrategyRow:
    """One deployment of the strategy table."""
    name: str
    top1: float
    top5: float
    drop: float                               # FP32 top-1 minus this row's, in points
    float_layers: list[str]
    weight_bytes: int
    latency: dict                             # opkit.roofline's modelled latency (an estimate)
    channel_wise: dict[str, bool]

    @property
    def n_float(self) -> int:
        return len(self.float_layers)

    @property
    def latency_s(self) -> float:
        return self.latency["seconds"]

    def as_dict(self) -> dict:
        d = asdict(self) | {"n_float": self.n_float, "latency_s": self.latency_s}
        if d["latency_s"] != d["latency_s"]:          # not modelled (current-API rows): null in JSON, not NaN
            d["latency_s"] = d["latency"]["seconds"] = None
        return d


@dataclass
class Recommended:
    """The recommended deployment: the searches' winner, written as an AMCT config and verified by a rerun."""
    float_layers: list[str]
    channel_wise: dict[str, bool]
    top1: float
    top5: float
    drop: float
    meets_target: bool                        # the search found a configuration within the target
    verified: bool                            # ... and the recalibrated rerun of its written config holds it
    search_top1: float
    skip_fusion_layers: list[str]
    atc_fusions_off: list[str]                # fusion_switch.cfg entries the recommendation needs
    overflow_fix: str
    found_by: str
    algorithms: dict[str, list[str]] = field(default_factory=dict)   # DMQ & co -> the layers they are on

    def as_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        """'dmq on conv1, fc; float: conv2; INT8 elsewhere' -- what the written AMCT config does."""
        parts = [f"{a} on {', '.join(ls)}" for a, ls in self.algorithms.items() if ls]
        parts += [f"float: {', '.join(self.float_layers)}"] if self.float_layers else []
        return "; ".join(parts + ["INT8 elsewhere"]) if parts else "INT8 on every layer"


@dataclass
class QuantReport:
    fp32: dict
    target_drop: float
    policy: dict
    chip: str
    strategies: list[StrategyRow]
    base: str
    config: QuantConfig                       # the recommended AMCT config
    base_config: QuantConfig
    records: dict                             # the recommended config's calibration record
    base_records: dict
    recommend: Recommended
    searches: list
    sensitivity: dict
    layers: list[dict]
    fusion: list
    overflow: list                            # overflow.Finding per variant that goes non-finite
    notes: list[str] = field(default_factory=list)
    deploy: dict = field(default_factory=dict)
    data: dict = field(default_factory=dict)
    calib_samples: int = 0
    fusion_result: str = ""
    graph: object = None
    variants: dict = field(default_factory=dict)    # fp16 / base / recommended QuantVariants (picklable)
    model: object = None
    activations: dict = field(default_factory=dict)   # layer -> (counts, edges): input histogram, for the plots
    predictions: dict = field(default_factory=dict)   # strategy -> top-1 class per sample (not in the JSON)
    evals: int = 0
    eval_backends: list[str] = field(default_factory=list)   # where the labelled evaluations ran
    eval_seconds: float = 0.0
    seconds: float = 0.0
    columns: dict = field(default_factory=dict)   # AMCT fake-quant top-1 vs deployed, the layers where they part
    amct_only: dict = field(default_factory=dict)  # layer -> type: AMCT quantizes it, opkit keeps it in float
    linear: dict = field(default_factory=dict)     # the current API's Linear plan (linear_flow.LinearPlan.as_dict)

    @property
    def depthwise(self) -> bool:
        return any(getattr(m, "groups", 1) > 1 and getattr(m, "groups", 1) == getattr(m, "out_channels", 0)
                   for m in (self.model.modules() if self.model is not None else []))

    @property
    def switch_notes(self) -> list[str]:
        """What fusion_switch.cfg leaves on, and why."""
        from .fusion import fusion_switch
        return fusion_switch(self.fusion, self.depthwise, self.recommend.atc_fusions_off)[1]

    # -- files for the real tools ---------------------------------------------------------------------------
    def write_amct_config(self, path) -> Path:
        return self.config.write(path)

    def write_linear_configs(self, path) -> Path:
        """The current-API plan (deploy_dtype) as AMCT configs: a JSON list, one ``amct_pytorch.quantize`` call
        per entry, in order."""
        import json
        if not self.linear.get("configs") and "describe" not in self.linear:
            raise OpkitError("--linear-config-out: no current-API plan (give --deploy-dtype, and let the search run)")
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(self.linear["configs"], indent=4) + "\n")
        return p

    def write_record(self, path) -> Path:
        """AMCT's record file for the recommended config (module layers only: AMCT has no entry for a matmul)."""
        return write_record({n: r for n, r in self.records.items() if "#" not in n}, path)

    def write_fusion_switch(self, path) -> Path:
        from .fusion import write_fusion_switch
        return write_fusion_switch(self.fusion, path, self.depthwise, self.recommend.atc_fusions_off)[0]

    # -- JSON -----------------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "opkit_quant": 1, "fp32": self.fp32, "target_drop": self.target_drop, "base": self.base,
            "policy": self.policy.get("name"), "chip": self.chip, "deploy": self.deploy, "data": self.data,
            "calib_samples": self.calib_samples, "fusion_result": self.fusion_result,
            "strategies": [r.as_dict() for r in self.strategies],
            "recommend": self.recommend.as_dict(),
            "searches": [{"strategy": r.strategy, "met": r.met,
                          "best": r.best.__dict__ if r.best else None,
                          "steps": [st.__dict__ for st in r.steps]} for r in self.searches],
            "sensitivity": dict(sorted(self.sensitivity.items(), key=lambda kv: kv[1])),
            "layers": self.layers, "fusion": [r.as_dict() for r in self.fusion], "overflow": [o.as_dict() for o in self.overflow],
            "amct_config": self.config.to_json(),
            "records": {n: r.as_dict() for n, r in self.records.items()},
            "notes": self.notes, "columns": self.columns, "amct_only_layers": self.amct_only,
            "linear": self.linear, "uncertain": self.policy.get("uncertain", []) + UNCERTAIN,
            "evaluations": self.evals, "eval_backends": self.eval_backends,
            "eval_seconds": round(self.eval_seconds, 2), "seconds": round(self.seconds, 2)}

    def write_json(self, path) -> Path:
        return write_json(path, self.to_dict(), default=_jsonable)

    def write_html(self, path) -> Path:
        return write_report(path, _html(self))

    def __str__(self) -> str:
        return text(self)


UNCERTAIN = [
    "AscendQuant's fp16 -> int8 cast rounds half to even here; the hardware's tie rule is not documented.",
    "AscendRequant's deq_cast rounding is modelled as round(acc * scale) + offset in FP32 (not documented).",
    "Latency is a roofline estimate (each op its own launch, no overlap), not a measurement.",
    "Search steps reuse the base config's calibration factors; only the winner is recalibrated (as AMCT would).",
]


def _jsonable(o):
    if isinstance(o, torch.Tensor):
        return o.tolist()
    if hasattr(o, "as_dict"):
        return o.as_dict()
    return str(o)


def _f(x, fmt="{:.6f}") -> str:
    return "-" if x is None else fmt.format(x)


def _bytes(n: int) -> str:
    return f"{n / MB:.2f} MB" if n >= MB / 10 else f"{n / 1024:.1f} KB"


def _us(s: float) -> str:
    if s != s:
        return "-"              # not modelled (the current API's fake-quant rows)
    return f"{s * 1e6:.2f} us" if s >= 1e-5 else f"{s * 1e9:.0f} ns"


def strategy_lines(rep: QuantReport) -> list[str]:
    lines = [f"{'strategy':22s} {'top-1':>7s} {'top-5':>7s} {'drop':>7s} {'float':>5s} {'weights':>10s} "
             f"{'latency*':>10s}"]
    for r in rep.strategies:
        lines.append(f"{r.name:22s} {r.top1:6.2f}% {r.top5:6.2f}% {r.drop:+6.2f} {r.n_float:5d} "
                     f"{_bytes(r.weight_bytes):>10s} {_us(r.latency_s):>10s}")
    lines.append(f"* modelled latency per sample on {rep.chip} (roofline estimate, not a measurement); "
                 f"drop = FP32 top-1 minus the row's, in points")
    return lines


def layer_lines(rep: QuantReport, blocks: bool = False) -> list[str]:
    lines = [f"{'layer':26s} {'op type':9s} {'compute':8s} {'cosine':>9s} {'max abs':>9s} {'rank':>4s} "
             f"{'gran':7s} {'clip range':>21s} {'clipped':>8s} sig"]
    for r in rep.layers:
        if r["op_type"] == "block" and not blocks:
            continue
        clip = (f"[{r['clip_min']:.3g}, {r['clip_max']:.3g}]" if r.get("clip_min") is not None else "-")
        lines.append(f"{(r['name'] or '(model)')[:26]:26s} {r['op_type'][:9]:9s} {r['compute_dtype'][:8]:8s} "
                     f"{_f(r['cosine']):>9s} {_f(r['max_abs'], '{:.3g}'):>9s} "
                     f"{str(r['sensitivity_rank'] or '-'):>4s} {r['granularity'] or '-':7s} {clip:>21s} "
                     f"{_f(r['clipped'], '{:.2%}') if r.get('clipped') is not None else '-':>8s} "
                     f"{r['signature'] or ''}{'  < first divergence' if r['first_divergence'] else ''}")
    return lines


def text(rep: QuantReport) -> str:
    out = [f"opkit quant: AMCT PTQ + ATC under {rep.policy.get('name')} vs FP32 on {rep.data.get('source')} "
           f"({rep.data.get('n')} samples), calibration {rep.calib_samples} samples, target drop "
           f"{rep.target_drop:g} points"]
    out.append(f"FP32 top-1 {rep.fp32['top1']:.2f}%, top-5 {rep.fp32['top5']:.2f}%")
    out.append("")
    out += strategy_lines(rep)
    out.append("")
    out.append(f"per-layer ({rep.base}, fixed batch of the labelled set; rank = AMCT sensitivity, 1 = most "
               "sensitive):")
    out += layer_lines(rep)
    r = rep.recommend
    out.append("")
    for sr in rep.searches:
        b = sr.best
        out.append(f"search {sr.strategy}: {len(sr.steps)} evaluation(s); "
                   + (f"{'meets' if b.ok else 'best, misses'} the target with {len(b.float_layers)} float layer(s)"
                      f"{' + ' + str(len(b.per_channel)) + ' per-channel' if b.per_channel else ''}"
                      f"{''.join(f' + {a} on {len(ls)}' for a, ls in b.algorithms.items())}: top-1 "
                      f"{b.top1:.2f}%" if b else "nothing tried"))
    verdict = ("meets the target" if r.meets_target else
               f"NOTHING MEETS THE TARGET of {rep.target_drop:g} points: the best found")
    out.append(f"recommend ({r.found_by}): {r.describe()} -> top-1 "
               f"{r.top1:.2f}% (drop {r.drop:+.2f}), {verdict}; verified by a recalibrated rerun: "
               f"{'yes' if r.verified else 'no'}")
    if rep.linear:
        lp = rep.linear
        v = lp["verified_top1"]
        out.append(f"recommend (AMCT current API, model in {lp['dtype']}): {lp['describe']} -> top-1 "
                   + (f"{v:.2f}% (drop {rep.fp32['top1'] - v:+.2f}), " if v is not None else "")
                   + ("meets the target" if lp["ok"] else "misses the target")
                   + f"; verified by a rebuild from its {len(lp['configs'])} AMCT config(s): "
                   + ("yes" if lp["verified"] else "no"))
    if rep.fusion:
        out.append("")
        out.append("fusions (cosine vs FP32 at the merged layers; top-1 with / without):")
        for f in rep.fusion:
            t = (f"top-1 {f.top1_fused:.2f}% / {f.top1_unfused:.2f}%" if f.top1_fused is not None else "")
            nf = (f"  non-finite {f.nonfinite_fused:.1%} / {f.nonfinite_unfused:.1%}"
                  if f.nonfinite_fused or f.nonfinite_unfused else "")
            out.append(f"  {f.name:24s} {len(f.layers):3d} layer(s)  cos {_f(f.cosine_fused)} / "
                       f"{_f(f.cosine_unfused)}  {t}{nf}{'  HURTS: ' + f.why if f.hurts else ''}"
                       + (f"  [{f.in_fusion_result}]" if f.in_fusion_result else ""))
    if rep.overflow:
        out.append("")
        for o in rep.overflow:
            rng = o.input_range
            out.append(f"overflow in {o.variant}: first non-finite output at {o.layer} ({o.op_type}, "
                       f"{o.nonfinite:.1%} of it); input range [{_f(rng[0] if rng else None, '{:.4g}')}, "
                       f"{_f(rng[1] if rng else None, '{:.4g}')}]")
            out.append(f"  cause: {o.cause}")
            for fx in o.fixes:
                t = f", top-1 {fx.top1:.2f}%" if fx.top1 is not None else ""
                state = ("verified" if fx.verified else "still non-finite" if fx.nonfinite > 0
                         else "finite, but top-1 misses the target")
                out.append(f"  fix {fx.fix}: {state} (non-finite outputs {fx.nonfinite:.1%}{t})")
            out.append(f"  -> {o.fix or 'no fix verified'}")
    for n in rep.notes:
        out.append(f"note: {n}")
    out.append(f"{rep.evals} labelled evaluations ({rep.eval_seconds:.0f} s), {rep.seconds:.0f} s in all")
    return "\n".join(out)


# -- HTML with plots ----------------------------------------------------------------------------------------------

def _svg(fig) -> str:
    import matplotlib.pyplot as plt
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    s = buf.getvalue()
    return s[s.find("<svg"):]


MAX_PLOTS = 12


def plot_layers(base_config, variant) -> list[str]:
    """The quantized layers the HTML report plots (the first ``MAX_PLOTS``)."""
    from .modes import QuantLayer
    return [n for n in base_config.quant_layers if isinstance(variant.layers.get(n), QuantLayer)][:MAX_PLOTS]


def plots(rep: QuantReport) -> list[tuple[str, str]]:
    """(title, svg) per quantized layer: FP32 vs dequantized weights, per-channel ranges, activations + clip."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .capture import layer_weights
    v = rep.variants.get("recommended") or next(iter(rep.variants.values()))
    base = rep.variants.get(rep.base, v)
    out = []
    for name in plot_layers(rep.base_config, base):
        q = base.layers[name]
        w, _, bn = layer_weights(rep.model, name, rep.graph, rep.base_config)
        per = q.scale_w.reshape([-1] + [1] * (w.dim() - 1)) if q.scale_w.numel() > 1 else q.scale_w.reshape([])
        deq = q.codes.float() * per
        fig, axes = plt.subplots(1, 3, figsize=(13, 2.8))
        axes[0].hist(w.flatten().numpy(), bins=80, alpha=0.6, label="FP32" + (" (BN folded)" if bn else ""))
        axes[0].hist(deq.flatten().numpy(), bins=80, alpha=0.6, label="dequantized INT8")
        axes[0].set_title(f"{name}: weights", fontsize=9)
        axes[0].legend(fontsize=7)
        flat = w.reshape(w.shape[0], -1)
        axes[1].vlines(range(flat.shape[0]), flat.min(1).values.numpy(), flat.max(1).values.numpy(), lw=1)
        amax = flat.abs().max()
        if q.scale_w.numel() == 1:
            axes[1].axhline(float(amax), ls="--", lw=0.8, color="red", label="per-layer range")
            axes[1].axhline(-float(amax), ls="--", lw=0.8, color="red")
            axes[1].legend(fontsize=7)
        axes[1].set_title(f"per-channel weight range ({'channel' if q.scale_w.numel() > 1 else 'layer'} scale)",
                          fontsize=9)
        a = rep.activations.get(name)
        if a is not None:
            axes[2].stairs(a[0], a[1], fill=True, color="gray")
            axes[2].set_yscale("log")
            axes[2].set_ylim(bottom=0.8)
            for b, lab in ((q.clip[0], "clip min"), (q.clip[1], "clip max")):
                axes[2].axvline(b, color="red", lw=0.8)
            axes[2].set_title(f"input activations, clip [{q.clip[0]:.3g}, {q.clip[1]:.3g}]", fontsize=9)
        fig.tight_layout()
        out.append((name, _svg(fig)))
    return out


def activation_histograms(model, graph, base, x: torch.Tensor, bins: int = 100, captured=None) -> dict:
    """Layer -> (counts, edges) of the input each plotted layer sees in the FP32 calibration graph on ``x``:
    computed once by quantize(), so writing the HTML runs nothing. ``captured``: sensitivity's first capture
    (capture.FirstCapture), used when it is provably this graph on this batch, else the capture runs here."""
    names = plot_layers(base.config, base.variant)
    got = captured.serves(model, graph, base.config, names, x) if captured is not None else None
    if got is None:
        from ..evaluate import SimVariant
        from .capture import capture_modes
        modes = capture_modes(model, graph, base.config, names)
        SimVariant("capture", layers=modes).simulator().run(model, (x,), record=False)
        got = {n: modes[n].inputs[0] for n in names if modes[n].inputs}
    out = {}
    for n in names:
        if n in got:
            a = got[n].flatten().float()
            lo, hi = float(a.min()), float(a.max())
            counts = torch.histc(a, bins, lo, hi if hi > lo else lo + 1.0)
            out[n] = (counts.numpy(), torch.linspace(lo, hi if hi > lo else lo + 1.0, bins + 1).numpy())
    return out


def _html(rep: QuantReport) -> str:
    e = html.escape
    try:
        figs = plots(rep)
        figures = "".join(f"<h3>{e(t)}</h3>{svg}" for t, svg in figs)
    except Exception as ex:  # noqa: BLE001 - the tables stand without the plots
        figures = f"<p>(plots unavailable: {e(type(ex).__name__)}: {e(str(ex))})</p>"
    strat = "".join(
        f"<tr><td>{e(r.name)}</td><td>{r.top1:.2f}</td><td>{r.top5:.2f}</td><td>{r.drop:+.2f}</td>"
        f"<td>{r.n_float}</td><td>{e(_bytes(r.weight_bytes))}</td><td>{e(_us(r.latency_s))}</td></tr>"
        for r in rep.strategies)
    layers = "".join(
        f"<tr class='{'bad' if r['below'] else ''}'><td>{e(r['name'] or '(model)')}</td><td>{e(r['op_type'])}</td>"
        f"<td>{e(r['compute_dtype'])}</td><td>{e(r['kernel'])}</td><td>{_f(r['cosine'])}</td>"
        f"<td>{_f(r['max_abs'], '{:.3g}')}</td><td>{r['sensitivity_rank'] or '-'}</td><td>{e(r['granularity'])}</td>"
        f"<td>{_f(r['clip_min'], '{:.3g}')} .. {_f(r['clip_max'], '{:.3g}')}</td>"
        f"<td>{_f(r['clipped'], '{:.2%}')}</td><td>{e(r['signature'])}</td></tr>"
        for r in rep.layers if r["op_type"] != "block")
    summary = e(text(rep))
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>opkit quant</title>
<style>body{{font-family:sans-serif;margin:1.5em}}table{{border-collapse:collapse;font-size:13px}}
td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}td:first-child{{text-align:left}}
tr.bad{{background:#fdd}}pre{{background:#f6f6f6;padding:.6em;font-size:12px}}</style></head><body>
<h1>opkit quant: AMCT PTQ + ATC under {e(rep.policy.get('name', ''))}</h1>
<p>FP32 top-1 {rep.fp32['top1']:.2f}% on {e(str(rep.data.get('source')))} ({rep.data.get('n')} samples);
target drop {rep.target_drop:g} points. Latency: a roofline estimate on {e(rep.chip)}, not a measurement.</p>
<h2>Strategies</h2><table><tr><th>strategy</th><th>top-1 %</th><th>top-5 %</th><th>drop</th><th>float layers</th>
<th>weights</th><th>latency (estimate)</th></tr>{strat}</table>
<h2>Summary</h2><pre>{summary}</pre>
<h2>Layers ({e(rep.base)})</h2><table><tr><th>layer</th><th>op type</th><th>compute</th><th>kernel</th><th>cosine</th>
<th>max abs</th><th>sensitivity rank</th><th>scale</th><th>clip range</th><th>clipped</th><th>signature</th></tr>
{layers}</table>
<h2>Weights and activations</h2>{figures}
</body></html>"""
