"""The lean INT8 fake-quant call (modes.LEAN_CALL, q15b): QuantLayer._lean_run against the general path it skips,
bit for bit, on the encoder's and zoo nets' real layers and inputs -- a constant kept per model, per call or per
input rank instead of per (layer, values) gives another layer's or another rank's answer and fails here."""
import sys
from pathlib import Path

import pytest
import torch

from opkit.evaluate import SimVariant
from opkit.quant import modes as M
from opkit.quant.amct import zoo
from opkit.quant.calibrate import calibrate
from opkit.quant.config import default_config
from opkit.quant.graph import read_graph
from opkit.quant.variant import build_variant

sys.path.insert(0, str(Path(__file__).parent))
from quantdata import encoder as E  # noqa: E402
from test_quant_int_gemm import gemm_on  # noqa: E402


def bits(t: torch.Tensor) -> torch.Tensor:
    return t.detach().float().contiguous().view(torch.int32)


def _nets():
    yield "encoder", lambda: (E.encoder().float().eval(), E.patches(16, 2).float(), E.patches(24, 1).float())
    for name in ("resnet_basic", "vit", "convnext"):
        yield f"zoo-{name}", lambda name=name: (zoo.load(name), zoo.calib_set(16), zoo.test_set(24)[0])


NETS = list(_nets())


class _Sim:
    policy = None
    notes: list = []


