"""The text form of an ``opkit experiment`` result, read from its JSON form (``ExperimentResult.to_json()``)."""
from __future__ import annotations


def _fps(t: dict) -> str:
    return f"{t['fps']:,.0f}" if t and t.get("fps") else "-"


def lines(r: dict) -> list[str]:
    d = r["data"]
    out = [f"opkit experiment: {r['model']} at {'x'.join(map(str, r['input']))}, policy {r['policy']}, "
           f"{r['n']} labelled samples ({d['source']}, data hash {d['hash']})"]
    out.append(f"  {'variant':<36}{'top-1':>8}{'top-5':>8}{'vs fp32':>9}{'min cos':>10}{'changed':>9}"
               f"{'FPS (model)':>13}")
    ref = r["variants"][0]["top1"]
    for v in r["variants"]:
        cos = f"{v['min_cosine']:.5f}" if v["min_cosine"] is not None else "-"
        delta = "" if v is r["variants"][0] else f"{v['top1'] - ref:+.2f}"
        out.append(f"  {v['name']:<36}{v['top1']:7.2f}%{v['top5']:7.2f}%{delta:>9}{cos:>10}{v['changed']:>9}"
                   f"{_fps(v['throughput']):>13}")
    if r.get("shapes"):
        s = r["shapes"]
        out.append(f"  shapes ({s['observed']} observed sizes, {s['distinct']} distinct; buckets "
                   f"{', '.join('x'.join(map(str, b)) for b in s['buckets'])}):")
        for v in s["variants"]:
            out.append(f"    {v['name']:<34}{v['top1']:7.2f}%{v['top5']:7.2f}%{'':>28}{_fps(v['throughput']):>13}")
    p = r["points"]
    said = {"fallback": "replacing the CPU fallbacks", "precision": "keeping the sensitive op types in FP32",
            "dynamic-shape": "static instead of dynamic shapes"}
    out.append(f"  points lost by the deployed variant vs FP32: {r['loss']:.2f}")
    for k, v in p.items():
        out.append(f"  points recovered by {said[k]}: {v:+.2f}")
    out.append(f"  cause: {r['cause']}" + (" (" + ", ".join(f"{c['cause']} {c['points']:.2f} points"
                                                               for c in r["causes"]) + ")" if r["causes"] else ""))
    rec = r["recommend"]
    tgt = "" if r["target_top1"] is None else (f" (target {r['target_top1']:.2f}%: "
                                                f"{'met' if rec['meets_target'] else 'NOT met'})")
    out.append(f"  recommend: {rec['variant']} -- top-1 {rec['top1']:.2f}%{tgt}, modelled {_fps(rec['throughput'])} FPS")
    if rec["fp32_op_types"]:
        out.append(f"    keep in FP32: {', '.join(rec['fp32_op_types'])} (op types; under {rec['policy']})")
    for o in rec["replace_ops"]:
        out.append(f"    replace {o['op']}: {o['command']}")
    if rec.get("shapes"):
        sh = rec["shapes"]
        out.append(f"    shapes: {sh['choose']} (static {'x'.join(map(str, sh['static']))}; dynamic buckets "
                   f"{', '.join('x'.join(map(str, b)) for b in sh['buckets'])})")
    bf = r["blanket_fp32"]
    out.append(f"  blanket FP32 deployment: top-1 {bf['top1']:.2f}%, modelled {_fps(bf['throughput'])} FPS "
               f"({bf['throughput']['ms_per_image']:.3f} ms/image)"
               + (f"; --fps {r['fps_target']:g}: {'met' if bf['throughput'].get('meets_fps') else 'not met'}"
                  if r.get("fps_target") else ""))
    if r.get("fps_target"):
        ok = [v["name"] for v in r["variants"] if v["throughput"].get("meets_fps")]
        out.append(f"  variants meeting --fps {r['fps_target']:g} (modelled): {', '.join(ok) or 'none'}")
    out.append(f"  throughput is an ESTIMATE: {r['throughput_model']}")
    out.append("  what this CPU simulation cannot show:")
    out += [f"    - {c}" for c in r["cannot_show"]]
    for n in r["notes"]:
        out.append(f"  note: {n}")
    out.append(f"  run: {r['run']['backend']}, {r['run']['shards']} shards, {r['seconds']:.1f} s")
    return out
