"""opkit's DMQ balancer against AMCT's classic flow (quantize_preprocess -> quantize_model with
dmq_balancer_param) on a small CNN with an outlier input channel, conv+BN, a depthwise conv and a Linear.

CI: against AMCT's record kept in tests/quantdata/amct_dmq/ (commit in meta.json), made with the calibration
forwards under the portable arithmetic (opkit.quant.amct.portable: the same bits on every CPU); opkit's side runs
under it too, and every factor, scale and offset is equal bit for bit. Live (the CPU's own kernels on both
sides, bit for bit as well): OPKIT_AMCT=<checkout> pytest tests/test_dmq.py
"""
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
from quantdata import amct_dmq  # noqa: E402

from opkit.errors import OpkitError  # noqa: E402
from opkit.quant.calibrate import calibrate  # noqa: E402
from opkit.quant.config import default_config, parse_config  # noqa: E402
from opkit.quant.dmq import apply_balance, balance_factors  # noqa: E402
from opkit.quant.graph import read_graph  # noqa: E402


def opkit_dmq() -> dict[str, np.ndarray]:
    """opkit's config path (dmq_balancer_param in AMCT's config; opkit folds the BatchNorms, records the factors,
    calibrates with the input divided by them as AMCT's CaliQuant does)."""
    m, x = amct_dmq.net(), amct_dmq.calib()
    cfg = default_config(m).to_json()
    for n, a in amct_dmq.STRENGTH.items():
        cfg[n]["dmq_balancer_param"] = a
    recs = calibrate(m, x, parse_config(cfg, m), read_graph(m, (x[:2],)))
    out = {}
    for n in amct_dmq.LAYERS:
        r = recs[n]
        out.update({f"{n}:factor": np.array(r.balance_factor, np.float32),
                    f"{n}:scale_d": np.array([r.scale_d], np.float32),
                    f"{n}:offset_d": np.array([r.offset_d], np.int32),
                    f"{n}:scale_w": np.array(r.scale_w, np.float32)})
    return out


def _compare(ref, got):
    assert sorted(ref) == sorted(got)
    assert [k for k in ref if not np.array_equal(ref[k], got[k])] == []


def _portable():
    meta = json.loads((amct_dmq.REFS / "meta.json").read_text())
    assert meta.get("arithmetic") == "float64", "recorded with one CPU's own kernels: record it again"
    return amct_dmq.arithmetic(portable=True)


def test_equal_to_recorded_amct():
    with _portable():
        got = opkit_dmq()
    _compare(dict(np.load(amct_dmq.REFS / "dmq_net.npz")), got)


def opkit_factors2() -> dict[str, np.ndarray]:
    f = balance_factors(amct_dmq.net2(), amct_dmq.calib2(), {"ct": 0.5, "g": 0.5, "c1": 0.5})
    return {f"{n}:factor": v.numpy() for n, v in f.items()}


def test_convtranspose_grouped_conv1d_factors_equal_recorded_amct():
    with _portable():
        got = opkit_factors2()
    _compare(dict(np.load(amct_dmq.REFS / "dmq_net2.npz")), got)


@pytest.mark.skipif(not os.environ.get("OPKIT_AMCT"), reason="OPKIT_AMCT (an AMCT checkout) not set")
def test_live_amct():
    why = amct_dmq.classic_missing(os.environ["OPKIT_AMCT"])
    if why:
        pytest.skip(why)
    _compare(amct_dmq.run_amct(os.environ["OPKIT_AMCT"]), opkit_dmq())
    _compare(amct_dmq.run_amct_factors(os.environ["OPKIT_AMCT"]), opkit_factors2())


def test_balanced_model_computes_the_same_and_moves_the_outlier():
    m, x = amct_dmq.folded(amct_dmq.net()), amct_dmq.calib()
    factors = balance_factors(m, x, amct_dmq.STRENGTH)
    with torch.no_grad():
        torch.testing.assert_close(apply_balance(m, factors)(x), m(x), rtol=1e-5, atol=1e-5)
    f = factors["conv1"]
    assert f[1] > 2 * max(f[0], f[2])       # the 5x input channel is divided the most
    assert m.conv1.weight.grad is None and not hasattr(m.conv1, "dmq_inverse_factor")   # input untouched


def test_bad_strength_and_layer_are_named():
    m, x = amct_dmq.folded(amct_dmq.net()), amct_dmq.calib()
    with pytest.raises(OpkitError, match=r"0\.9 is not in \[0\.2, 0\.8\]"):
        balance_factors(m, x, {"conv1": 0.9})
    with pytest.raises(OpkitError, match="'bn1'"):
        balance_factors(amct_dmq.net(), x, {"bn1": 0.5})


def test_opkit_quant_config_takes_dmq_and_ada():
    """Both are read from the config and simulated since issue 37 (tests/test_quant_algorithms.py)."""
    from opkit.quant.config import parse_config
    m = amct_dmq.net()
    d = default_config(m).to_json()
    d["conv1"]["dmq_balancer_param"] = 0.5
    d["conv1"]["weight_quant_params"] = {"wts_algo": "ada_quantize"}
    cfg = parse_config(d, m)
    assert cfg.dmq_layers == {"conv1": 0.5} and cfg.layers["conv1"].wts["num_iteration"] == 10000


def test_the_recording_arithmetic_takes_powers_from_float64():
    """The balance factor is a power (x ** a, and ATen's x ** 0.5 is its sqrt kernel, MKL's on an MKL build, whose
    float32 bits depend on the CPU's vendor): under the recording arithmetic both are the float64 result rounded
    once, so a record made on an AMD host compares bit for bit on an Intel one. Natively, torch's float32 pow
    differs from that on some of these values on any host, so the check can fail."""
    x = np.random.default_rng(3).uniform(1e-3, 1e3, 200_000).astype(np.float32)
    exact = {a: (x.astype(np.float64) ** a).astype(np.float32) for a in (0.5, 0.3)}
    native = {a: (torch.from_numpy(x) ** a).numpy() for a in (0.5, 0.3)}
    with amct_dmq.arithmetic(portable=True):
        got = {a: (torch.from_numpy(x) ** a).numpy() for a in (0.5, 0.3)}
        root = torch.from_numpy(x).sqrt().numpy()
    assert all(np.array_equal(got[a], exact[a]) for a in exact)
    assert np.array_equal(root, exact[0.5])
    assert not np.array_equal(native[0.3], exact[0.3])
