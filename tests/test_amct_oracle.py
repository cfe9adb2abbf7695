"""AMCT itself as the oracle (issue 30): its classic PTQ flow and opkit's on the zoo, live. Needs a checkout of
hicann/amct and the ``amct`` extra; run with

    pip install -e '.[amct]' && OPKIT_AMCT=/path/to/amct python -m pytest tests/test_amct_oracle.py -q

Without OPKIT_AMCT these tests skip (CI has no AMCT: tests/test_amct_zoo.py checks opkit against AMCT's recorded
results instead)."""
import os

import pytest
import torch

from opkit.errors import OpkitError
from opkit.quant.amct import zoo
from opkit.quant.amct.setup import ENV, checkout_from_env

SRC = checkout_from_env()
pytestmark = pytest.mark.skipif(SRC is None, reason=f"{ENV} is not set (no hicann/amct checkout)")


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    from opkit.quant.amct.setup import prepare
    torch.set_num_threads(1)
    return prepare(SRC, os.environ.get("OPKIT_AMCT_CACHE") or tmp_path_factory.mktemp("amct-cache"))


@pytest.mark.parametrize("name", list(zoo.ZOO))
def test_amct_and_opkit_agree_on_the_zoo(checkout, name):
    from opkit.quant.amct.oracle import run_oracle
    calib, (x, y) = zoo.calib_set(), zoo.test_set()
    r = run_oracle(checkout, name, zoo.load(name), calib, x, y)
    print("\n".join(r.lines()))
    assert r.records_equal, "\n".join(r.lines())
    assert r.agree == r.samples == 1000, "\n".join(r.lines())
    assert all(c.cosine is not None and c.cosine > 0.999999 for c in r.layers), "\n".join(r.lines())


@pytest.mark.parametrize("scenario", ["channel_wise_off", "activation_offset_off", "batch_num_2", "hfmg",
                                      "skip_fusion_layers"])
def test_amct_config_options_agree(checkout, scenario):
    from opkit.quant.amct.oracle import run_oracle
    calib, (x, y) = zoo.calib_set(), zoo.test_set(300)
    r = run_oracle(checkout, "resnet_basic", zoo.load("resnet_basic"), calib, x, y, scenario)
    assert r.records_equal and r.agree == r.samples, "\n".join(r.lines())


def test_configs_amct_rejects_opkit_rejects_with_the_same_message(checkout, tmp_path):
    from opkit.quant.amct.__main__ import amct_message
    from opkit.quant.amct.oracle import amct_rejections
    from opkit.quant.config import parse_config
    model = zoo.load("bn_cnn")
    for name, r in amct_rejections(checkout, model, zoo.calib_set(), tmp_path).items():
        assert r["amct_error"], f"{name}: AMCT accepted it"
        with pytest.raises(OpkitError) as e:
            parse_config(r["config"], model, f"{name}.json")
        assert amct_message(r["amct_error"]) in str(e.value), name


def test_records_amct_rejects_opkit_rejects_with_the_same_message(checkout, tmp_path):
    from opkit.quant.amct.oracle import amct_record_rejections
    from opkit.quant.amct.refs import refuse_record
    model = zoo.load("bn_cnn")
    res = amct_record_rejections(checkout, model, zoo.calib_set(), tmp_path)
    for name, r in res["records"].items():
        assert r["amct_error"], f"{name}: AMCT accepted it"
        same, ours = refuse_record(model, r["text"], r["amct_error"], tmp_path)
        assert same, f"{name}: AMCT {r['amct_error']!r}, opkit {ours!r}"
