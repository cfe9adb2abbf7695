"""AMCT config JSON and record file round trips, AMCT's errors on bad configs, calibration into a variant that
runs through the one engine and pickles (issue 21)."""
import json
import pickle

import pytest
import torch
import torch.nn as nn

from opkit.accuracy.layers import metrics
from opkit.errors import OpkitError
from opkit.quant import QuantVariant, build_variant, default_config, load_config, parse_config, read_record, write_record
from opkit.quant.calibrate import calibrate
from opkit.quant.graph import read_graph
from opkit.quant.modes import FloatConv, FoldedBatchNorm, QuantLayer


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.seq = nn.Sequential(nn.Conv1d(8, 4, 3, padding=1), nn.ReLU())
        self.fc = nn.Linear(4 * 16, 5)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.bn2(self.dw(x)))
        x = nn.functional.adaptive_avg_pool2d(x, 4).flatten(2)          # [N, 8, 16]
        return self.fc(self.seq(x).flatten(1))


@pytest.fixture(scope="module")
def net():
    torch.manual_seed(0)
    m = Net().eval()
    with torch.no_grad():
        for bn in (m.bn1, m.bn2):
            bn.running_mean.uniform_(-0.2, 0.2)
            bn.running_var.uniform_(0.5, 2.0)
    return m


def _x(n=16, seed=1):
    return torch.randn(n, 3, 12, 12, generator=torch.Generator().manual_seed(seed))


def test_default_config_is_amcts_format_and_round_trips(net, tmp_path):
    cfg = default_config(net)
    assert list(cfg.layers) == ["conv1", "dw", "seq.0", "fc"]
    d = cfg.to_json()
    assert list(d)[:5] == ["version", "batch_num", "activation_offset", "do_fusion", "skip_fusion_layers"]
    assert d["conv1"] == {"quant_enable": True,
                          "activation_quant_params": {"num_bits": 8, "max_percentile": 0.999999,
                                                      "min_percentile": 0.999999, "search_range": [0.7, 1.3],
                                                      "search_step": 0.01, "act_algo": "ifmr"},
                          "weight_quant_params": {"num_bits": 8, "wts_algo": "arq_quantize", "channel_wise": True}}
    assert d["fc"]["weight_quant_params"]["channel_wise"] is False      # Linear: no channel axis for AMCT
    p = cfg.write(tmp_path / "quant.json")
    text = p.read_text()
    assert '"version":1,' in text and '    "batch_num":1' in text          # AMCT's indent=4, separators=(',', ':')
    again = load_config(p, net)
    assert again.to_json() == d
    # a layer kept in float and HFMG on another survive the round trip
    d["dw"]["quant_enable"] = False
    d["seq.0"]["activation_quant_params"] = {"num_bits": 8, "num_of_bins": 2048, "act_algo": "hfmg"}
    (tmp_path / "edited.json").write_text(json.dumps(d))
    c2 = load_config(tmp_path / "edited.json", net)
    assert c2.quant_layers == ["conv1", "seq.0", "fc"] and c2.layers["seq.0"].act["num_of_bins"] == 2048
    assert load_config(c2.write(tmp_path / "again.json"), net).to_json() == c2.to_json()


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.__setitem__("conv_1", d.pop("conv1")), "'conv_1' (closest: conv1"),
    (lambda d: d["fc"]["weight_quant_params"].__setitem__("channel_wise", True),
     "The channel_wise must be False for layer type Linear in layer fc"),
    (lambda d: d["conv1"]["activation_quant_params"].__setitem__("num_of_bins", 4096), "can not appear at same time"),
    (lambda d: d["conv1"]["activation_quant_params"].__setitem__("search_range", [1.3, 0.7]),
     "search_range[0] must be less than search_range[1]"),
    (lambda d: d["conv1"]["weight_quant_params"].__setitem__("num_bits", 16), "weight num_bits is not in [4, 6, 7, 8]"),
    (lambda d: d.__setitem__("bn1", {"quant_enable": True}), "layer bn1 does not support quant"),
    (lambda d: d.__setitem__("skip_fusion_layers", ["fc"]), "Skip fusion layer \"fc\"'s type not in supported list"),
    (lambda d: [d[k].__setitem__("quant_enable", False) for k in ("conv1", "dw", "seq.0", "fc")],
     "No quant enable layer"),
])
def test_bad_configs_get_amcts_errors(net, tmp_path, edit, message):
    d = default_config(net).to_json()
    edit(d)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(d))
    with pytest.raises(OpkitError) as e:
        load_config(p, net)
    assert message in str(e.value) and str(p) in str(e.value)


