"""AMCT's per-layer algorithms inside `opkit quant` (issue 37 item 2; python/opkit/quant/layer_algorithms.py):
DMQ read from the AMCT config (dmq_balancer_param), calibrated and deployed as AMCT runs it, a strategy row,
a search action, written back to the AMCT config and record and verified by a rerun from those files.

AMCT's recorded DMQ results (tests/quantdata/amct_dmq/, a float32 model) are compared as test_dmq.py does:
offsets exactly, factors and scales to 1e-6 relative -- the factor's float32 pow differs by one ulp between CPUs
(issue 36); the config path is required to equal opkit.quant.dmq's model-transform path on any CPU (bit for bit
but for the activation scale, see test_config_dmq_equals_balancing_the_model_first).
"""
import os
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
    """The config path (dmq_balancer_param) against AMCT's record, made under the portable arithmetic: every
    factor, scale and offset equal bit for bit."""
    m, x = amct_dmq.net(), amct_dmq.calib()
    with amct_dmq.arithmetic(portable=True):
        recs = calibrate(m, x, dmq_config(m, amct_dmq.STRENGTH), read_graph(m, (x[:2],)))
        fm = amct_dmq.folded(m)
        factors = balance_factors(fm, x, amct_dmq.STRENGTH)
    ref = dict(np.load(amct_dmq.REFS / "dmq_net.npz"))
    for n in amct_dmq.LAYERS:
        r = recs[n]
        got = np.array(r.balance_factor, np.float32)
        assert np.array_equal(got, factors[n].numpy()), n           # same arithmetic as opkit.quant.dmq
        assert np.array_equal(got, ref[f"{n}:factor"]), n
        assert r.offset_d == int(ref[f"{n}:offset_d"][0]), n
        assert np.float32(r.scale_d) == ref[f"{n}:scale_d"][0], n
        assert np.array_equal(np.array(r.scale_w, np.float32), ref[f"{n}:scale_w"]), n
    # without DMQ the records differ: the test can fail
    plain = calibrate(m, x, default_config(m), read_graph(m, (x[:2],)))
    assert plain["conv1"].balance_factor is None and plain["conv1"].scale_w != recs["conv1"].scale_w


@pytest.mark.skipif(not os.environ.get("OPKIT_AMCT"), reason="OPKIT_AMCT (a prepared AMCT checkout) not set")
def test_config_dmq_live_amct():
    """AMCT itself on this machine, both sides on the CPU's own kernels: every record field bit for bit."""
    why = amct_dmq.classic_missing(os.environ["OPKIT_AMCT"])
    if why:
        pytest.skip(why)
    ref = amct_dmq.run_amct(os.environ["OPKIT_AMCT"])
    m, x = amct_dmq.net(), amct_dmq.calib()
    recs = calibrate(m, x, dmq_config(m, amct_dmq.STRENGTH), read_graph(m, (x[:2],)))
    for n in amct_dmq.LAYERS:
        assert np.array_equal(np.array(recs[n].balance_factor, np.float32), ref[f"{n}:factor"]), n
        assert np.array_equal(np.array(recs[n].scale_w, np.float32), ref[f"{n}:scale_w"]), n
        assert recs[n].offset_d == int(ref[f"{n}:offset_d"][0]), n
        assert np.float32(recs[n].scale_d) == ref[f"{n}:scale_d"][0], n


