"""`opkit.quantize` / `opkit quant` end to end on small deterministic models (tests/quantdata/models.py): a real
INT8 drop and the fix that recovers it (verified by a recalibrated rerun), a BatchNorm-folding overflow found and
fixed, the JSON fields scripts read, the files for AMCT and ATC, and bad input rejected before any work."""
import json
import sys
from pathlib import Path

import pytest
import torch

import opkit
from opkit.errors import OpkitError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quantdata.models import inputs, labelled, mixed_scale, with_dead_channel  # noqa: E402

QUICK = dict(batch_size=64, table_samples=16, greedy_width=3)


@pytest.fixture(scope="module")
def mixed_report():
    m = mixed_scale()
    x, y = labelled(m, 128, seed=1)
    return m, opkit.quantize(m, inputs(32, seed=2), data=(x, y), target_drop=0.5, **QUICK)


def test_int8_drop_and_the_verified_fix(mixed_report):
    m, rep = mixed_report
    assert rep.fp32["top1"] == 100.0
    rows = {r.name: r.as_dict() for r in rep.strategies}
    assert list(rows) == ["fp32", "fp16", "int8-default", "int8-amct-fake-quant", "int8-per-channel",
                          "int8-per-layer", "int8-dmq", "int8-first-last-float", "recommended"]
    # both columns: AMCT's fake-quant answer beside the deployed one, and where they part
    c = rep.columns
    assert c["amct_fake_quant_top1"] == rows["int8-amct-fake-quant"]["top1"]
    assert c["deployed_top1"] == rows["int8-default"]["top1"] and c["deployed"] == "int8-default"
    assert all(p["layer"] and p["cosine"] < 0.99999 for p in c["parting_layers"])
    assert any(n.startswith("both columns: AMCT fake-quant top-1") for n in rep.notes)
    assert rows["int8-default"]["drop"] > 5.0                   # conv1's input scale spans [-4, 400]
    assert rows["fp16"]["drop"] <= 1.0
    # AMCT's sensitivity ranks conv1 first; the recommendation keeps it in float and meets the target
    assert min(rep.sensitivity, key=rep.sensitivity.get) == "conv1"
    r = rep.recommend.as_dict()
    assert r["meets_target"] and r["verified"] and "conv1" in r["float_layers"] and r["drop"] <= 0.5
    assert rows["recommended"]["top1"] == r["top1"]
    assert {s.strategy for s in rep.searches} == {"amct-binary-search", "greedy-top1"}
    # costs: INT8 weights are smaller than fp16, fp16 smaller than FP32; latency is a positive estimate
    assert rows["int8-default"]["weight_bytes"] < rows["fp16"]["weight_bytes"] < rows["fp32"]["weight_bytes"]
    assert all(row.latency["estimate"] and row.latency_s > 0 for row in rep.strategies)
    # the per-layer table: conv1 quantized per channel, its clip range covers the raw plane
    by = {row["name"]: row for row in rep.layers}
    assert by["conv1"]["quantized"] and by["conv1"]["granularity"] == "channel" and by["conv1"]["clip_max"] > 300
    assert by["conv1"]["sensitivity_rank"] == 1 and by["fc"]["granularity"] == "layer"


def test_json_fields_and_the_files_for_amct_and_atc(mixed_report, tmp_path):
    m, rep = mixed_report
    d = json.loads(rep.write_json(tmp_path / "r.json").read_text())
    assert d["fp32"]["top1"] == 100.0
    for s in d["strategies"]:
        assert {"name", "top1", "drop", "float_layers"} <= set(s)
    assert {"float_layers", "channel_wise", "top1", "drop", "meets_target", "verified"} <= set(d["recommend"])
    for row in d["layers"]:
        assert {"name", "op_type", "cosine", "sensitivity_rank"} <= set(row)
    for f in d["fusion"]:
        assert {"pass", "layers", "cosine_fused", "cosine_unfused"} <= set(f)
    # the recommended AMCT config is AMCT's format, conv1 disabled, and reads back
    cfg = json.loads(rep.write_amct_config(tmp_path / "quant.json").read_text())
    assert cfg["version"] == 1 and cfg["conv1"]["quant_enable"] is False and cfg["conv2"]["quant_enable"] is True
    v = opkit.quant.QuantVariant.from_amct(m, tmp_path / "quant.json", rep.write_record(tmp_path / "record.txt"),
                                           inputs(2, 5))
    assert v.quantized == rep.variants["recommended"].quantized
    html = rep.write_html(tmp_path / "r.html").read_text()
    assert "<svg" in html and "dequantized INT8" in html and "clip" in html


