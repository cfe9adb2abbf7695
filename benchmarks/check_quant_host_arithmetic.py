"""Issue 37: does `opkit quant`'s answer depend on the host's arithmetic? The ResNet-18 of
bench_quant_algos_search.py (--model resnet18, random init, labels its own top-1) quantized once per arithmetic
setting, each in its own process: this host as it is, then ATen / oneDNN / MKL forced to the code another CPU
would run (ATEN_CPU_CAPABILITY, ONEDNN_MAX_CPU_ISA: oneDNN's convolution blocking; MKL_CBWR: MKL's code for
another vendor -- its sgemm and vector sqrt). Printed per setting: whether the FP32 logits, the labels and the
base calibration's records (every layer's scale_d) have this host's bits, and each strategy-table row's top-1;
with --search the whole search too (labelled evaluations and the recommendation: slow, ~2-4 min per setting).
docs/quant.md "The search's answer on another CPU" has the figures.

    .venv/bin/python benchmarks/check_quant_host_arithmetic.py [--size 64] [--n 300] [--search]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys

from _bench import banner, load

SETTINGS = {"this host": {},
            "ONEDNN_MAX_CPU_ISA=AVX2": {"ONEDNN_MAX_CPU_ISA": "AVX2"},
            "MKL_CBWR=COMPATIBLE": {"MKL_CBWR": "COMPATIBLE"},
            "ATEN, oneDNN, MKL at AVX2": {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2",
                                          "MKL_CBWR": "AVX2"}}
FORCED = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_CBWR")


def child(a) -> None:
    """One setting (the environment this process started with): JSON on stdout."""
    import torch
    torch.set_num_threads(1)
    import opkit
    from bench_quant_algos_search import other_model
    a.model = "resnet18"
    m, x, y, c, _ = other_model(a)

    def digest(t) -> str:
        return hashlib.sha1(t.detach().contiguous().numpy().tobytes()).hexdigest()[:12]
    with torch.no_grad():
        logits = torch.cat([m(x[i:i + 64]) for i in range(0, len(x), 64)])
    rep = opkit.quantize(m, c, (x, y), policy="amct-fake-quant", target_drop=a.target, batch_size=64, workers=1,
                         search=a.search)
    records = rep.variants[rep.base].records
    out = {"capability": torch.backends.cpu.get_cpu_capability(), "logits": digest(logits), "labels": digest(y),
           "records": digest(torch.tensor([records[n].scale_d for n in sorted(records)], dtype=torch.float64)),
           "rows": {r.name: round(r.top1, 2) for r in rep.strategies}}
    if a.search:
        out |= {"evals": rep.evals, "recommend": rep.recommend.describe(), "top1": round(rep.recommend.top1, 2)}
    json.dump(out, sys.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=64, help="input size")
    ap.add_argument("--n", type=int, default=300, help="labelled samples")
    ap.add_argument("--target", type=float, default=3.0, help="target drop in points")
    ap.add_argument("--search", action="store_true", help="run the whole search too (slow)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return child(a)
    banner(f"opkit quant on ResNet-18 (random init) at 3x{a.size}x{a.size}, {a.n} labelled, per arithmetic setting")
    clean = {k: v for k, v in os.environ.items() if k not in FORCED}
    args = [sys.executable, __file__, "--child", "--size", str(a.size), "--n", str(a.n), "--target", str(a.target)]
    res = {}
    for name, env in SETTINGS.items():
        p = subprocess.run(args + (["--search"] if a.search else []), env={**clean, **env}, capture_output=True,
                           text=True)
        if p.returncode:
            raise SystemExit(f"{name}: the child failed:\n{p.stderr[-3000:]}")
        res[name] = json.loads(p.stdout.strip().splitlines()[-1])
    ref = res["this host"]
    rows = list(ref["rows"])
    print(f"   {'setting':27s} {'logits':7s} {'labels':7s} {'records':8s} " + " ".join(f"{r[:14]:>14s}" for r in rows))
    for name, r in res.items():
        same = ["=" if r[k] == ref[k] else "other" for k in ("logits", "labels", "records")]
        print(f"   {name:27s} {same[0]:7s} {same[1]:7s} {same[2]:8s} " +
              " ".join(f"{r['rows'].get(k, float('nan')):14.2f}" for k in rows))
        if a.search:
            print(f"   {'':27s} {r['evals']} labelled evaluations; recommend {r['recommend'][:90]} -> {r['top1']}%")
    print(f"   (= : this host's bits; ATen capability of this host: {ref['capability']})")
    print(f"   after: {load()}")


if __name__ == "__main__":
    main()
