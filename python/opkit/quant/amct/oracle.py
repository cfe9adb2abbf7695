"""AMCT as a differential oracle: its own classic PTQ flow and opkit's on the same model, config, calibration data
and labelled set; per layer the record (scale/offset) equality and the output cosine of AMCT's fake-quant ONNX
model (onnxruntime) against opkit's simulation under ``amct-fake-quant``, and sample-for-sample prediction
agreement. AMCT comes from a checkout (:mod:`.setup`); nothing of it is copied into opkit.
"""
from __future__ import annotations

import contextlib
import copy
import json
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import torch
import torch.nn as nn

from ...toolchain.files import write_json
from ..calibrate import calibrate, split_batches
from ..config import QuantConfig, default_config, load_config
from ..graph import read_graph
from ..records import LayerRecord, read_record
from ..variant import build_variant
from .portable import FORWARD, Float64Arithmetic
from .scenarios import SCENARIOS
from .setup import AmctCheckout, import_amct, torchscript_export

POLICY = "amct-fake-quant"
INPUT = "input"


@dataclass
class AmctRun:
    """What AMCT's flow produced: its config and record files, the fake-quant ONNX model and its predictions."""
    config: Path
    record: Path
    fake_quant: Path
    records: dict[str, LayerRecord]
    logits: np.ndarray
    seconds: float


@dataclass
class LayerCompare:
    name: str
    scale_d_equal: bool
    offset_d_equal: bool
    scale_w_equal: bool
    scale_w_max_rel: float            # largest relative difference of the weight scales
    cosine: float | None              # AMCT's fake-quant layer output vs opkit's (None: not compared)


@dataclass
class OracleResult:
    model: str
    amct_commit: str
    layers: list[LayerCompare]
    samples: int
    agree: int                        # samples whose top-1 class is the same
    differing: list[int]              # indices of the samples that differ
    amct_top1: float                  # percent, AMCT's fake-quant model in onnxruntime
    opkit_top1: float                 # percent, opkit under amct-fake-quant
    amct_seconds: float
    opkit_seconds: float
    amct_predictions: list[int] = field(default_factory=list)
    config: dict = field(default_factory=dict)                 # the AMCT config JSON both flows ran
    amct_records: dict[str, LayerRecord] = field(default_factory=dict)

    @property
    def agreement(self) -> float:
        return 100.0 * self.agree / max(self.samples, 1)

    @property
    def records_equal(self) -> bool:
        return all(c.scale_d_equal and c.offset_d_equal and c.scale_w_equal for c in self.layers)

    def lines(self) -> list[str]:
        out = [f"{self.model}: AMCT {self.amct_commit[:8]}; {len(self.layers)} quantized layer(s)",
               f"  {'layer':28s} {'scale_d':8s} {'offset_d':8s} {'scale_w':8s} {'max rel':>9s} {'cosine':>10s}"]
        for c in self.layers:
            cos = f"{c.cosine:.7f}" if c.cosine is not None else "-"
            out.append(f"  {c.name:28s} {_eq(c.scale_d_equal):8s} {_eq(c.offset_d_equal):8s} "
                       f"{_eq(c.scale_w_equal):8s} {c.scale_w_max_rel:9.2e} {cos:>10s}")
        out.append(f"  predictions: {self.agree}/{self.samples} agree ({self.agreement:.2f}%); top-1 AMCT fake-quant "
                   f"{self.amct_top1:.2f}%, opkit {POLICY} {self.opkit_top1:.2f}%"
                   + (f"; differing samples {self.differing[:10]}" if self.differing else ""))
        out.append(f"  time: AMCT {self.amct_seconds:.1f} s, opkit {self.opkit_seconds:.1f} s")
        return out


def _eq(b: bool) -> str:
    return "equal" if b else "DIFFERS"


def amct_config(amct, model: nn.Module, calib: torch.Tensor, path: Path, skip_layers=(), batch_num: int = 1,
                activation_offset: bool = True, edit: Callable[[dict], None] | None = None) -> Path:
    """AMCT's create_quant_config, then ``edit`` applied to the JSON (channel_wise, IFMR parameters ...)."""
    with torchscript_export():
        amct.create_quant_config(str(path), copy.deepcopy(model), calib[:1], skip_layers=list(skip_layers) or None,
                                 batch_num=batch_num, activation_offset=activation_offset)
    if edit is not None:
        data = json.loads(path.read_text())
        edit(data)
        path.write_text(json.dumps(data, indent=4, separators=(",", ":")) + "\n")
    return path