def test_conv_bn_pairs_are_read_from_a_run(net):
    g = read_graph(net, (_x(2),))
    assert g.pairs == {"conv1": "bn1", "dw": "bn2"}
    assert g.calls["conv1"] == 1 and g.order[:2] == ["conv1", "bn1"]


def test_calibration_record_round_trip_and_variant_through_the_engine(net, tmp_path):
    cfg = default_config(net)
    cfg.batch_num = 2
    g = read_graph(net, (_x(2),))
    calib = _x(32, seed=3)
    recs = calibrate(net, calib, cfg, g)
    assert set(recs) == {"conv1", "dw", "seq.0", "fc"}
    r = recs["conv1"]
    assert len(r.scale_w) == 8 and r.offset_w == [0] * 8 and r.algo == "ifmr"
    assert r.clip_min <= 0 <= r.clip_max and -128 <= r.offset_d <= 127 and 0 <= r.clipped < 0.01
    assert len(recs["fc"].scale_w) == 1                                   # per layer
    # the AMCT record file round trips (9 significant digits: float32 exact)
    p = write_record(recs, tmp_path / "record.txt")
    assert 'key: "conv1"' in p.read_text()
    back = read_record(p)
    for n in recs:
        assert back[n].scale_d == pytest.approx(recs[n].scale_d, rel=1e-7) and back[n].offset_d == recs[n].offset_d
        assert back[n].scale_w == pytest.approx(recs[n].scale_w, rel=1e-7)
    v = build_variant(net, cfg, recs, g)
    assert isinstance(v.layers["conv1"], QuantLayer) and v.layers["conv1"].folded_bn == "bn1"
    assert isinstance(v.layers["bn1"], FoldedBatchNorm) and isinstance(v.layers["dw"], QuantLayer)
    x = _x(8, seed=5)
    ref = net(x)
    out, recs_run = v.simulator("cann-force-fp16").run(net, (x,))
    assert out.dtype == torch.float16
    by = {r.name: r for r in recs_run}
    assert by["conv1"].compute_dtype == "int8" and by["conv1"].kernel.startswith("AscendQuant fp16")
    assert by["bn1"].kernel == "folded into conv1"
    assert metrics(out.float(), ref)["cosine"] > 0.99
    # the same variant from the written files, and after a pickle round trip: identical outputs
    cfg.write(tmp_path / "quant.json")
    v2 = QuantVariant.from_amct(net, tmp_path / "quant.json", tmp_path / "record.txt", _x(2))
    v3 = pickle.loads(pickle.dumps(v))
    o2, _ = v2.simulator("cann-force-fp16").run(net, (x,), record=False)
    o3, _ = v3.simulator("cann-force-fp16").run(net, (x,), record=False)
    assert torch.equal(o2, out) and torch.equal(o3, out)
    # the model is untouched
    assert "forward" not in net.conv1.__dict__ and torch.equal(net(x), ref)


def test_float_layers_and_hfmg(net):
    cfg = default_config(net).with_float(["dw"])
    cfg.layers["conv1"].act = {"num_bits": 8, "num_of_bins": 1024, "act_algo": "hfmg"}
    g = read_graph(net, (_x(2),))
    recs = calibrate(net, _x(32, seed=3), cfg, g)
    assert recs["conv1"].algo == "hfmg" and "dw" not in recs
    v = build_variant(net, cfg, recs, g)
    assert isinstance(v.layers["dw"], FloatConv) and v.layers["dw"].by == "AMCT do_fusion"
    assert v.float_layers == ["dw"]
    assert 0 < v.weight_bytes(net) < sum(p.numel() for p in net.parameters()) * 2