def test_bn_folding_overflow_found_and_fixed(tmp_path):
    """Under CPU-independent arithmetic (opkit.quant.amct.portable): which of the 96 samples a fp16 fix keeps is a
    matter of the last bits (oneDNN's AVX2 kernels lost one that its AVX-512 ones kept)."""
    from opkit.quant import default_config
    from opkit.quant.amct.portable import Float64Arithmetic
    with Float64Arithmetic():
        m = with_dead_channel()
        x, y = labelled(m, 96, seed=1)
        cfg = default_config(m).with_float(["conv1"])     # conv1 float: its fold goes non-finite in fp16
        rep = opkit.quantize(m, inputs(32, seed=2), data=(x, y), config=cfg, target_drop=0.5, search=False,
                             **QUICK)
    # the recommended deployment overflows too: its config-level fix is applied and the figures stay FP32's
    r = rep.recommend
    assert r.overflow_fix == "skip_fusion_layers [conv1] and ConvBatchnormFusionPass off"
    assert r.atc_fusions_off == ["ConvBatchnormFusionPass"] and r.skip_fusion_layers == ["conv1"]
    assert rep.fp32["top1"] == 100.0 and r.drop == pytest.approx(100.0 - r.top1) and r.top1 > 90.0
    rows = {s.name: s for s in rep.strategies}
    assert rows["fp32"].top1 == 100.0 and rows["recommended"].top1 == r.top1
    fp16 = next(o.as_dict() for o in rep.overflow if o.variant == "fp16")
    assert fp16["layer"] in ("conv1", "bn1") and "folded BatchNorm bn1" in fp16["cause"]
    assert "running_var 0" in fp16["cause"] and "exceed fp16" in fp16["cause"]
    fixes = {f["fix"]: f for f in fp16["fixes"]}
    assert fp16["fix"] == "ConvBatchnormFusionPass off" and fixes["ConvBatchnormFusionPass off"]["top1"] == 100.0
    assert fixes["conv1 + bn1 kept in FP32"]["nonfinite"] == 0 and fixes["conv1 + bn1 kept in FP32"]["top1"] > 95
    # a larger eps keeps the fold finite but the folded bias still cancels the sum in fp16: rerun and scored
    eps = fixes["bn1.eps = 1e-3"]
    assert eps["nonfinite"] == 0 and eps["top1"] is not None
    conv_bn = next(f for f in rep.fusion if f.name == "ConvBatchnormFusionPass")
    assert conv_bn.hurts and conv_bn.nonfinite_fused > 0 and conv_bn.nonfinite_unfused == 0
    p = rep.write_fusion_switch(tmp_path / "fusion_switch.cfg")
    assert "ConvBatchnormFusionPass:off" in p.read_text().split()


def test_bad_input_is_refused_before_any_work(tmp_path):
    m = mixed_scale()
    x, y = labelled(m, 16, seed=1)
    with pytest.raises(OpkitError, match="--data .*required"):
        opkit.quantize(m, x)
    with pytest.raises(OpkitError, match="do not fit the model"):
        opkit.quantize(m, torch.randn(8, 3, 10, 10), data=(x, y))
    with pytest.raises(OpkitError, match="empty"):
        opkit.quantize(m, x, data=(x[:0], y[:0]))
    torch.save({"x": x}, tmp_path / "nolabels.pt")
    with pytest.raises(OpkitError, match="no 'y'"):
        opkit.quantize(m, x, data=tmp_path / "nolabels.pt")
    with pytest.raises(OpkitError, match="out of range"):
        opkit.quantize(m, x, data=(x, y + 10))
    cfg = {"conv_1": {"quant_enable": True}}
    with pytest.raises(OpkitError, match="closest: conv1"):
        opkit.quantize(m, x, data=(x, y), config=cfg)
    cfg = {"fc": {"quant_enable": True, "weight_quant_params": {"channel_wise": True}}}
    with pytest.raises(OpkitError, match="The channel_wise must be False for layer type Linear in layer fc"):
        opkit.quantize(m, x, data=(x, y), config=cfg)
    # nothing the user passed is modified
    before = {k: v.clone() for k, v in m.state_dict().items()}
    opkit.quantize(m, x[:8], data=(x, y), search=False, **QUICK)
    assert all(torch.equal(before[k], v) for k, v in m.state_dict().items())