def test_config_dmq_equals_balancing_the_model_first():
    """The config path (factors in the record, W * f and the 1 / f Mul inside the layer) computes what the
    documented manual path (apply_balance on the folded model, then plain quantization) computes: the same
    weight scales and activation offsets bit for bit; the activation scale to 1e-6 relative. The layer inputs
    reach each layer through two float32 paths that round differently (x / f then W * f, against the balanced
    model's own weights): measured, pw's and fc's scale_d one float32 ulp apart at OMP_NUM_THREADS=1 and under
    Float64Arithmetic, equal by coincidence at 2 threads; a missing or wrong factor moves scale_w and scale_d
    by far more."""
    m, x = amct_dmq.net(), amct_dmq.calib()
    recs = calibrate(m, x, dmq_config(m, amct_dmq.STRENGTH), read_graph(m, (x[:2],)))
    fm = amct_dmq.folded(m)
    bal = apply_balance(fm, balance_factors(fm, x, amct_dmq.STRENGTH))
    manual = calibrate(bal, x, default_config(bal), read_graph(bal, (x[:2],)))
    for n in amct_dmq.LAYERS:
        assert recs[n].scale_w == manual[n].scale_w, n
        assert recs[n].offset_d == manual[n].offset_d, n
        assert recs[n].scale_d == pytest.approx(manual[n].scale_d, rel=1e-6, abs=0), n
    plain = calibrate(m, x, default_config(m), read_graph(m, (x[:2],)))     # without DMQ: the check can fail
    assert any(plain[n].scale_d != pytest.approx(manual[n].scale_d, rel=1e-6, abs=0) or
               plain[n].scale_w != manual[n].scale_w for n in amct_dmq.LAYERS)


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
    with pytest.raises(OpkitError, match=r"'conv1'.tensor_balance_factor: tensor_balance_factor's value shoule be in "
                                         r"range\[FLT_EPSILON, 1/FLT_EPSILON\] of float32 in layer conv1"):
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
    assert rows["int8-dmq"].latency_s > rows["int8-default"].latency_s          # its Mul by 1 / f is one more op
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
    """AvgPool2d and ConvTranspose2d (plain and grouped) are INT8 now; a sequence-first LSTM (AMCT's config lists
    it) is named, never silently float."""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.pool = nn.Conv2d(3, 4, 3), nn.AvgPool2d(2)
            self.up = nn.ConvTranspose2d(4, 4, 2, stride=2)
            self.up2 = nn.ConvTranspose2d(4, 4, 1, groups=2)
            self.rnn = nn.LSTM(4, 4)             # sequence first
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            f = self.up2(self.up(self.pool(torch.relu(self.conv(x))))).mean(3).permute(2, 0, 1)
            return self.fc(self.rnn(f)[0][-1])
    torch.manual_seed(0)
    m = Net().eval()
    x = torch.randn(40, 3, 10, 10)
    with torch.no_grad():
        y = m(x).argmax(-1)
    rep = opkit.quantize(m, x[:16], (x, y), policy="amct-fake-quant", target_drop=100.0, search=False)
    assert rep.amct_only == {"rnn": "AMCT's config lists this LSTM, but its calibration joins the hidden inputs "
                                    "batch-first (cali_quant.py:113-115), which a sequence-first RNN does not fit; "
                                    "opkit simulates batch_first=True only"}
    assert any(n.startswith("NOT AMCT'S ANSWER at rnn") for n in rep.notes)
    assert rep.to_dict()["amct_only_layers"] == rep.amct_only
    assert rep.variants[rep.base].quantized == ["conv", "pool", "up", "up2", "fc"]