def test_what_if_bit_widths_run_and_say_so(net):
    cfg = default_config(net)
    cfg.layers["conv1"].act["num_bits"] = 16            # AMCT accepts 4/8/16 activations, 4/6/7/8 weights
    cfg.layers["fc"].wts["num_bits"] = 4
    g = read_graph(net, (_x(2),))
    recs = calibrate(net, _x(32, seed=3), cfg, g)
    r = recs["conv1"]                                  # a 16-bit asymmetric grid: (max - min) / 65535
    assert r.act_bits == 16 and r.scale_d == pytest.approx((r.clip_max - r.clip_min) / 65535, rel=1e-3)
    v = build_variant(net, cfg, recs, g)
    assert v.layers["fc"].codes.abs().max() <= 8 and v.layers["conv1"].requant_to is None
    x = _x(8, seed=5)
    out, rows = v.simulator("cann-force-fp16").run(net, (x,))
    by = {r.name: r for r in rows}
    assert by["conv1"].compute_dtype == "a16w8" and "(what-if)" in by["conv1"].kernel
    assert by["fc"].compute_dtype == "a8w4" and "(what-if)" in by["fc"].kernel
    assert metrics(out.float(), net(x))["cosine"] > 0.98


class Attn(nn.Module):
    """A function-level matmul between two activations (AMCT's PyTorch flow cannot name it)."""

    def __init__(self):
        super().__init__()
        self.q, self.k = nn.Linear(16, 16), nn.Linear(16, 16)

    def forward(self, x):
        return (self.q(x) @ self.k(x).transpose(1, 2)).mean(1)


def test_matmul_what_if_is_exact_integer_arithmetic():
    from opkit.quant.algorithms import fake_quant
    from opkit.quant.modes import QuantMatmul
    torch.manual_seed(0)
    m = Attn().eval()
    x = torch.randn(4, 6, 16)
    g = read_graph(m, (x,))
    assert g.matmuls == ["matmul#0"]
    cfg = default_config(m)
    recs = calibrate(m, x, cfg, g, matmuls=g.matmuls)
    r = recs["matmul#0"]
    assert len(r.scale_w) == 1 and r.offset_w == [0]
    v = build_variant(m, cfg, recs, g)
    assert isinstance(v.functions["matmul#0"], QuantMatmul)
    # without a policy the mode is the fake-quant product, computed exactly
    qm = v.functions["matmul#0"]
    a, b = torch.randn(2, 5, 16), torch.randn(2, 16, 5)
    from opkit.accuracy.simulate import Simulator
    y, _, _, kernel = qm.run(Simulator(None), None, None, (a, b), {})
    ref = fake_quant(a, r.scale_d, r.offset_d, 8).double() @ fake_quant(b, r.scale_w[0], 0, 8).double()
    assert torch.allclose(y.double(), ref, rtol=1e-5, atol=1e-5) and "what-if" in kernel
    out, _ = v.simulator("cann-force-fp16").run(m, (x,), record=False)
    assert out.dtype == torch.float16 and metrics(out.float(), m(x))["cosine"] > 0.99


def test_an_unfolded_batchnorm_counts_fp32_bytes():
    """CANN's BatchNorm takes scale, offset, mean and variance in FP32 only: 16 bytes a channel, not fp16."""
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4)).eval()
    x = torch.randn(16, 4)
    cfg = default_config(m)
    g = read_graph(m, (x[:2],))
    v = build_variant(m, cfg, calibrate(m, x, cfg, g), g)
    assert v.quantized == ["0"]
    assert v.weight_bytes(m) == 16 + 4 + 4 * 4 + 4 * 4 * 4   # int8 codes, scale, int32 bias; BN 4 x 4 FP32