def run_amct(amct, model: nn.Module, calib: torch.Tensor, config: Path, work: Path, test_x: torch.Tensor,
             layer_outputs: list[str] = (), probe: torch.Tensor | None = None, portable: bool = False):
    """AMCT's flow: quantize_model, ``batch_num`` calibration forwards, save_model; the fake-quant model in
    onnxruntime on ``test_x`` (logits) and on ``probe`` (the quantized layers' dequantized outputs). ``portable``:
    the calibration forwards under Float64Arithmetic (portable.py), for a record compared on other CPUs."""
    import onnxruntime as ort
    t0 = time.monotonic()
    batch_num = json.loads(config.read_text()).get("batch_num", 1)
    record, onnx_mod, save = work / "record.txt", work / "modified.onnx", work / "amct"
    with torchscript_export():
        qm = amct.quantize_model(str(config), str(onnx_mod), str(record), copy.deepcopy(model), calib[:1],
                                 input_names=[INPUT], output_names=["logits"],
                                 dynamic_axes={INPUT: {0: "batch"}, "logits": {0: "batch"}})
        with torch.no_grad(), _arithmetic(portable):
            for batch in split_batches(calib, batch_num):
                qm(batch)
        amct.save_model(str(onnx_mod), str(record), str(save))
    fq = Path(f"{save}_fake_quant_model.onnx")
    sess = ort.InferenceSession(str(fq), providers=["CPUExecutionProvider"])
    logits = sess.run(None, {INPUT: test_x.numpy()})[0]
    outs = _onnx_layer_outputs(fq, layer_outputs, probe) if probe is not None and layer_outputs else {}
    return AmctRun(config, record, fq, read_record(record), logits, time.monotonic() - t0), outs


def _onnx_layer_outputs(path: Path, layers: list[str], x: torch.Tensor) -> dict[str, np.ndarray]:
    """Each quantized layer's dequantized output in AMCT's fake-quant model (the ``<layer>.fakedequant.mul``
    node; an LSTM/GRU node's Y), read by making it a graph output."""
    import onnx
    import onnxruntime as ort
    m = onnx.load(str(path))
    names = {}
    for node in m.graph.node:
        for layer in layers:
            if node.name == f"{layer}.fakedequant.mul":
                names[layer] = node.output[0]
    for node in m.graph.node:          # a Linear as MatMul: its float bias is added after the dequant
        for layer, out in list(names.items()):
            if node.op_type == "Add" and out in node.input and f"{layer}.sub_module.bias" in node.input:
                names[layer] = node.output[0]
    rnn = set()
    for node in m.graph.node:          # an LSTM/GRU: its Y output, [T, 1, B, H] (compared batch-first)
        if node.op_type in ("LSTM", "GRU") and node.name in layers:
            names[node.name] = node.output[0]
            rnn.add(node.name)
    have = {o.name for o in m.graph.output}
    for out in names.values():
        if out not in have:
            m.graph.output.append(onnx.helper.make_tensor_value_info(out, onnx.TensorProto.FLOAT, None))
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    res = dict(zip(names, sess.run(list(names.values()), {INPUT: x.numpy()})))
    return {n: v[:, 0].transpose(1, 0, 2) if n in rnn else v for n, v in res.items()}


def _arithmetic(portable: bool):
    # only the model's forward ops whose bits depend on the CPU (portable.FORWARD): AMCT computes its searches and
    # folds partly outside PyTorch, the same on every CPU, and opkit's torch code equals them there bit for bit
    return Float64Arithmetic(only=FORWARD) if portable else contextlib.nullcontext()


def opkit_variant(model: nn.Module, calib: torch.Tensor, config: QuantConfig, records=None, portable: bool = False):
    """opkit's flow: its own calibration (or the given records) and the variant as AMCT's fake-quant model.
    ``portable``: calibrate under Float64Arithmetic, as AMCT's recorded side was."""
    graph = read_graph(model, (calib[:2],))
    if records is None:
        with _arithmetic(portable):
            records = calibrate(model, calib, config, graph)
    v = build_variant(model, config, records, graph, atc_conv_bn=False, requant=False, name=POLICY)
    v.policy = POLICY
    return v, records