def test_deploy_dtype_runs_amcts_current_api_linear_flows_as_rows_and_a_verified_plan(tmp_path):
    """The float32 model deployed in float16: AMCT's current API would skip nothing now; min-max W8A8 loses the
    class features to fc1's outlier input, SmoothQuant keeps them; the plan is written as AMCT configs and
    rebuilt from them."""
    import json

    from opkit.quant.linear_flow import LinearFlow
    from opkit.quant.linear_ptq import LinearPTQConfig
    m = outlier_model()
    x = outlier_data(400, 1)
    with torch.no_grad():
        y = m(x).argmax(-1)
    rep = opkit.quantize(m, outlier_data(64, 2), (x, y), policy="amct-fake-quant", target_drop=3.0,
                         deploy_dtype="float16")
    rows = {r.name: r for r in rep.strategies}
    assert {"float16-current-api", "linear-minmax-w8a8", "linear-smoothquant-w8a8", "linear-minmax-w8a16",
            "linear-gptq-w8a16", "linear-awq-w8a16"} <= set(rows)
    # (figures through float16 matmuls: compared with margins, issue 36)
    assert rows["linear-minmax-w8a8"].drop > 8 and rows["linear-smoothquant-w8a8"].drop <= 2.5
    assert rows["linear-minmax-w8a8"].weight_bytes < rows["float16-current-api"].weight_bytes
    d = json.loads(rep.write_json(tmp_path / "r.json").read_text(), parse_constant=lambda c: 1 / 0)  # no NaN
    assert next(r for r in d["strategies"] if r["name"] == "linear-awq-w8a16")["latency_s"] is None
    assert d["linear"]["verified"] is True
    lp = rep.linear
    assert lp["dtype"] == "float16" and lp["ok"] and lp["verified"]
    assert lp["algorithms"]["fc1"] == "smoothquant-w8a8"          # the cheapest candidate that meets the target
    assert lp["describe"] == "smoothquant-w8a8 on fc1; minmax-w8a8 elsewhere"
    assert "recommend (AMCT current API, model in float16): smoothquant-w8a8 on fc1; minmax-w8a8 elsewhere" in str(rep)
    p = rep.write_linear_configs(tmp_path / "linear.json")
    configs = json.loads(p.read_text())
    assert configs == lp["configs"] and len(configs) == 2
    by_algo = {next(iter(c["algorithm"])): c for c in configs}
    assert by_algo["smoothquant"]["skip_layers"] == ["fc2"] and by_algo["minmax"]["skip_layers"] == ["fc1"]
    assert LinearPTQConfig.from_amct(by_algo["smoothquant"]) == LinearPTQConfig("smoothquant", 8, act_bits=8,
                                                                                skip_layers=("fc2",))
    # the rebuild from the files is what was scored: its top-1 is the verified figure
    lf = LinearFlow(m, torch.float16, outlier_data(64, 2), scorer=None)
    rebuilt = lf.rebuild(configs)
    with torch.no_grad():
        top1 = 100.0 * float((rebuilt(x.half()).float().argmax(-1) == y).float().mean())
    assert top1 == pytest.approx(lp["verified_top1"], abs=0.5)     # batch sizes differ: 2 samples of fp16 slack


def test_deploy_dtype_bad_value_and_no_rows_without_it():
    m = outlier_model()
    x = outlier_data(40, 1)
    with torch.no_grad():
        y = m(x).argmax(-1)
    with pytest.raises(OpkitError, match=r"--deploy-dtype: 'float32' is not one of float16, bfloat16"):
        opkit.quantize(m, x[:8], (x, y), deploy_dtype="float32")
    rep = opkit.quantize(m, x[:8], (x, y), policy="amct-fake-quant", target_drop=100.0, search=False)
    assert rep.linear == {} and not any(r.name.startswith("linear-") for r in rep.strategies)


def test_cli_deploy_dtype_and_linear_config_out(tmp_path):
    import inspect
    import json

    from click.testing import CliRunner

    from opkit.cli import cli
    src = "import torch\nimport torch.nn as nn\n\n\n" + inspect.getsource(Outlier) + "\n\n" + \
        inspect.getsource(outlier_model)
    (tmp_path / "m.py").write_text(src)
    m = outlier_model()
    x = outlier_data(200, 1)
    with torch.no_grad():
        y = m(x).argmax(-1)
    torch.save({"x": x, "y": y}, tmp_path / "val.pt")
    torch.save({"x": outlier_data(64, 2)}, tmp_path / "calib.pt")
    args = ["quant", f"{tmp_path / 'm.py'}:outlier_model", "--calib", str(tmp_path / "calib.pt"), "--data",
            str(tmp_path / "val.pt"), "--policy", "amct-fake-quant", "--target-drop", "3", "--workers", "1"]
    res = CliRunner().invoke(cli, args + ["--linear-config-out", str(tmp_path / "l.json")])
    assert res.exit_code != 0 and "--linear-config-out needs --deploy-dtype" in res.output
    res = CliRunner().invoke(cli, args + ["--deploy-dtype", "float16", "--linear-config-out", str(tmp_path / "l.json"),
                                          "--amct-config-out", str(tmp_path / "q.json")])
    assert res.exit_code == 0, res.output
    assert "linear-smoothquant-w8a8" in res.output and "amct current-API configs:" in res.output
    assert {next(iter(c["algorithm"])) for c in json.loads((tmp_path / "l.json").read_text())} == \
        {"smoothquant", "minmax"}
    assert json.loads((tmp_path / "q.json").read_text())["fc1"]["dmq_balancer_param"] == 0.5


