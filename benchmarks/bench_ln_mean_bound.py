"""Issue 23 analysis: the LayerNorm cancellation bound's error scale, measured against an FP64 reference.

    python benchmarks/bench_ln_mean_bound.py [--workspace DIR] [--draws N]

The harness case `layer_norm_fp32_backward[fp32-1x20000-scale50-eps1e-06]` failed (dweight 1.51x its bound)
while the error scale took x - mean as rounded relative to |x| + |mean|. The mean is a sum of the x: any
FP32 sum is rounded relative to the magnitude of its terms, mean(|x|), not to the cancelled result |mean|.
This script measures, on the harness's own inputs and on zero-mean draws:
- the mean error a kernel actually has (recovered from dweight = dy * xhat by a least-squares fit
  xhat = (x - m) * r), in units of u * mean(|x|) and of u * |mean|;
- the worst error / bound of opkit's kernel and of PyTorch's own FP32 op (autograd through
  F.layer_norm in float32) under the old scale (|mean|) and the corrected one (mean(|x|)).
If PyTorch's FP32 op breaks the old bound, the bound asks more than FP32 arithmetic gives.
"""
from __future__ import annotations

import argparse
import os
import statistics

import _bench

U, T, K = 2.0 ** -24, 2.0 ** -13, 64     # FP32 unit roundoff, fp32 threshold, the rule's constant
CASE = "fp32-1x20000-scale50-eps1e-06"
EPS = 1e-5 / 10                          # the case's eps: 1/10 of the default, as cases.py makes it


def worst_ratio(dw, x, dy, mean_term) -> float:
    """max |dw - gold| / (T*|gold| + K*u*|dy|*(|x| + mean_term)*rstd), all in fp64, one row."""
    import torch
    X, DY = x.double()[0], dy.double()[0]
    mean = X.mean()
    rstd = 1 / torch.sqrt(((X - mean) ** 2).mean() + EPS)
    gold = DY * (X - mean) * rstd
    bound = T * gold.abs() + K * U * DY.abs() * (X.abs() + mean_term(X)) * rstd
    return ((dw.double() - gold).abs() / bound).max().item()


def old_term(X):
    return X.mean().abs()


def new_term(X):
    return X.abs().mean()


def mean_error_units(dw, x, dy) -> tuple[float, float]:
    """The kernel's effective mean error in units of u*mean(|x|) and of u*|mean|."""
    import torch
    X, DY = x.double()[0], dy.double()[0]
    xk = dw.double() / DY
    A = torch.stack([X, torch.ones_like(X)], 1)
    a, b = torch.linalg.lstsq(A, xk.unsqueeze(1)).solution.squeeze().tolist()
    err = abs(-b / a - X.mean().item())
    return err / (U * X.abs().mean().item()), err / (U * abs(X.mean().item()))


def torch_dweight(dy, x, w):
    import torch
    xt, wt = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
    bt = torch.zeros_like(w, requires_grad=True)
    y = torch.nn.functional.layer_norm(xt, (x.shape[-1],), wt, bt, EPS)
    return torch.autograd.grad(y, (xt, wt, bt), dy)[1]



def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", default=None, help="a workspace with layer_norm_fp32_backward built "
                    "(default: the bundled op, built into the cache on first use)")
    ap.add_argument("--draws", type=int, default=20)
    args = ap.parse_args()
    _bench.banner("LayerNorm backward: the cancellation bound's mean term against FP64")
    import torch

    from opkit.harness.cases import build_matrix, make_inputs
    from opkit.opspec import load_spec
    from opkit.workspace import bundled_ops_dir

    torch.set_num_threads(1)
    _bench.load_ops(["layer_norm_fp32_backward"], args.workspace)
    op = torch.ops.opkit.layer_norm_fp32_backward
    spec = load_spec(bundled_ops_dir() / "layer_norm_fp32_backward" / "op.yaml", bundled=True)
    case = next(c for c in build_matrix(spec, "default", 0) if c.id == CASE)
    assert case.attrs["eps"] == EPS, case.attrs
    dy, x, w = make_inputs(spec, case)
    dw = op(dy, x, w, eps=EPS)[1]
    tdw = torch_dweight(dy, x, w)
    X = x.double()[0]
    print(f"   harness case {CASE}: mean {X.mean().item():.3g}, mean(|x|) {X.abs().mean().item():.3g}")
    for who, d in (("opkit kernel", dw), ("torch FP32  ", tdw)):
        e_abs, e_mean = mean_error_units(d, x, dy)
        print(f"   {who}: mean error {e_abs:.3f} u*mean(|x|) = {e_mean:.1f} u*|mean|; worst err/bound: "
              f"old scale {worst_ratio(d, x, dy, old_term):.3f}, corrected {worst_ratio(d, x, dy, new_term):.4f}")

    # Zero-mean rows (x - mean(x) in fp64, then rounded): |mean| ~ 1e-8, so the old bound asks for a mean
    # exact to ~1e-8 * 64u from a sum of 20000 terms of magnitude ~40.
    rows = {("opkit", "old"): [], ("opkit", "new"): [], ("torch", "old"): [], ("torch", "new"): []}
    for s in range(args.draws):
        g = torch.Generator().manual_seed(1000 + s)
        x64 = torch.randn(1, 20000, generator=g, dtype=torch.float64) * 50
        x = (x64 - x64.mean()).float()
        dy = torch.randn(1, 20000, generator=g)
        w = 1 + 0.5 * torch.randn(20000, generator=g)
        for who, d in (("opkit", op(dy, x, w, eps=EPS)[1]), ("torch", torch_dweight(dy, x, w))):
            rows[(who, "old")].append(worst_ratio(d, x, dy, old_term))
            rows[(who, "new")].append(worst_ratio(d, x, dy, new_term))
    print(f"   {args.draws} zero-mean draws 1x20000 x50 (eps 1e-6): worst err/bound (median), draws failing")
    for (who, scale), r in rows.items():
        print(f"     {who} {scale:3s} scale: max {max(r):7.3f} (median {statistics.median(r):.3f}), "
              f"{sum(v > 1 for v in r)}/{len(r)} fail")
    print(f"   after:  {_bench.load()}; {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