def _logits(v, model: nn.Module, x: torch.Tensor, chunk: int = 250) -> torch.Tensor:
    run = v.as_variant().prepare(model)
    with torch.no_grad():
        return torch.cat([run(x[i:i + chunk]).float() for i in range(0, x.shape[0], chunk)])


def predictions(v, model: nn.Module, x: torch.Tensor) -> list[int]:
    """The top-1 class of every sample under variant ``v`` (its policy)."""
    return [int(p) for p in _logits(v, model, x).argmax(1)]


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.reshape(-1).astype(np.float64), b.reshape(-1).astype(np.float64)
    d = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b / d) if d else float(np.array_equal(a, b))


def compare_records(amct: dict[str, LayerRecord], ours: dict[str, LayerRecord]) -> dict[str, tuple]:
    """Per layer: (scale_d equal, offset_d equal, scale_w equal, max relative scale_w difference); equality is
    on the float32 values (AMCT's record fields are float32). An RNN's scale_h/offset_h/scale_r count too."""
    out = {}
    for name, a in amct.items():
        o = ours.get(name)
        if o is None:
            out[name] = (False, False, False, float("inf"))
            continue
        sa, so = np.float32(a.scale_d), np.float32(o.scale_d)
        wa, wo = np.asarray(a.scale_w, np.float32), np.asarray(o.scale_w, np.float32)
        rel = float(np.max(np.abs(wa - wo) / np.maximum(np.abs(wa), 1e-30))) if wa.shape == wo.shape else float("inf")
        w_eq = bool(wa.shape == wo.shape and np.all(wa == wo))
        d_eq, off_eq = bool(sa == so), a.offset_d == o.offset_d
        if a.scale_h is not None or o.scale_h is not None:
            # an LSTM/GRU: the hidden state's factors count with the input's, weight_hh's scales with weight_ih's
            d_eq = d_eq and o.scale_h is not None and a.scale_h is not None and \
                bool(np.float32(a.scale_h) == np.float32(o.scale_h))
            off_eq = off_eq and a.offset_h == o.offset_h
            ra, ro = np.asarray(a.scale_r or [], np.float32), np.asarray(o.scale_r or [], np.float32)
            w_eq = w_eq and ra.shape == ro.shape and bool(np.all(ra == ro))
        out[name] = (d_eq, off_eq, w_eq, rel)
    return out


def _amct_side(checkout: AmctCheckout, model: nn.Module, calib: torch.Tensor, scenario: str, layers: list[str],
               pairs: dict, work: Path, test_x: torch.Tensor, probe: torch.Tensor, portable: bool = False):
    """AMCT's side of one oracle run: its config for ``scenario``, its flow, its fake-quant model's outputs. Runs
    with ``work`` as the current directory (AMCT writes ./amct_log wherever it runs)."""
    import logging
    import os
    logging.getLogger().setLevel(logging.ERROR)
    amct = import_amct(checkout)
    cwd = os.getcwd()
    os.chdir(work)
    try:
        cfg_path = amct_config(amct, model, calib, work / "config.json",
                               **SCENARIOS[scenario].config_kw(layers, pairs))
        cfg_json = json.loads(cfg_path.read_text())
        quant = [k for k, v in cfg_json.items() if isinstance(v, dict) and v.get("quant_enable")]
        run, outs = run_amct(amct, model, calib, cfg_path, work, test_x, quant, probe, portable)
    finally:
        os.chdir(cwd)
    return cfg_json, run, outs


