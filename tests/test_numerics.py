"""opkit.numerics: metrics that say exactly 1.0 / 0.0 for identical inputs and do not depend on the BLAS."""
import math

import numpy as np
import pytest
import torch

from opkit import numerics
from opkit.accuracy.layers import metrics
from opkit.harness.metrics import compare
from opkit.opspec.standard import thresholds


def _exact_cosine(a: np.ndarray, b: np.ndarray) -> float:
    # correctly rounded sums (math.fsum): the reference the pairwise sums must stay close to
    return math.fsum(a * b) / math.sqrt(math.fsum(a * a) * math.fsum(b * b))


@pytest.mark.parametrize("seed", range(50))
def test_identical_tensors_give_exactly_one(seed):
    # dot / (norm * norm) gives 0.9999999999999999 for about half of these 3x4 draws
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(seed))
    assert numerics.cosine(x, x.clone()) == 1.0
    m = metrics(x, x.clone())
    assert m["cosine"] == 1.0 and m["max_abs"] == 0.0 and m["max_rel"] == 0.0


def test_cosine_close_to_exact_and_reproducible():
    g = torch.Generator().manual_seed(1)
    a = torch.randn(100_003, generator=g, dtype=torch.float64)
    b = a + 1e-3 * torch.randn(100_003, generator=g, dtype=torch.float64)
    c = numerics.cosine(a, b)
    assert abs(c - _exact_cosine(a.numpy(), b.numpy())) < 1e-12      # the documented tolerance
    assert numerics.cosine(a.clone(), b.clone()) == c                  # same inputs, same bits
    assert c < 1.0


def test_cosine_edge_cases():
    z = torch.zeros(5, dtype=torch.float64)
    one = torch.ones(5, dtype=torch.float64)
    assert numerics.cosine(z, z) == 1.0 and numerics.cosine(z, one) == 0.0
    assert numerics.cosine(one, -one) == -1.0
    assert numerics.cosine(torch.zeros(0), torch.zeros(0)) is None
    big = torch.tensor([1e200, 3e200], dtype=torch.float64)           # squares would overflow
    assert numerics.cosine(big, big * 1.5) == pytest.approx(1.0, abs=1e-15)
    tiny = torch.tensor([1e-200, -2e-200], dtype=torch.float64)        # squares would underflow
    assert numerics.cosine(tiny, -tiny) == pytest.approx(-1.0, abs=1e-15)


def test_rms_and_mean():
    assert numerics.rms(torch.zeros(7)) == 0.0 and numerics.rms(torch.zeros(0)) == 0.0
    assert numerics.rms(torch.tensor([3.0, 4.0])) == pytest.approx(math.sqrt(12.5), rel=1e-15)
    assert numerics.rms(torch.tensor([1e300, 1e300], dtype=torch.float64)) == pytest.approx(1e300, rel=1e-15)
    assert numerics.mean(torch.tensor([1.0, 2.0, 4.0])) == pytest.approx(7 / 3, rel=1e-15)


def test_harness_compare_identical_is_exact():
    x = torch.randn(64, 1000, generator=torch.Generator().manual_seed(3))
    res = compare(x, x.double(), thresholds("float32"))
    assert res["passed"] and res["cosine"] == 1.0 and res["rmse"] == 0.0 and res["max_abs_err"] == 0.0
