"""AMCT's per-layer algorithms inside `opkit quant` (issue 37 item 2; python/opkit/quant/layer_algorithms.py):
DMQ read from the AMCT config (dmq_balancer_param), calibrated and deployed as AMCT runs it, a strategy row,
a search action, written back to the AMCT config and record and verified by a rerun from those files.

AMCT's recorded DMQ results (tests/quantdata/amct_dmq/, a float32 model) are compared as test_dmq.py does:
offsets exactly, factors and scales to 1e-6 relative -- the factor's float32 pow differs by one ulp between CPUs
(issue 36); the config path is required to equal opkit.quant.dmq's model-transform path bit for bit on any CPU.
"""
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).parent))
from quantdata import amct_dmq  # noqa: E402

import opkit  # noqa: E402
from opkit.errors import OpkitError  # noqa: E402
from opkit.quant import QuantVariant  # noqa: E402
from opkit.quant.calibrate import calibrate  # noqa: E402
from opkit.quant.config import default_config, parse_config  # noqa: E402
from opkit.quant.dmq import apply_balance, balance_factors  # noqa: E402
from opkit.quant.graph import read_graph  # noqa: E402
from opkit.quant.records import read_record, write_record  # noqa: E402


def dmq_config(m, strengths):
    d = default_config(m).to_json()
    for n, a in strengths.items():
        d[n]["dmq_balancer_param"] = a
    return parse_config(d, m)


def test_config_dmq_records_equal_recorded_amct_and_the_dmq_module():
    m, x = amct_dmq.net(), amct_dmq.calib()
    recs = calibrate(m, x, dmq_config(m, amct_dmq.STRENGTH), read_graph(m, (x[:2],)))
    ref = dict(np.load(amct_dmq.REFS / "dmq_net.npz"))
    fm = amct_dmq.folded(m)
    factors = balance_factors(fm, x, amct_dmq.STRENGTH)
    for n in amct_dmq.LAYERS:
        r = recs[n]
        got = np.array(r.balance_factor, np.float32)
        assert np.array_equal(got, factors[n].numpy()), n           # same arithmetic as opkit.quant.dmq
        np.testing.assert_allclose(got, ref[f"{n}:factor"], rtol=1e-6, atol=0, err_msg=n)
        assert r.offset_d == int(ref[f"{n}:offset_d"][0]), n
        np.testing.assert_allclose(np.float32(r.scale_d), ref[f"{n}:scale_d"][0], rtol=1e-6, atol=0, err_msg=n)
        np.testing.assert_allclose(np.array(r.scale_w, np.float32), ref[f"{n}:scale_w"], rtol=1e-6, atol=0,
                                   err_msg=n)
    # without DMQ the records differ: the test can fail
    plain = calibrate(m, x, default_config(m), read_graph(m, (x[:2],)))
    assert plain["conv1"].balance_factor is None and plain["conv1"].scale_w != recs["conv1"].scale_w


def test_config_dmq_equals_balancing_the_model_first():
    """The config path (factors in the record, W * f and the 1 / f Mul inside the layer) computes what the
    documented manual path (apply_balance on the folded model, then plain quantization) computes."""
    m, x = amct_dmq.net(), amct_dmq.calib()
    recs = calibrate(m, x, dmq_config(m, amct_dmq.STRENGTH), read_graph(m, (x[:2],)))
    fm = amct_dmq.folded(m)
    bal = apply_balance(fm, balance_factors(fm, x, amct_dmq.STRENGTH))
    manual = calibrate(bal, x, default_config(bal), read_graph(bal, (x[:2],)))
    for n in amct_dmq.LAYERS:
        assert recs[n].scale_w == manual[n].scale_w, n
        assert (recs[n].scale_d, recs[n].offset_d) == (manual[n].scale_d, manual[n].offset_d), n


@pytest.mark.parametrize("value,msg", [
    (1, r"conv1\.dmq_balancer_param: Type of dmq_balancer_param should be <class 'float'>, but is <class 'int'>"),
    (0.9, r"conv1\.dmq_balancer_param: The dmq_balancer_param must be in range \[0\.2, 0\.8\]"),
    ("0.5", r"conv1\.dmq_balancer_param: Type of dmq_balancer_param should be <class 'float'>"),
])
def test_bad_dmq_balancer_param_refused_with_amcts_message(value, msg):
    m = amct_dmq.net()
    d = default_config(m).to_json()
    d["conv1"]["dmq_balancer_param"] = value
    with pytest.raises(OpkitError, match=msg):
        parse_config(d, m)


