"""The layer types AMCT's classic flow quantizes besides Conv2d/Linear (issue 37 item 1): AvgPool2d,
ConvTranspose2d, Conv3d, LSTM, GRU -- through the one command (builder, scoring, search, report, AMCT files), under
the deployed policy and AMCT's fake-quant model. Their records equal AMCT's to the bit on the zoo
(tests/test_amct_zoo.py, recorded); here: they run end to end, and what AMCT refuses opkit refuses."""
import json

import pytest
import torch
import torch.nn as nn

import opkit
from opkit.errors import OpkitError
from opkit.quant import QuantVariant, parse_config, read_record
from opkit.quant.amct import zoo
from opkit.quant.config import default_config


@pytest.mark.parametrize("name", ["avgpool", "deconv", "deconv1d", "deconv_grouped", "conv3d", "lstm", "gru"])
def test_each_layer_type_runs_through_opkit_quant_and_its_files_rebuild_it(name, tmp_path):
    model = zoo.load(name)
    calib, (x, y) = zoo.calib_set(32), zoo.test_set(120)
    rep = opkit.quantize(model, calib, (x, y), target_drop=100.0, search=False)
    base = rep.variants[rep.base]
    new = {"avgpool": ["pool1", "pool2"], "deconv": ["up"], "deconv1d": ["up"], "deconv_grouped": ["up"], "conv3d": ["conv1", "conv2"], "lstm": ["rnn"],
           "gru": ["rnn"]}[name]
    assert set(new) <= set(base.quantized)
    # ranked by AMCT's sensitivity (so the searches can keep them in float), reported as INT8 layers
    assert set(new) <= set(rep.sensitivity)
    rows = {r["name"]: r for r in rep.layers}
    assert all(rows[n]["quantized"] and rows[n]["sensitivity_rank"] for n in new)
    assert rep.amct_only == {}
    assert not any("NOT AMCT'S ANSWER" in n for n in rep.notes)
    rep.write_amct_config(tmp_path / "q.json")
    rep.write_record(tmp_path / "r.txt")
    back = QuantVariant.from_amct(model, tmp_path / "q.json", tmp_path / "r.txt", calib[:2])
    recs = read_record(tmp_path / "r.txt")
    for n in new:
        assert n in back.quantized
        assert recs[n].scale_d == pytest.approx(rep.variants["recommended"].records[n].scale_d, rel=1e-7)
    if name in ("lstm", "gru"):
        r = recs["rnn"]
        gates = 4 if name == "lstm" else 3
        assert len(r.scale_w) == len(r.scale_r) == gates * 16 and r.scale_h is not None and r.offset_h is not None
    with torch.no_grad():
        a = back.as_variant("amct-fake-quant").simulator().run(model, (x,), record=False)[0]
        b = rep.variants["recommended"].as_variant("amct-fake-quant").simulator().run(model, (x,), record=False)[0]
    assert torch.equal(a, b)


def test_avgpool_weight_scale_is_one_and_the_pool_runs_on_the_codes():
    model = zoo.load("avgpool")
    rep = opkit.quantize(model, zoo.calib_set(32), zoo.test_set(60), target_drop=100.0, search=False,
                         policy="amct-fake-quant")
    r = rep.variants[rep.base].records["pool1"]
    assert r.scale_w == [1.0] and r.offset_w == [0]
    mode = rep.variants[rep.base].layers["pool1"]
    x = torch.randn(2, 10, 8, 8)
    y, *_ = mode.run(rep.variants[rep.base].simulator("amct-fake-quant"), None, None, (x,), {})
    q = torch.clamp(torch.round(x * (1 / torch.tensor(r.scale_d, dtype=torch.float32))) + r.offset_d, -128, 127)
    ref = torch.nn.functional.avg_pool2d(q - r.offset_d, 2) * torch.tensor(r.scale_d, dtype=torch.float32)
    assert torch.equal(y, ref)


def test_rnn_channel_wise_false_is_refused_with_amcts_message():
    model = zoo.load("lstm")
    cfg = json.loads(json.dumps(default_config(model).to_json()))
    cfg["rnn"]["weight_quant_params"]["channel_wise"] = False
    with pytest.raises(OpkitError, match=r"rnn.weight_quant_params.channel_wise: Layer's quant factor length 1 is "
                                         r"not suitable mutiple of rnn"):
        parse_config(cfg, model, "q.json")


def test_an_rnn_without_its_initial_state_stays_float_and_says_why():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn, self.fc = nn.GRU(6, 8, batch_first=True), nn.Linear(8, 3)

        def forward(self, x):
            return self.fc(self.rnn(x)[0][:, -1])
    torch.manual_seed(0)
    m = Net().eval()
    x = torch.randn(40, 5, 6)
    with torch.no_grad():
        y = m(x).argmax(-1)
    rep = opkit.quantize(m, x[:16], (x, y), target_drop=100.0, search=False)
    assert rep.variants[rep.base].quantized == ["fc"]
    assert any(n.startswith("rnn: an RNN called without its initial state") for n in rep.notes)


def test_rnn_amct_does_not_take_is_not_quantizable_and_not_named():
    """A 2-layer or bidirectional LSTM: AMCT's check_lstm_limit refuses it, so it is neither quantized nor named
    as AMCT's; batch_first=False is AMCT's but not simulated: named."""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.deep = nn.LSTM(6, 6, num_layers=2, batch_first=True)
            self.bi = nn.LSTM(6, 3, bidirectional=True, batch_first=True)
            self.seq = nn.LSTM(6, 6)
            self.fc = nn.Linear(6, 3)
    m = Net()
    cfg = default_config(m)
    assert list(cfg.layers) == ["fc"]
    assert list(opkit.quant.run.amct_only(m)) == ["seq"]
