"""`opkit experiment`: the points each change recovers on a model whose loss is known by construction."""
from __future__ import annotations

import json

import pytest
import torch

from evaldata.models import overflow_set
from opkit.cli import main
from opkit.errors import OpkitError
from opkit.experiment import experiment
from opkit.experiment.shapes import bucket_for, choose_buckets, read_sizes


@pytest.fixture
def data(tmp_path):
    x, y = overflow_set(n=40, overflow=8)
    p = tmp_path / "val.pt"
    torch.save({"x": x, "y": y}, p)
    return p


def test_precision_loss_attributed_and_recovered(data, tmp_path, capsys):
    (tmp_path / "sizes.txt").write_text("8x8\n6x8\n8x6\n4x4\n")
    scan = tmp_path / "scan.json"             # pretend the per-channel mean falls back to the CPU
    scan.write_text(json.dumps({"ops": [{"op": "aten::mean.dim", "status": "fallback", "via": [],
                                         "modules": [""]}], "modules": {}}))
    main_args = ["experiment", "evaldata.models:overflow_net", "--data", str(data), "--input", "1x3x8x8",
                 "--scan", str(scan), "--sizes", str(tmp_path / "sizes.txt"), "--target-drop", "0",
                 "--fps", "1000", "--workers", "1", "--json", "-"]
    try:
        main(main_args)
    except SystemExit as e:
        assert not e.code
    r = json.loads(capsys.readouterr().out)
    top = {v["name"]: v["top1"] for v in r["variants"]}
    assert top["fp32 (blanket FP32 on the device)"] == 100.0
    assert top["deployed"] == pytest.approx(80.0) and top["replaced"] == pytest.approx(80.0)   # 8 of 40 overflow
    assert top["fp32-types"] == 100.0
    assert r["points"]["precision"] == pytest.approx(20.0) and r["points"]["fallback"] == pytest.approx(0.0)
    assert r["cause"] == "precision"
    rec = r["recommend"]
    assert rec["variant"] == "fp32-types" and rec["meets_target"] and "mul" in rec["fp32_op_types"]
    assert rec["replace_ops"] == [{"op": "aten::mean.dim", "command": "opkit new MeanFP32 --from-aten aten::mean.dim"}]
    assert [v["mode"] for v in r["shapes"]["variants"]] == ["static", "bucketed", "padded"]
    assert r["shapes"]["buckets"] == [[32, 32]]
    for v in r["variants"]:
        assert v["throughput"]["estimate"] is True and v["throughput"]["fps"] > 0
    deployed = next(v for v in r["variants"] if v["name"] == "deployed")["throughput"]
    replaced = next(v for v in r["variants"] if v["name"] == "replaced")["throughput"]
    assert deployed["fallback_ms"] > 0 and replaced["fallback_ms"] == 0 and deployed["fps"] < replaced["fps"]
    assert r["blanket_fp32"]["throughput"]["fps"] <= replaced["fps"]
    assert r["cannot_show"] and "ESTIMATE" not in json.dumps(r["variants"])


def test_no_loss_means_cause_none(data):
    x, y = overflow_set(n=24, overflow=0)
    r = experiment("evaldata.models:overflow_net", _set(x, y), "1x3x8x8", workers=1)
    assert r.cause == "none" and r.loss == 0.0 and r.recommend.variant == "deployed"
    assert "no --scan" in " ".join(r.notes)


def _set(x, y):
    from opkit.data import TensorSet
    return TensorSet(x, y)


def test_buckets_from_observed_sizes(tmp_path):
    sizes = [(480, 640), (720, 1280), (480, 640), (1080, 1920), (600, 800), (720, 1280)]
    b = choose_buckets(sizes, 3)
    assert b == [(480, 640), (736, 1280), (1088, 1920)]
    assert bucket_for((600, 800), b) == (736, 1280) and bucket_for((2000, 2000), b) == (1088, 1920)
    (tmp_path / "s.txt").write_text("480x640\n# comment\n720 1280\n")
    assert read_sizes(tmp_path / "s.txt") == [(480, 640), (720, 1280)]
    (tmp_path / "bad.txt").write_text("480x640\nlarge\n")
    with pytest.raises(OpkitError, match=r"bad.txt:2: expected HxW"):
        read_sizes(tmp_path / "bad.txt")
    with pytest.raises(OpkitError, match="expected NxCxHxW"):
        experiment("evaldata.models:overflow_net", _set(*overflow_set(4, 0)), "3x8x8", workers=1)