def test_dmq_config_round_trips():
    m = amct_dmq.net()
    cfg = dmq_config(m, {"conv1": 0.3, "fc": 0.8})
    assert cfg.dmq_layers == {"conv1": 0.3, "fc": 0.8}
    assert parse_config(cfg.to_json(), m).to_json() == cfg.to_json()
    assert "dmq_balancer_param" not in cfg.to_json()["dw"]


def test_record_with_balance_factor_round_trips_and_bad_factor_refused(tmp_path):
    m, x = amct_dmq.net(), amct_dmq.calib()
    recs = calibrate(m, x, dmq_config(m, {"conv1": 0.5}), read_graph(m, (x[:2],)))
    p = write_record(recs, tmp_path / "r.txt")
    assert "tensor_balance_factor" in p.read_text()
    back = read_record(p)
    assert np.array_equal(np.float32(back["conv1"].balance_factor), np.float32(recs["conv1"].balance_factor))
    assert back["dw"].balance_factor is None
    p.write_text(p.read_text().replace("tensor_balance_factor: ", "tensor_balance_factor: -", 1))
    with pytest.raises(OpkitError, match=r"'conv1': tensor_balance_factor must lie in"):
        read_record(p)


class Outlier(nn.Module):
    """Two Linear layers; input feature 0 is +-100 with a tiny weight (it carries nothing), the other 15 carry the
    class at magnitude 1: AMCT's per-tensor activation scale spends its codes on the outlier."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(16, 32), nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def outlier_model() -> Outlier:
    torch.manual_seed(0)
    m = Outlier().eval()
    with torch.no_grad():
        m.fc1.weight[:, 0] *= 0.01
    return m


def outlier_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 16, generator=g)
    x[:, 0] = 100 * torch.sign(torch.randn(n, generator=g))
    return x


def test_opkit_quant_recommends_dmq_and_rebuilds_it_from_the_written_files(tmp_path):
    m = outlier_model()
    x = outlier_data(400, 1)
    with torch.no_grad():
        y = m(x).argmax(-1)
    rep = opkit.quantize(m, outlier_data(64, 2), (x, y), policy="amct-fake-quant", target_drop=1.0)
    rows = {r.name: r for r in rep.strategies}
    assert rows["int8-default"].drop > 5 and rows["int8-dmq"].drop <= 1.0      # the row DMQ adds
    r = rep.recommend
    # DMQ keeps fc1 INT8 where float was the only answer before; cheaper than float, so chosen
    assert r.algorithms == {"dmq": ["fc1"]} and r.float_layers == [] and r.verified
    assert r.describe() == "dmq on fc1; INT8 elsewhere"
    assert rep.config.to_json()["fc1"]["dmq_balancer_param"] == 0.5
    cfg, rec = rep.write_amct_config(tmp_path / "q.json"), rep.write_record(tmp_path / "r.txt")
    v = QuantVariant.from_amct(outlier_model(), tmp_path / "q.json", tmp_path / "r.txt", x[:2])
    sim_a = v.simulator("amct-fake-quant")
    sim_b = rep.variants["recommended"].simulator("amct-fake-quant")
    a, _ = sim_a.run(outlier_model(), (x,), record=False)
    b, _ = sim_b.run(outlier_model(), (x,), record=False)
    assert torch.equal(a, b)
    assert 100.0 * float((a.argmax(-1) == y).float().mean()) == pytest.approx(r.top1)


def test_layers_amct_quantizes_but_opkit_does_not_are_named():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.pool = nn.Conv2d(3, 4, 3), nn.AvgPool2d(2)
            self.up = nn.ConvTranspose2d(4, 4, 2, stride=2)
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            return self.fc(self.up(self.pool(torch.relu(self.conv(x)))).mean((2, 3)))
    torch.manual_seed(0)
    m = Net().eval()
    x = torch.randn(40, 3, 10, 10)
    with torch.no_grad():
        y = m(x).argmax(-1)
    rep = opkit.quantize(m, x[:16], (x, y), policy="amct-fake-quant", target_drop=100.0, search=False)
    assert rep.amct_only == {"pool": "AMCT quantizes AvgPool2d layers; opkit does not simulate AvgPool2d in INT8 yet",
                             "up": "AMCT quantizes ConvTranspose2d layers; opkit does not simulate ConvTranspose2d "
                                   "in INT8 yet"}
    assert any(n.startswith("NOT AMCT'S ANSWER at pool") for n in rep.notes)
    assert rep.to_dict()["amct_only_layers"] == rep.amct_only