def test_every_zoo_model_has_a_zero_argument_factory(tmp_path):
    from opkit.quant.amct import zoo
    from opkit.toolchain.user_code import load_model
    for name in zoo.ZOO:
        m = load_model(f"opkit.quant.amct.zoo:{name}")[0]
        ref = zoo.load(name)
        assert type(m) is type(ref)
        assert all(torch.equal(a, b) for a, b in zip(m.state_dict().values(), ref.state_dict().values()))
    c, t = zoo.write_data(tmp_path, calib=8, test=10)
    assert torch.load(c)["x"].shape == (8, 3, 16, 16) and set(torch.load(t)) == {"x", "y"}


# -- ADA (wts_algo: ada_quantize) through opkit quant's config ----------------------------------------------------

def _ada_records(dmq: bool, monkeypatch, portable: bool = False):
    """``portable``: calibrated under the portable arithmetic the recorded AMCT side ran under (amct_ada.TRAINING)."""
    import contextlib

    from quantdata import amct_ada, amct_ada_quant

    from opkit.quant.amct.portable import Float64Arithmetic

    from opkit.quant import layer_algorithms as LA
    monkeypatch.setattr(LA.ADA, "seed", amct_ada.SEED)               # AMCT's run seeded torch with SEED
    m, x = amct_dmq.net(), amct_dmq.calib(amct_ada.SAMPLES)
    cfg = parse_config(amct_ada_quant.config(default_config(m).to_json(), dmq), m)
    g = read_graph(m, (x[:2],))
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with Float64Arithmetic(only=amct_ada.TRAINING) if portable else contextlib.nullcontext():
            recs = calibrate(m, x, cfg, g)
    finally:
        torch.set_num_threads(n)
    from opkit.quant.variant import build_variant
    v = build_variant(m, cfg, recs, g, atc_conv_bn=False, requant=False)
    return recs, v


def _ada_compare(ref, recs, v):
    for n in amct_dmq.LAYERS:
        r, codes = recs[n], v.layers[n].codes.numpy().astype(np.float32)
        assert r.offset_d == int(ref[f"{n}:offset_d"][0]), n
        assert np.float32(r.scale_d) == ref[f"{n}:scale_d"][0], n
        assert np.array_equal(np.array(r.scale_w, np.float32), ref[f"{n}:scale_w"]), n
        assert np.array_equal(codes, ref[f"{n}:codes"]), n


@pytest.mark.parametrize("dmq", [False, True], ids=["ada", "dmq+ada"])
def test_config_ada_equals_recorded_amct(dmq, monkeypatch):
    """AMCT's record after the calibration forward and the integer weights of its fake-quant ONNX model
    (tests/quantdata/amct_ada_quant.py): the activations are calibrated through ADA's learned weights, the
    deployed codes are round(W_soft / scale_w). Recorded under the portable arithmetic, compared under it: bit for
    bit on any CPU (scales, offsets and every code)."""
    from quantdata import amct_ada
    recs, v = _ada_records(dmq, monkeypatch, portable=True)
    _ada_compare(dict(np.load(amct_ada.REFS / ("ada_dmq_quant.npz" if dmq else "ada_quant.npz"))), recs, v)
    assert all(recs[n].ada_weight is not None for n in amct_dmq.LAYERS)
    assert (recs["conv1"].balance_factor is not None) == dmq


@pytest.mark.skipif(not os.environ.get("OPKIT_AMCT"), reason="OPKIT_AMCT (a prepared AMCT checkout) not set")
def test_config_ada_live_amct_bit_exact(monkeypatch):
    from quantdata import amct_ada_quant
    if amct_dmq.classic_missing(os.environ["OPKIT_AMCT"]):
        pytest.skip(amct_dmq.classic_missing(os.environ["OPKIT_AMCT"]))
    for dmq in (False, True):
        recs, v = _ada_records(dmq, monkeypatch)
        _ada_compare(amct_ada_quant.run_amct(os.environ["OPKIT_AMCT"], dmq), recs, v)


