"""opkit's float16 Linear (quant/fp16_linear.py): ATen's bits, checked on this host before use."""
import json
import platform
import sys
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from opkit.quant import fp16_linear as FL

sys.path.insert(0, str(Path(__file__).parent))


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.equal(a.view(torch.int16), b.view(torch.int16))


def _kernel_expected() -> bool:
    """The kernel reproduces ATen's AVX2 dot order (8 float lanes), which ATen runs on x86-64 under the avx2 and
    avx512 capabilities; forced down to ``ATEN_CPU_CAPABILITY=default`` (or on another ISA) ATen sums in another
    order, and on a CPU with AVX512-FP16 or AMX-FP16 (Intel Sapphire Rapids on) ATen hands float16 matmuls above
    16x16x16 to oneDNN (the device check `_is_mkldnn_fp16_supported` names): there the self-check refuses the
    kernel and F.linear runs instead -- the product's promise either way."""
    return platform.machine() in ("x86_64", "AMD64") and \
        torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512") and \
        not torch.ops.mkldnn._is_mkldnn_fp16_supported()


def test_kernel_passes_its_self_check_on_x86_64():
    """Measured on x86-64 (AVX2 and AVX-512 hosts: ATen's AVX2 dot order); elsewhere F.linear may be all there is,
    and the refusal says why."""
    if not _kernel_expected():
        assert FL.kernel() is not None or "differs from F.linear" in (FL.why() or ""), FL.why()
        return
    assert FL.kernel() is not None, FL.why()


@pytest.mark.parametrize("k", [1, 8, 16, 17, 32, 33, 48, 64, 65, 127, 128, 160, 191, 192, 300, 513])
def test_linear_equals_aten_bit_for_bit(k):
    g = torch.Generator().manual_seed(k)
    for rows, o, scale in ((300, 40, 1.0), (129, 96, 40.0), (64, 17, 1e-3)):
        x = (torch.randn(rows, k, generator=g) * scale).half()
        w = torch.randn(o, k, generator=g).half()
        b = torch.randn(o, generator=g).half()
        for xx, bb in ((x, b), (x, None), (x.reshape(3, -1, k) if rows % 3 == 0 else x[None], b)):
            assert same_bits(FL.linear(xx, w, bb), F.linear(xx, w, bb)), (k, rows, o, bb is None)


def test_the_kernel_is_used_and_differs_from_float32_rounded():
    """The calls above do go through the kernel (not F.linear), and its figures are not float32's rounded to
    float16 (so equality with ATen is not trivially met)."""
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(2048, 48, generator=g).half(), torch.randn(64, 48, generator=g).half()
    calls = []
    real = FL._run
    try:
        FL._run = lambda *a: calls.append(1) or real(*a)
        out = FL.linear(x, w)
    finally:
        FL._run = real
    if FL.kernel() is None:     # refused by its self-check (see _kernel_expected): F.linear's own bits instead
        assert not _kernel_expected(), f"no kernel here: {FL.why()}"
        assert not calls and same_bits(out, F.linear(x, w))
        return
    assert calls and same_bits(out, F.linear(x, w))
    assert not same_bits(out, F.linear(x.float(), w.float()).half())


def test_self_check_refuses_another_order():
    """A kernel summing in 16 lanes (the AVX-512 width ATen does not use here) is refused by the self-check."""
    fn = FL._load(lanes=16)
    assert fn is not None, FL._state.get("why")
    assert "differs from F.linear" in FL._self_check(fn)


def test_non_finite_and_uncovered_calls_run_on_f_linear():
    g = torch.Generator().manual_seed(1)
    x, w, b = torch.randn(256, 32, generator=g).half(), torch.randn(64, 32, generator=g).half(), torch.randn(64).half()
    x[3, 5] = float("inf")
    x[7, 1] = float("nan")
    assert same_bits(FL.linear(x, w, b), F.linear(x, w, b))
    b2 = b.clone()
    b2[0] = float("inf")
    x2 = torch.randn(256, 32, generator=g).half()
    assert same_bits(FL.linear(x2, w, b2), F.linear(x2, w, b2))
    xt = torch.randn(32, 256, generator=g).half().t()           # not contiguous: ATen's matmul + add path
    assert same_bits(FL.linear(xt, w, b), F.linear(xt, w, b))


def test_mode_routes_nn_linear_and_keeps_every_output():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(48, 96), nn.GELU(), nn.Linear(96, 32), nn.Linear(32, 10, bias=False)).half().eval()
    x = torch.randn(512, 48).half()
    with torch.no_grad():
        ref = m(x)
        with FL.Float16Linear():
            got = m(x)
            by_kw = F.linear(input=x, weight=m[0].weight, bias=m[0].bias)
            f32 = F.linear(x.float(), m[0].weight.float())              # not float16: untouched
    assert same_bits(got, ref)
    assert same_bits(by_kw, F.linear(x, m[0].weight, m[0].bias))
    assert torch.equal(f32, F.linear(x.float(), m[0].weight.float()))


def test_opkit_quant_deploy_dtype_report_identical_with_and_without_the_kernel(monkeypatch):
    """The whole --deploy-dtype float16 run (rows, search, verification): every report field and every row's
    class per sample equal with ATen's kernel and with opkit's."""
    import opkit
    from quantdata import encoder as E
    m = E.encoder().float().eval()
    x, c = E.patches(96, 1).float(), E.patches(16, 2).float()
    with torch.no_grad():
        y = m(x).argmax(-1)
    reps = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)             # many small ops: one thread is faster on a loaded 2-core machine
    try:
        for fast in (False, True):
            monkeypatch.setattr(FL, "ENABLED", fast)
            reps.append(opkit.quantize(m, c, (x, y), policy="amct-fake-quant", target_drop=3.0, batch_size=32,
                                       workers=1, deploy_dtype="float16"))
    finally:
        torch.set_num_threads(threads)
    a, b = (r.to_dict() for r in reps)
    for k in a:
        if k not in ("eval_seconds", "seconds", "eval_backends"):
            assert json.dumps(a[k], sort_keys=True, default=str) == json.dumps(b[k], sort_keys=True, default=str), k
    assert reps[0].predictions == reps[1].predictions
    assert reps[1].linear["describe"]