def test_cli_writes_the_report_and_the_tool_files(tmp_path):
    from click.testing import CliRunner

    from opkit.cli import cli
    m = mixed_scale()
    x, y = labelled(m, 64, seed=1)
    torch.save({"x": inputs(32, seed=2)}, tmp_path / "calib.pt")
    torch.save({"x": x, "y": y}, tmp_path / "val.pt")
    spec = f"{Path(__file__).resolve().parent / 'quantdata' / 'models.py'}:mixed_scale"
    res = CliRunner().invoke(cli, ["quant", spec, "--calib", str(tmp_path / "calib.pt"), "--data",
                                   str(tmp_path / "val.pt"), "--json", str(tmp_path / "r.json"),
                                   "--amct-config-out", str(tmp_path / "quant.json"),
                                   "--fusion-switch-out", str(tmp_path / "fs.cfg"), "--batch-size", "64"])
    assert res.exit_code == 0, res.output
    assert "int8-default" in res.output and "recommend" in res.output
    assert json.loads((tmp_path / "r.json").read_text())["recommend"]["verified"] is True
    assert (tmp_path / "quant.json").is_file() and (tmp_path / "fs.cfg").is_file()
    res = CliRunner().invoke(cli, ["quant", spec, "--calib", str(tmp_path / "calib.pt"), "--data",
                                   str(tmp_path / "val.pt"), "--json", str(tmp_path / "val.pt")])
    assert res.exit_code != 0 and "would overwrite --data" in res.output


def test_nothing_meets_the_target_is_said_plainly():
    # the dead channel costs fp16 itself 2 points: no set of float layers reaches a 0.5-point drop
    m = with_dead_channel()
    x, y = labelled(m, 96, seed=1)
    rep = opkit.quantize(m, inputs(32, seed=2), data=(x, y), target_drop=0.5, **QUICK)
    assert not rep.recommend.verified and "verified by a recalibrated rerun: no" in str(rep)
    assert not next(r for r in rep.searches if r.strategy == "amct-binary-search").met
    # with DMQ as a greedy action (issue 37) a search step may reach the target on the search's shared
    # calibration; the recalibrated rerun of the written config does not hold it, and the report says which
    assert ("NOTHING MEETS THE TARGET of 0.5 points" in str(rep)) != rep.recommend.meets_target


def test_fusion_result_decides_what_is_simulated(tmp_path):
    from opkit.quant.fusion import FusionRow, read_fusion_result, took_effect, write_fusion_switch
    fr = {"session_and_graph_id_0_0": {"graph_fusion": {"ConvBatchnormFusionPass": {"effect_times": "0",
                                                                                    "match_times": "1"},
                                                        "AABiasaddConvFusion": {"effect_times": "2", "match_times": "2"}},
                                       "ub_fusion": {"TbeConvDequantQuantFusionPass": {"effect_times": "1",
                                                                                       "match_times": "1"}}}}
    (tmp_path / "fusion_result.json").write_text(json.dumps(fr))
    got = read_fusion_result(tmp_path / "fusion_result.json")        # counts are strings in ATC's file
    assert got["AABiasaddConvFusion"] == {"effect_times": 2, "match_times": 2, "kind": "graph_fusion"}
    assert took_effect(got, ("ConvBatchnormFusionPass",)) is False and took_effect(None, ("X",)) is None
    assert took_effect(got, ("RequantFusionPass", "TbeConvDequantQuantFusionPass")) is True
    # ConvBatchnormFusionPass matched but did not take effect: the fp16 deployment keeps conv1 and bn1 apart,
    # so the dead channel's fold never overflows
    m = with_dead_channel()
    x, y = labelled(m, 64, seed=1)
    rep = opkit.quantize(m, inputs(32, seed=2), data=(x, y), search=False,
                         fusion_result=tmp_path / "fusion_result.json", **QUICK)
    assert rep.deploy["conv_bn"] is False and not any(o.variant == "fp16" for o in rep.overflow)
    assert not any(f.name == "ConvBatchnormFusionPass" for f in rep.fusion)
    p, notes = write_fusion_switch([FusionRow("RequantFusionPass", ["a"], True, hurts=True),
                                    FusionRow("Conv+bias in L0C", ["a"], False, hurts=True)],
                                   tmp_path / "fs.cfg", depthwise=True)
    assert p.read_text() == "" and len(notes) == 2                  # depthwise convs keep requant; bias can't go
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(OpkitError, match="session_and_graph_id"):
        read_fusion_result(tmp_path / "bad.json")


def test_a_text_model_quantizes_from_token_ids():
    """Embedding + Linear: the calibration inputs are integer token ids (they were refused as 'must be
    floating point'); the Linear layers quantize, the Embedding runs under the policy."""
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Embedding(50, 16), torch.nn.Flatten(), torch.nn.Linear(16 * 6, 5)).eval()
    t = torch.randint(0, 50, (64, 6))
    with torch.no_grad():
        y = m(t).argmax(1)
    rep = opkit.quantize(m, t[:32], data=(t, y), search=False, **QUICK)
    assert rep.fp32["top1"] == 100.0 and rep.variants["int8-default"].quantized == ["2"]
    assert {r["name"]: r["op_type"] for r in rep.layers}["0"] == "embedding"
    with pytest.raises(OpkitError, match="integer ids; got torch.bool"):
        opkit.quantize(m, t[:32] > 0, data=(t, y))