def run_oracle(checkout: AmctCheckout, name: str, model: nn.Module, calib: torch.Tensor, test_x: torch.Tensor,
               test_y: torch.Tensor, scenario: str = "default", work: Path | None = None,
               probe_n: int = 64, portable: bool = False) -> OracleResult:
    """Both flows on one model and one config scenario (scenarios.py: AMCT's options as a user sets them).
    ``portable``: both calibrations under Float64Arithmetic (what --record stores); else the CPU's own kernels,
    where opkit equals AMCT run on the same machine bit for bit."""
    model = copy.deepcopy(model).eval()
    sc = SCENARIOS[scenario]
    with tempfile.TemporaryDirectory(prefix=f"opkit-amct-{name}-") as tmp:
        work = Path(work or tmp)
        work.mkdir(parents=True, exist_ok=True)
        layers = list(default_config(model).layers)
        # the Conv+BN pairs, and under "rnn" the LSTM/GRU layers (scenarios.py: what an edit must leave alone)
        pairs = dict(read_graph(model, (calib[:2],)).pairs) | {
            "rnn": [n for n, m in model.named_modules() if isinstance(m, (nn.LSTM, nn.GRU))]}
        probe = test_x[:probe_n]
        cfg_json, run, amct_outs = _amct_side(checkout, model, calib, sc.name, layers, pairs, work.resolve(), test_x,
                                              probe, portable)
        cfg = load_config(work / "config.json", model)
        t0 = time.monotonic()
        v, recs = opkit_variant(model, calib, cfg, portable=portable)
        logits = _logits(v, model, test_x)
        sim = v.simulator(v.policy)
        with torch.no_grad():
            _, outs = sim.run(model, (probe,))
        opkit_seconds = time.monotonic() - t0
    ours = {r.name: r.tensor for r in outs}
    eq = compare_records(run.records, recs)
    layers = [LayerCompare(n, *eq[n], _cos(amct_outs[n], ours[n].numpy()) if n in amct_outs and n in ours else None)
              for n in run.records]
    pa = run.logits.argmax(1)
    po = logits.argmax(1).numpy()
    diff = [int(i) for i in np.nonzero(pa != po)[0]]
    y = test_y.numpy()
    return OracleResult(f"{name} [{sc.name}]", checkout.commit, layers, len(pa), len(pa) - len(diff), diff,
                        100.0 * float((pa == y).mean()), 100.0 * float((po == y).mean()), run.seconds, opkit_seconds,
                        [int(p) for p in pa], cfg_json, run.records)


def amct_rejections(checkout: AmctCheckout, model: nn.Module, calib: torch.Tensor, work: Path) -> dict[str, dict]:
    """Each of scenarios.BAD_CONFIGS given to AMCT's quantize_model: {name: {"config", "amct_error"}} (the error
    AMCT raised, or "" when it accepted the config)."""
    import logging
    import os
    from .scenarios import BAD_CONFIGS
    logging.getLogger().setLevel(logging.ERROR)
    amct = import_amct(checkout)
    cwd = os.getcwd()
    os.chdir(work)
    out = {}
    try:
        base = json.loads(amct_config(amct, model, calib, work / "base.json").read_text())
        for name, edit in BAD_CONFIGS.items():
            cfg = copy.deepcopy(base)
            edit(cfg)
            path = work / f"{name}.json"
            write_json(path, cfg, indent=4)
            err = ""
            try:
                with torchscript_export():
                    amct.quantize_model(str(path), str(work / "m.onnx"), str(work / "r.txt"), copy.deepcopy(model),
                                        calib[:1])
            except Exception as e:  # noqa: BLE001 - AMCT's own message is the point
                err = str(e)
            out[name] = {"config": cfg, "amct_error": err}
    finally:
        os.chdir(cwd)
    return out


def amct_record_rejections(checkout: AmctCheckout, model: nn.Module, calib: torch.Tensor, work: Path) -> dict:
    """Each of scenarios.BAD_RECORDS given to AMCT's save_model beside the modified ONNX model of a normal run:
    {"record": the good record's text, "records": {name: {"text", "amct_error"}}} ("" when AMCT accepted it)."""
    import logging
    import os
    from .scenarios import BAD_RECORDS
    logging.getLogger().setLevel(logging.ERROR)
    amct = import_amct(checkout)
    cwd = os.getcwd()
    os.chdir(work)
    out: dict = {}
    try:
        cfg = amct_config(amct, model, calib, work / "config.json")
        record, onnx_mod = work / "record.txt", work / "modified.onnx"
        with torchscript_export():
            qm = amct.quantize_model(str(cfg), str(onnx_mod), str(record), copy.deepcopy(model), calib[:1])
            with torch.no_grad():
                qm(calib)
        good = record.read_text()
        out = {"record": good, "records": {}}
        for name, edit in BAD_RECORDS.items():
            bad = work / "bad_record.txt"
            bad.write_text(edit(good))
            err = ""
            try:
                amct.save_model(str(onnx_mod), str(bad), str(work / name))
            except Exception as e:  # noqa: BLE001 - AMCT's own message is the point
                err = str(e)
            out["records"][name] = {"text": bad.read_text(), "amct_error": err}
    finally:
        os.chdir(cwd)
    return out
