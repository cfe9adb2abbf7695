"""opkit against AMCT's recorded results on the zoo (opkit/quant/amct/zoo/<model>.amct.json, recorded by
``python -m opkit.quant.amct --record`` from hicann/amct; the commit is in each file). No AMCT needed: for every
model and config scenario, opkit's own calibration must give AMCT's record to the bit, and opkit's simulation
under ``amct-fake-quant`` must give the top-1 class AMCT's fake-quant ONNX model gave, sample for sample.
Both calibrations run under Float64Arithmetic (opkit/quant/amct/portable.py): with the CPU's own float32
convolutions, oneDNN's AVX2 kernels moved records made with its AVX-512 ones by one float32 ulp."""
import pytest
import torch

from opkit.accuracy.policy import load_policy
from opkit.quant.amct import zoo
from opkit.quant.amct.oracle import compare_records, opkit_variant, predictions
from opkit.quant.amct.refs import read_ref
from opkit.quant.config import parse_config

SAMPLES = {"default": 1000}          # the other scenarios: the first 300 test samples (CI time)


@pytest.fixture(autouse=True)
def one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)          # tiny models on a shared 2-core runner: threads only contend
    yield
    torch.set_num_threads(n)


@pytest.mark.parametrize("name", list(zoo.ZOO))
def test_opkit_gives_amcts_records_and_predictions(name):
    ref = read_ref(name)
    assert len(ref.amct_commit) == 40 and len(ref.scenarios) >= 1
    assert ref.arithmetic == "float64", f"{name}: recorded with one CPU's own kernels; record it again (--record)"
    model = zoo.load(name)
    calib = zoo.dataset(ref.calib["n"], ref.calib["seed"])[0]
    x = zoo.dataset(ref.test["n"], ref.test["seed"])[0]
    problems = []
    for scen, sc in ref.scenarios.items():
        cfg = parse_config(sc.config, model, f"{name}.amct.json [{scen}]")
        v, recs = opkit_variant(model, calib, cfg, portable=ref.arithmetic == "float64")
        assert sorted(recs) == sorted(sc.records), scen
        for layer, (sd, od, sw, rel) in compare_records(sc.records, recs).items():
            if not (sd and od and sw):
                problems.append(f"{scen}: {layer} record differs (scale_d {sd}, offset_d {od}, scale_w {sw}, "
                                f"max rel {rel:.2e}; AMCT {sc.records[layer].scale_d!r}, opkit {recs[layer].scale_d!r})")
        n = SAMPLES.get(scen, 300)
        ours = predictions(v, model, x[:n])
        diff = [i for i in range(n) if ours[i] != sc.predictions[i]]
        if diff:
            problems.append(f"{scen}: {len(diff)}/{n} predictions differ from AMCT's fake-quant model "
                            f"(samples {diff[:10]})")
    assert not problems, "\n".join(problems)


def test_a_one_ulp_calibration_difference_fails_the_records():
    """The planted error: the same portable arithmetic with every float32 conv/matmul output moved by one ulp at
    random -- what oneDNN's AVX2 kernels did to records made with its AVX-512 ones -- no longer gives AMCT's
    record to the bit."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).parent))
    from arith import Float64Arithmetic, PerturbLowPrecision
    ref = read_ref("bn_cnn")
    model = zoo.load("bn_cnn")
    calib = zoo.dataset(ref.calib["n"], ref.calib["seed"])[0]
    sc = ref.scenarios["default"]
    cfg = parse_config(sc.config, model, "bn_cnn.amct.json [default]")
    with Float64Arithmetic(), PerturbLowPrecision(seed=1, dtypes=(torch.float32,)) as moved:
        _, recs = opkit_variant(model, calib, cfg)
    assert moved.calls > 0
    assert any(not all(eq[:3]) for eq in compare_records(sc.records, recs).values())


def test_the_recorded_predictions_can_fail():
    """The comparison is real: the device-faithful variant (AscendQuant in fp16, fp16 around) does not reproduce
    AMCT's fake-quant predictions on every sample of every model."""
    ref = read_ref("vit")
    model = zoo.load("vit")
    calib = zoo.dataset(ref.calib["n"], ref.calib["seed"])[0]
    x = zoo.dataset(ref.test["n"], ref.test["seed"])[0]
    sc = ref.scenarios["default"]
    v, _ = opkit_variant(model, calib, parse_config(sc.config, model), records=sc.records)
    v.policy = load_policy("fp16-compute")
    ours = predictions(v, model, x)
    assert sum(int(a != b) for a, b in zip(ours, sc.predictions)) > 0