@pytest.mark.parametrize("field,value,msg", [
    ("wts_algo", "adaround", r"wts_algo: wts_algo must be arq_quantize or ada_quantize"),
    ("beta_range", [2.0, 20.0], r"beta_range: beta_range beta_range_start must large than beta_range_end"),
    ("beta_range", [20.0, 0.0], r"beta_range: beta_range beta_range_end must large than 0"),
    ("beta_range", [20.0], r"beta_range: The beta_range must have two floating-point number"),
    ("beta_range", 20.0, r"beta_range: Type of beta_range should be <class 'list'>"),
    ("warm_start", 1.0, r"warm_start: warm_start must be less than 1 and larger than 0"),
    ("reg_param", 0.0, r"reg_param: reg_param must be less than 1 and larger than 0"),
    ("num_iteration", -1, r"num_iteration: num_iteration must be larger or equal to 0"),
    ("num_bits", 4, r"num_bits: opkit models ada_quantize with 8-bit weights"),
])
def test_bad_ada_params_refused_with_amcts_message(field, value, msg):
    m = amct_dmq.net()
    d = default_config(m).to_json()
    d["conv1"]["weight_quant_params"] = {"wts_algo": "ada_quantize", field: value}
    with pytest.raises(OpkitError, match=r"conv1\.weight_quant_params\." + msg):
        parse_config(d, m)


def test_ada_params_with_arq_refused_and_ada_round_trips():
    m = amct_dmq.net()
    d = default_config(m).to_json()
    d["conv1"]["weight_quant_params"]["num_iteration"] = 10
    with pytest.raises(OpkitError, match=r"num_iteration is not valid param of quantize arq_quantize"):
        parse_config(d, m)
    d = default_config(m).to_json()
    d["fc"]["weight_quant_params"] = {"wts_algo": "ada_quantize", "num_iteration": 5}
    cfg = parse_config(d, m)
    assert cfg.to_json()["fc"]["weight_quant_params"] == {"num_bits": 8, "wts_algo": "ada_quantize",
                                                          "channel_wise": False, "num_iteration": 5,
                                                          "reg_param": 0.01, "beta_range": [20.0, 2.0],
                                                          "warm_start": 0.2}
    assert parse_config(cfg.to_json(), m).to_json() == cfg.to_json()


def test_ada_record_file_alone_cannot_rebuild_the_variant(tmp_path, monkeypatch):
    """AMCT keeps ADA's learned weights in the model quantize_model exports, not in the record: opkit says so
    instead of rounding the float weights with ADA's scale."""
    recs, v = _ada_records(False, monkeypatch)
    write_record(recs, tmp_path / "r.txt")
    v.config.write(tmp_path / "q.json")
    with pytest.raises(OpkitError, match=r"the record has no learned weights"):
        QuantVariant.from_amct(amct_dmq.net(), tmp_path / "q.json", tmp_path / "r.txt", amct_dmq.calib(2))


def test_ada_is_a_row_when_asked_and_a_config_with_ada_runs_through_opkit_quant(monkeypatch):
    from opkit.quant import config as C
    monkeypatch.setitem(C.ADA_DEFAULTS, "num_iteration", 20)        # AMCT's 10,000 steps: too slow for a test
    m = outlier_model()
    x = outlier_data(200, 1)
    with torch.no_grad():
        y = m(x).argmax(-1)
    rep = opkit.quantize(m, outlier_data(64, 2), (x, y), policy="amct-fake-quant", target_drop=100.0, search=False,
                         algorithms=("dmq", "ada"))
    names = [r.name for r in rep.strategies]
    assert "int8-dmq" in names and "int8-ada" in names
    plain = opkit.quantize(m, outlier_data(64, 2), (x, y), policy="amct-fake-quant", target_drop=100.0, search=False)
    assert "int8-ada" not in [r.name for r in plain.strategies]          # not by default (its cost)
    with pytest.raises(OpkitError, match=r"--algorithms: adaround"):
        opkit.quantize(m, x[:8], (x, y), algorithms=("adaround",))
    d = default_config(m).to_json()
    d["fc1"]["weight_quant_params"] = {"wts_algo": "ada_quantize", "num_iteration": 20}
    rep = opkit.quantize(m, outlier_data(64, 2), (x, y), config=d, policy="amct-fake-quant", target_drop=100.0,
                         search=False)
    assert rep.base == "int8-config" and rep.base_records["fc1"].ada_weight is not None
    assert rep.base_records["fc1"].scale_w == rep.base_records["fc1"].ada_scale     # ADA's KL scale, not ARQ's