@pytest.mark.parametrize("net", NETS, ids=[n[0] for n in NETS])
def test_lean_call_equals_the_general_path(net, monkeypatch):
    """Every INT8 layer of the net's default INT8 variant, called on the input it sees in the model (and a Linear's
    input flattened to 2-D too: no float bias then, AMCT's bias inside the MatMul), gives the same output bits,
    label and kernel name with the lean call as with the general path; the lean call is taken for every weighted
    layer with one exact float32 matmul."""
    name, make = net
    model, calib, x = make()
    cfg = default_config(model)
    graph = read_graph(model, (calib[:2],))
    v = build_variant(model, cfg, calibrate(model, calib, cfg, graph), graph)
    inputs = {}
    real_run = M.QuantLayer.run

    def run(self, sim, module, forward, args, kwargs):
        inputs.setdefault(self.name, (self, module, forward, args[0].clone()))
        return real_run(self, sim, module, forward, args, kwargs)

    monkeypatch.setattr(M.QuantLayer, "run", run)
    SimVariant("int8", policy="amct-fake-quant", layers=v.layers).simulator().run(model, (x,), record=False)
    monkeypatch.setattr(M.QuantLayer, "run", real_run)
    assert inputs, name
    taken = []
    real_lean = M.QuantLayer._lean_run

    def lean_run(self, x):
        out = real_lean(self, x)
        if out is not None:                 # the lean call answered (None: the general path ran)
            taken.append(self.name)
        return out

    monkeypatch.setattr(M.QuantLayer, "_lean_run", lean_run)
    assert M.fused.kernels() is not None, M.fused.why()      # loaded and self-checked: else no lean call is taken
    gemms = []
    real_mm = M.int_gemm.int_mm

    def int_mm(a, b):
        gemms.append(tuple(a.shape))
        return real_mm(a, b)

    monkeypatch.setattr(M.int_gemm, "int_mm", int_mm)
    # the int8 GEMM without the wall-clock speed race: exact on every host (test_quant_int_gemm), so it is taken
    i8_here = gemm_on(monkeypatch)
    lean_layers = 0
    for layer_name, (layer, module, forward, xin) in inputs.items():
        forms = [xin]
        if layer.op_type == "linear" and xin.dim() > 2:
            forms.append(xin.reshape(-1, xin.shape[-1]))
        for xf in forms:
            monkeypatch.setattr(M, "LEAN_CALL", False)
            want = layer.run(_Sim(), module, forward, (xf,), {})
            monkeypatch.setattr(M, "LEAN_CALL", True)
            taken.clear()
            gemms.clear()
            got = layer.run(_Sim(), module, forward, (xf,), {})
            assert got[1:] == want[1:], (name, layer_name, tuple(xf.shape))
            assert torch.equal(bits(got[0]), bits(want[0])), (name, layer_name, tuple(xf.shape))
            # q16: a lean Linear's integer sums come from the int8 GEMM where it passed its self-check
            i8 = i8_here and bool(taken) and layer.op_type == "linear" \
                and xf.numel() * layer.codes.shape[0] >= M.int_gemm.MIN_MACS
            assert gemms == ([(xf.numel() // xf.shape[-1], xf.shape[-1])] if i8 else []), (name, layer_name)
            # a smaller input stays on the torch ops (the kernels do not pay); a channels-last input (convnext's
            # depthwise conv) is not one the kernels read: both take the general path. A small output is dequantized
            # by the torch ops inside the lean call.
            kernels = xf.numel() >= M.fused.MIN_ELEMENTS and M.fused._usable(xf)
            assert taken == ([layer_name] if layer._lean()[1] is not None and kernels else []), (name, layer_name)
        lean_layers += layer._lean()[1] is not None
    if name == "encoder":
        assert lean_layers == len(inputs) == 10         # every INT8 Linear of the encoder takes the lean call
    assert lean_layers > 0, name


def test_lean_call_with_a_small_output_runs_the_matmul_once(monkeypatch):
    """A Linear 768 -> 10 at batch 1: the input is one the codes kernel reads, the 10-element output is too small
    for the dequant kernel. The lean call dequantizes it with the torch ops itself -- the codes kernel and the
    matmul run once, not again on the general path -- and gives the general path's bits, label and kernel name."""
    from opkit.quant.algorithms import arq, scale_offset
    from opkit.quant.modes import ConvGeometry
    fused = M.fused
    assert fused.kernels() is not None, fused.why()
    # self-checked first (its own GEMMs are not this call's); 7,680 multiply-adds: below MIN_MACS, F.linear stays
    i8 = gemm_on(monkeypatch) and 768 * 10 >= M.int_gemm.MIN_MACS   # no speed race: the GEMM where MIN_MACS allows
    torch.manual_seed(3)
    m = torch.nn.Linear(768, 10)
    wq = arq(m.weight, 8, True)
    s_d, _ = scale_offset(torch.tensor(3.0), torch.tensor(-1.0), True, 8)
    deq = float(s_d) * wq.scale
    layer = M.QuantLayer("head", ConvGeometry.of(m), wq.codes.to(torch.int8), wq.scale, float(s_d), -20,
                         bias_codes=torch.round(m.bias.detach() / deq).to(torch.int64), bias=m.bias.detach())
    for shape in ((1, 768), (1, 1, 768)):               # the int32 bias inside the matmul; the float bias after
        x = torch.randn(shape)
        monkeypatch.setattr(M, "LEAN_CALL", False)
        want = layer.run(_Sim(), m, m.forward, (x,), {})
        monkeypatch.setattr(M, "LEAN_CALL", True)
        calls = []
        for mod, fn in ((fused, "_codes"), (fused, "_dequant"), (M.int_gemm, "codes_i8"),
                        (M.int_gemm, "int_mm"), (M.int_gemm, "dequant_i32")):
            real = getattr(mod, fn)
            monkeypatch.setattr(mod, fn, lambda *a, real=real, fn=fn: calls.append(fn) or real(*a))
        apply = ConvGeometry.apply
        monkeypatch.setattr(ConvGeometry, "apply", lambda self, *a: calls.append("matmul") or apply(self, *a))
        got = layer.run(_Sim(), m, m.forward, (x,), {})
        monkeypatch.undo()
        # no kernel dequant (10 elements), nothing run twice; q16: the int8 GEMM and its own dequant where it runs
        assert calls == (["codes_i8", "int_mm", "dequant_i32"] if i8 else ["_codes", "matmul"]), shape
        assert got[1:] == want[1:], shape
        assert torch.equal(bits(got[0]), bits(want[0])), shape


def test_the_kept_lean_constants_hold_the_storages_their_key_names():
    """The lean key names each tensor by id and data pointer: ``layer.codes.data = t`` frees the block the kept key
    names unless the entry holds it, and a later tensor landing there would match the key over other codes. The
    entry holds an alias of each storage: the old codes' storage lives while the entry does."""
    import gc
    import weakref
    from opkit.quant.algorithms import arq, scale_offset
    from opkit.quant.modes import ConvGeometry
    torch.manual_seed(4)
    m = torch.nn.Linear(64, 32)
    wq = arq(m.weight, 8, True)
    s_d, _ = scale_offset(torch.tensor(3.0), torch.tensor(-1.0), True, 8)
    layer = M.QuantLayer("fc", ConvGeometry.of(m), wq.codes.to(torch.int8).clone(), wq.scale, float(s_d), -20)
    lean = layer._lean()
    assert lean[1] is not None, "the layer takes the lean path"
    storage = weakref.ref(layer.codes.untyped_storage())
    layer.codes.data = layer.codes.data.clone()
    gc.collect()
    assert storage() is not None, "the kept entry let the storage its key names go"
    assert layer._lean()[0] != lean[0]             # and the key itself sees the new storage