def test_setup_names_a_wrong_checkout(tmp_path):
    from opkit.errors import OpkitError
    from opkit.quant.amct.setup import prepare
    with pytest.raises(OpkitError, match="not an AMCT checkout"):
        prepare(tmp_path, tmp_path / "cache")


def test_the_oracle_command_needs_a_checkout(monkeypatch, capsys):
    from opkit.quant.amct.__main__ import main
    monkeypatch.delenv("OPKIT_AMCT", raising=False)
    assert main([]) == 2
    assert "give --amct CHECKOUT or set OPKIT_AMCT" in capsys.readouterr().err


def test_configs_amct_rejects_are_rejected_with_amcts_message():
    """AMCT's own errors for configs it rejects (recorded from quantize_model) appear in opkit's, which also
    name the file, layer and field."""
    import json

    from opkit.errors import OpkitError
    from opkit.quant.amct.__main__ import amct_message
    from opkit.quant.amct.refs import REJECTIONS
    from opkit.quant.config import parse_config
    data = json.loads(REJECTIONS.read_text())
    model = zoo.load(data["model"])
    assert len(data["configs"]) >= 7
    for name, r in data["configs"].items():
        assert r["amct_error"], f"{name}: AMCT accepted it"
        with pytest.raises(OpkitError) as e:
            parse_config(r["config"], model, f"{name}.json")
        assert amct_message(r["amct_error"]) in str(e.value) and f"{name}.json" in str(e.value), name


def test_convtranspose_calibrates_the_layers_after_it_on_its_float_weights():
    """AMCT rebuilds a ConvTranspose2d's calibration weight from the unquantized tensor (weight_calibration.py:
    419-424): conv2 after it gets AMCT's recorded factors that way, and other ones through fake-quant weights --
    the recorded comparison tells the two apart."""
    import numpy as np
    from opkit.quant.algorithms import arq
    from opkit.quant.amct.portable import FORWARD, Float64Arithmetic
    from opkit.quant.calibrate import calibrate
    from opkit.quant.config import parse_config
    from opkit.quant.graph import read_graph
    sc = read_ref("deconv").scenarios["default"]
    model = zoo.load("deconv")
    calib = zoo.calib_set()
    cfg, graph = parse_config(sc.config, model), read_graph(model, (calib[:2],))
    amct = (np.float32(sc.records["conv2"].scale_d), sc.records["conv2"].offset_d)

    def conv2():
        with Float64Arithmetic(only=FORWARD):
            r = calibrate(model, calib, cfg, graph)["conv2"]
        return np.float32(r.scale_d), r.offset_d
    assert conv2() == amct
    q = arq(model.up.weight.detach().transpose(0, 1), 8, True)
    with torch.no_grad():
        model.up.weight.copy_((q.codes * q.scale.reshape(-1, 1, 1, 1)).transpose(0, 1))
    assert conv2() != amct


