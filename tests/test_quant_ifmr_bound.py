"""IFMR's candidate skip (algorithms._ifmr_best): the winner equals argmin over every candidate's exact loss
(ties to the first), on near-ties, all-equal and all-zero data, zero scales, overflowing errors, and with the
kernel's sums pushed to the edge of the proved bound."""
from __future__ import annotations

import math

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
