"""opkit's ADA (AdaRound) against AMCT's classic flow (quantize_model with wts_algo ada_quantize) on the DMQ
test CNN (conv+BN+ReLU, depthwise conv+BN+ReLU, 1x1 conv+ReLU, Linear), 40 samples, 60 iterations per layer.

ADA trains, so equality needs the same minibatches: both sides seed torch's global generator (AMCT draws its
minibatch indices with torch.randperm and nothing else from it). The record (tests/quantdata/amct_ada/) was made
with AdaRound's training under the portable arithmetic (the convolutions, matmuls and their backward in float64,
rounded once: amct_ada.TRAINING), and opkit's side runs under it too: the KL weight scales and the learned
weights are equal bit for bit on any CPU (a wrong activation in the loss -- the first difference found: a folded
BatchNorm's Identity hid the ReLU -- had moved them by up to 8e-5). Live, both on the CPU's own kernels, bit for
bit as well: OPKIT_AMCT=<checkout> pytest tests/test_ada_round.py
"""
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).parent))
from quantdata import amct_ada, amct_dmq  # noqa: E402
from quantdata.amct_dmq import LAYERS, STRENGTH, calib, folded, net  # noqa: E402

from opkit.errors import OpkitError  # noqa: E402
from opkit.quant.ada_round import AdaParams, ada_round, following_activations, kl_scales  # noqa: E402
from opkit.quant.dmq import apply_balance, balance_factors  # noqa: E402


@pytest.fixture
def one_thread():
    """Tiny convolutions: one torch thread is faster than two on a loaded 2-core machine."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def opkit_ada(channel_wise: dict[str, bool], dmq: bool = False) -> dict[str, np.ndarray]:
    params = {n: AdaParams(num_iteration=amct_ada.ITERATIONS, channel_wise=channel_wise[n]) for n in LAYERS}
    m, x = folded(net()), calib(amct_ada.SAMPLES)
    if dmq:
        m = apply_balance(m, balance_factors(m, x, STRENGTH))
    res = ada_round(m, x, params, seed=amct_ada.SEED)
    out = {}
    for n in LAYERS:
        out.update({f"{n}:scale_w": res.scales[n].numpy(), f"{n}:channel_wise": np.array([channel_wise[n]]),
                    f"{n}:weight": res.weights[n].numpy()})
    return out


def _channel_wise(ref):
    return {n: bool(ref[f"{n}:channel_wise"][0]) for n in LAYERS}


@pytest.mark.parametrize("dmq", [False, True], ids=["ada", "dmq+ada"])
def test_equal_to_recorded_amct(one_thread, dmq):
    import json

    from opkit.quant.amct.portable import Float64Arithmetic
    assert json.loads((amct_ada.REFS / "meta.json").read_text()).get("arithmetic") == "float64", \
        "recorded with one CPU's own kernels: record it again (python tests/quantdata/amct_ada.py)"
    ref = dict(np.load(amct_ada.REFS / ("ada_dmq_net.npz" if dmq else "ada_net.npz")))
    with Float64Arithmetic(only=amct_ada.TRAINING):
        got = opkit_ada(_channel_wise(ref), dmq)
    assert sorted(got) == sorted(ref)
    assert [k for k in ref if not np.array_equal(ref[k], got[k])] == []


@pytest.mark.skipif(not os.environ.get("OPKIT_AMCT"), reason="OPKIT_AMCT (an AMCT checkout) not set")
def test_live_amct_bit_exact():
    why = amct_dmq.classic_missing(os.environ["OPKIT_AMCT"])
    if why:
        pytest.skip(why)
    for dmq in (False, True):
        ref = amct_ada.run_amct(os.environ["OPKIT_AMCT"], dmq)
        got = opkit_ada(_channel_wise(ref), dmq)
        assert [k for k in ref if not np.array_equal(ref[k], got[k])] == [], f"dmq={dmq}"


def test_learning_rounds_better_than_nearest(one_thread):
    """On the layer's own objective: the learned rounding reconstructs the ReLU output better than rounding to
    nearest with the same scales (what ADA is for)."""
    m, x = folded(net()), calib(amct_ada.SAMPLES)
    res = ada_round(m, x, {"conv1": AdaParams(num_iteration=150)}, seed=0)
    s = res.scales["conv1"].reshape(-1, 1, 1, 1)
    nearest = torch.clamp(torch.round(m.conv1.weight / s), -128, 127) * s
    ref = torch.relu(m.conv1(x))
    conv = lambda w: torch.relu(torch.nn.functional.conv2d(x, w, m.conv1.bias))   # noqa: E731
    with torch.no_grad():
        assert (conv(res.weights["conv1"]) - ref).pow(2).sum() < (conv(nearest) - ref).pow(2).sum()


def test_activation_found_through_a_folded_batchnorm():
    acts = following_activations(folded(net()), list(LAYERS))
    assert [type(acts[n]).__name__ for n in LAYERS] == ["ReLU", "ReLU", "ReLU", "NoneType"]


def test_kl_scale_of_a_constant_is_one_and_bad_layers_are_named():
    assert kl_scales(torch.zeros(2, 4), True).tolist() == [1.0, 1.0]
    with pytest.raises(OpkitError, match="'bn1'"):
        ada_round(net(), calib(4), {"bn1": AdaParams(num_iteration=1)})
    assert isinstance(folded(net()).bn1, nn.Identity)