def test_records_amct_rejects_are_rejected_with_amcts_message(tmp_path):
    """AMCT's save_model errors for record files it refuses (recorded), and the good record they were made from:
    opkit's reader refuses each with AMCT's message (up to the paths it names), naming the file, record and field,
    and takes the good one."""
    import json

    from opkit.quant.amct.refs import REJECTED_RECORDS, refuse_record, same_message
    from opkit.quant.records import check_against, read_record
    data = json.loads(REJECTED_RECORDS.read_text())
    model = zoo.load(data["model"])
    good = tmp_path / "good.txt"
    good.write_text(data["record"])
    assert sorted(read_record(good)) == ["fc", "features.0", "features.4"]
    check_against(model, read_record(good), str(good))
    assert len(data["records"]) >= 12
    for name, r in data["records"].items():
        assert r["amct_error"], f"{name}: AMCT accepted it"
        same, ours = refuse_record(model, r["text"], r["amct_error"], tmp_path)
        assert same and "record.txt: record '" in ours, f"{name}: AMCT {r['amct_error']!r}, opkit {ours!r}"
    assert not same_message("offset_d's value should be in [-128, 127] in layer fc.",
                            "record 'fc'.offset_d: offset_d's value should be in [-128, 127] in layer conv1.")


# AMCT's IFMR takes each candidate's loss as a float32 mse_loss, whose last bits depend on the CPU's vector width
# and thread count (a float32 sum of n terms: relative error up to ~log2(n) * 2^-24 in ATen's cascade order,
# ~1e-6 for the zoo's sizes). A winner ahead of the runner-up by less than this could be another candidate when
# AMCT records on another host: such a search is a tie, both candidates accepted. opkit's own losses are
# host-independent (opkit.numerics.mean); this test makes sure AMCT's recorded winners are not ties.
IFMR_TIE = 1e-5


@pytest.mark.parametrize("name", list(zoo.ZOO))
def test_recorded_ifmr_winners_are_clear_of_cross_host_noise(name, monkeypatch):
    import opkit.quant.algorithms as A
    ref = read_ref(name)
    sc = ref.scenarios["default"]
    model = zoo.load(name)
    calib = zoo.dataset(ref.calib["n"], ref.calib["seed"])[0]
    searches, real = [], A._mse_losses

    def kept(x, lows, cands, scales):
        losses = real(x, lows, cands, scales)
        searches.append((losses, scales.tolist()))
        return losses
    monkeypatch.setattr(A, "_mse_losses", kept)
    monkeypatch.setattr(A, "IFMR_BOUND", False)     # every candidate's loss, not only the bound's survivors
    _, recs = opkit_variant(model, calib, parse_config(sc.config, model), portable=ref.arithmetic == "float64")
    assert searches, f"{name}: no IFMR search ran"
    recorded = {float(torch.tensor(r.scale_d, dtype=torch.float32)) for r in sc.records.values()}
    ties, margins = [], []
    for losses, scales in searches:
        order = sorted(range(len(losses)), key=losses.__getitem__)
        best, second = order[0], order[1]
        margin = (losses[second] - losses[best]) / max(losses[best], 1e-30)
        margins.append(margin)
        if margin < IFMR_TIE:
            both = {float(torch.tensor(scales[i], dtype=torch.float32)) for i in (best, second)}
            ties.append((margin, both))
    print(f"\n{name}: {len(searches)} IFMR searches, smallest margin {min(margins):.1e}, "
          f"{len(ties)} within {IFMR_TIE:g} of the runner-up")
    for margin, both in ties:     # a tie: AMCT may record either candidate; the record must hold one of them
        assert both & recorded, f"{name}: near-tie (margin {margin:.2e}) and the record holds neither {both}"


def test_float64_arithmetic_passes_a_plain_answer_through():
    """aten.equal answers a bool, aten._local_scalar_dense a number: not a tensor or a sequence of them, handed
    back as they are (they used to raise TypeError inside the mode)."""
    from opkit.quant.amct.portable import Float64Arithmetic
    a = torch.tensor([1.0, 2.0])
    with Float64Arithmetic():
        assert torch.equal(a, a.clone()) is True and torch.equal(a, a + 1) is False
        assert a.sum().item() == 3.0
