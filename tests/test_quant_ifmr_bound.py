"""IFMR's candidate skip (algorithms._ifmr_best): the winner equals argmin over every candidate's exact loss
(ties to the first), on near-ties, all-equal and all-zero data, zero scales, overflowing errors, and with the
kernel's sums pushed to the edge of the proved bound."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from opkit.quant import algorithms as A
from opkit.quant import fused

pytestmark = pytest.mark.skipif(fused.kernels() is None, reason=f"no fused kernels here: {fused.why()}")


def _search(x, offset=True):
    """(lows, candidates, scales) as ifmr() builds them for ``x``."""
    top, bottom = A.percentile_bounds(x, 0.999999, 0.999999)
    ratios = torch.arange(0.7, 1.3, 0.01, dtype=torch.float32)
    if offset:
        cands = ratios * top
        scales = (cands - bottom) / 255
    else:
        cands = ratios * max(abs(top), abs(bottom))
        scales = cands / 127
    scales = torch.where(scales < A.FLT_EPSILON, torch.ones_like(scales), scales)
    lows = [bottom] * len(cands) if offset else [-c for c in cands.tolist()]
    return lows, cands, scales


def _every(x, lows, cands, scales):
    return int(np.argmin(A._mse_losses(x, lows, cands, scales)))


DATA = {
    "normal": lambda g: torch.randn(8192, generator=g),
    "relu": lambda g: torch.randn(5000, generator=g).relu() * 3,
    "all_equal": lambda g: torch.full((777,), 0.3),
    "all_zero": lambda g: torch.zeros(1000),                       # every scale 0 -> 1.0, every loss 0: a tie
    "grid": lambda g: torch.randint(-8, 8, (4099,), generator=g).float() * 0.125,   # exact ties between candidates
    "one": lambda g: torch.tensor([2.5]),
    "tiny": lambda g: torch.randn(300, generator=g) * 1e-30,       # scales below FLT_EPSILON
    "huge": lambda g: torch.randn(300, generator=g) * 3e37,         # squared errors overflow float32: inf sums
}


@pytest.mark.parametrize("name", list(DATA))
@pytest.mark.parametrize("offset", [True, False])
def test_winner_equals_argmin_of_every_exact_loss(name, offset, monkeypatch):
    x = DATA[name](torch.Generator().manual_seed(5)).contiguous()
    lows, cands, scales = _search(x, offset)
    want = _every(x, lows, cands, scales)
    monkeypatch.setattr(A, "IFMR_BOUND", True)
    assert A._ifmr_best(x, lows, cands, scales) == want
    got = A.ifmr(x, 8, offset)
    monkeypatch.setattr(A, "IFMR_BOUND", False)
    assert got == A.ifmr(x, 8, offset)


def test_near_tie_between_two_candidates_is_decided_by_the_exact_losses():
    """Two identical candidates (the same clip and scale): equal losses, the first must win however the sums
    round; a third a hair away is kept for the exact comparison, not skipped."""
    x = torch.randn(6000, generator=torch.Generator().manual_seed(9))
    lows, cands, scales = _search(x)
    j = _every(x, lows, cands, scales)
    idx = torch.tensor([j, j, j + 1 if j + 1 < len(cands) else j - 1, j])
    lows2, c2, s2 = [lows[i] for i in idx.tolist()], cands[idx].clone(), scales[idx].clone()
    c2[2], s2[2] = c2[0], torch.nextafter(s2[0], torch.tensor(1e9))
    assert A._ifmr_best(x, lows2, c2, s2) == _every(x, lows2, c2, s2) == 0


def test_sums_at_the_edge_of_the_bound_never_skip_the_winner(monkeypatch):
    """The kernel's sums moved by the most the proof allows (g = n u, either way, per candidate): the winner
    stays argmin's -- the skip margin covers any summation order, not just the kernel's."""
    g = torch.Generator().manual_seed(3)
    real = fused.ifmr_sums
    for trial in range(40):
        x = (torch.randn(int(torch.randint(1, 5000, (1,), generator=g)), generator=g) * 2).contiguous()
        lows, cands, scales = _search(x, trial % 2 == 0)
        want = _every(x, lows, cands, scales)
        gam = x.numel() * 2.0 ** -53
        sign = torch.randint(0, 2, (len(cands),), generator=g).tolist()
        monkeypatch.setattr(fused, "ifmr_sums", lambda *a, s=sign, gm=gam: [
            t * (1 + gm if up else 1 - gm) for t, up in zip(real(*a), s)])
        assert A._ifmr_best(x, lows, cands, scales) == want


def test_most_candidates_are_skipped_on_ordinary_data(monkeypatch):
    """Not a correctness check: the exact path runs for the few candidates the bound cannot separate."""
    x = torch.randn(8192, generator=torch.Generator().manual_seed(1))
    lows, cands, scales = _search(x)
    seen = []
    real = A._mse_losses
    monkeypatch.setattr(A, "_mse_losses", lambda x, lo, c, s: seen.append(len(lo)) or real(x, lo, c, s))
    A._ifmr_best(x, lows, cands, scales)
    assert seen and seen[0] < len(cands) // 4


def test_kernel_sums_are_its_documented_order():
    x = torch.randn(1003, generator=torch.Generator().manual_seed(2))
    lows, cands, scales = _search(x)
    lo = torch.tensor(lows, dtype=torch.float32)
    sums = fused.ifmr_sums(x, lo, cands.contiguous(), scales.contiguous())
    ref = fused.ifmr_sums_reference(fused.ifmr_sq_torch(x, lo, cands, scales))
    assert [v.hex() for v in sums] == [v.hex() for v in ref]
    assert all(math.isfinite(v) for v in sums)


def _edge_world(tie: bool):
    """Five candidates whose kernel sums sit at the far edges of the proved interval, against the loss order.

    Candidate A (the true winner) and B: NumPy's sums P_A <= P_B -- losses one ulp apart (A below), or equal with
    A first (a tie). Exact sums S chosen so that P_A = S_A (1-g) and P_B = S_B (1+g), the most the bound lets
    NumPy's order move them; the kernel's sums then at the other edge, T_A = S_A (1+g) rounded down and
    T_B = S_B (1-g) rounded up -- so T_B < T_A, by the largest ratio any valid pair of summation orders can give.
    The other three are far above (the skip must drop them). Returns (n, sums, losses, A)."""
    n = 4096                                 # a power of two: P / n is exact, the loss is P / n
    g = Fraction(n - 1, 2 ** 53) / (1 - Fraction(n - 1, 2 ** 53))
    la = 0.3710937
    lb = la if tie else math.nextafter(la, math.inf)
    pa, pb = Fraction(la * n), Fraction(lb * n)

    def down(q):
        f = float(q)
        return f if Fraction(f) <= q else math.nextafter(f, -math.inf)

    def up(q):
        f = float(q)
        return f if Fraction(f) >= q else math.nextafter(f, math.inf)
    ta, tb = down(pa * (1 + g) / (1 - g)), up(pb * (1 - g) / (1 + g))
    assert tb < ta
    far = [10 * la * n, 11 * la * n, 12 * la * n]
    if tie:                                  # A first: a tie goes to the lower index
        return n, [ta, tb] + far, [la, lb] + [f / n for f in far], 0
    return n, [tb, far[0], ta] + far[1:], [lb, far[0] / n, la] + [f / n for f in far[1:]], 2


def _edge_pick(monkeypatch, tie: bool) -> tuple[int, int, int]:
    """(_ifmr_best's pick, argmin's pick, how many exact losses it computed) in _edge_world."""
    n, sums, losses, want = _edge_world(tie)
    assert int(np.argmin(losses)) == want
    k = len(sums)
    x, cands = torch.zeros(n), torch.arange(k, dtype=torch.float32)
    seen = []

    def exact(x_, lows, c, s):
        seen.append(len(lows))
        return [losses[int(v)] for v in c.tolist()]
    monkeypatch.setattr(A, "IFMR_BOUND", True)
    monkeypatch.setattr(A, "IFMR_FUSED", True)
    monkeypatch.setattr(fused, "ifmr_sums", lambda *a: list(sums))
    monkeypatch.setattr(A, "_mse_losses", exact)
    return A._ifmr_best(x, [0.0] * k, cands, torch.ones(k)), want, seen[-1]


@pytest.mark.parametrize("tie", [False, True], ids=["one-ulp", "tie"])
def test_sums_at_the_interval_edges_against_the_loss_order(tie, monkeypatch):
    """The skip keeps the winner when the kernel's sums and NumPy's sit at opposite edges of the bound with losses
    one ulp apart (or tied) -- and the check can fail: a zero margin, or one of n u (half the proof's 2 g), drops
    the winner."""
    got, want, computed = _edge_pick(monkeypatch, tie)
    assert got == want and computed < 5                     # the far candidates skipped, the winner not
    monkeypatch.setattr(A, "_skip_margin", lambda n: 0.0)
    assert _edge_pick(monkeypatch, tie)[0] != want
    monkeypatch.setattr(A, "_skip_margin", lambda n: n * 2.0 ** -53)
    assert _edge_pick(monkeypatch, tie)[0] != want
