"""The quantization arithmetic against hand-computed cases: one scale, one clip search, one folded BatchNorm, the
device's fp16 AscendQuant, exact integer accumulation, HFMG's histogram merge (issue 21)."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from opkit.quant.algorithms import Histogram, arq, fake_quant, hfmg, ifmr, percentile_bounds, scale_offset
from opkit.quant.modes import ConvGeometry, QuantLayer, ascend_quant, fold_bn


def test_arq_per_channel_and_per_layer_scales_by_hand():
    w = torch.tensor([[0.5, -1.28, 0.3], [2.54, 0.1, -0.2]])
    q = arq(w, 8, channel_wise=True)
    # channel 0: |min| > |max| -> 128 steps on the negative side: 1.28 / 128 = 0.01
    # channel 1: 2.54 / 127 = 0.02
    assert q.scale.tolist() == pytest.approx([0.01, 0.02], rel=1e-6)
    assert q.codes.tolist() == [[50.0, -128.0, 30.0], [127.0, 5.0, -10.0]]
    assert q.offset.tolist() == [0, 0]
    q = arq(w, 8, channel_wise=False)                      # one scale: 2.54 / 127 = 0.02 for the whole layer
    assert q.scale.tolist() == pytest.approx([0.02], rel=1e-6)
    assert q.codes.tolist() == [[25.0, -64.0, 15.0], [127.0, 5.0, -10.0]]


def test_asymmetric_scale_and_offset_by_hand():
    # range [-1, 3]: scale 4 / 255; offset -128 - (-1 / scale) = -128 + 63.75 -> -64
    s, o = scale_offset(torch.tensor(3.0), torch.tensor(-1.0), True, 8)
    assert float(s) == pytest.approx(4 / 255, rel=1e-7) and int(o) == -64
    codes = torch.clamp(torch.round(torch.tensor([3.0, -1.0, 0.0]) / s + o), -128, 127)
    assert codes.tolist() == [127.0, -128.0, -64.0]        # 3/s = 191.25 -> 191 - 64; -1/s = -63.75 -> -64 - 64
    # a range that does not contain zero is widened to contain it: [2, 6] -> [0, 6]
    s, o = scale_offset(torch.tensor(6.0), torch.tensor(2.0), True, 8)
    assert float(s) == pytest.approx(6 / 255, rel=1e-7) and int(o) == -128


def test_ifmr_percentile_start_by_hand():
    data = torch.arange(1, 1001, dtype=torch.float32)
    # k = n - int(0.99 * n) = 10: the 10th largest is 991; the 10th smallest is 10, widened to 0
    assert percentile_bounds(data, 0.99, 0.99) == (991.0, 0.0)
    assert percentile_bounds(data, 1.0, 1.0) == (1000.0, 0.0)


def test_ifmr_clip_search_lands_where_the_data_sits_on_the_grid():
    # Symmetric: values on a 0.01 grid up to 1.27 (max 1.27, percentile 1.0). Ratio 1.00 gives scale 1.27/127 =
    # 0.01 and zero error; every ratio below clips 1.27, every ratio above has a coarser grid the values miss.
    vals = torch.tensor([k / 100 for k in range(-127, 128)] * 3, dtype=torch.float32)
    r = ifmr(vals, 8, with_offset=False, max_percentile=1.0, min_percentile=1.0)
    assert r.scale == pytest.approx(0.01, rel=1e-6) and r.offset == 0
    assert (r.clip_min, r.clip_max) == pytest.approx((-1.28, 1.27), rel=1e-5)
    # Asymmetric: [-0.5, 2.05] on the 0.01 grid: ratio 1.00 gives scale (2.05 + 0.5) / 255 = 0.01 and
    # offset -round(-0.5 / 0.01) - 128 = -78.
    vals = torch.tensor([k / 100 for k in range(-50, 206)] * 3, dtype=torch.float32)
    r = ifmr(vals, 8, with_offset=True, max_percentile=1.0, min_percentile=1.0)
    assert r.scale == pytest.approx(0.01, rel=1e-6) and r.offset == -78
    assert (r.init_min, r.init_max) == pytest.approx((-0.5, 2.05))


def test_folded_batchnorm_by_hand():
    conv = nn.Conv2d(1, 1, 1)
    with torch.no_grad():
        conv.weight.fill_(2.0)
        conv.bias.fill_(1.0)
    bn = nn.BatchNorm2d(1, eps=0.01).eval()
    with torch.no_grad():
        bn.weight.fill_(3.0)
        bn.bias.fill_(0.5)
        bn.running_mean.fill_(0.25)
        bn.running_var.fill_(3.99)
    w, b = fold_bn(conv.weight, conv.bias, bn)
    # gamma / sqrt(var + eps) = 3 / 2 = 1.5: w' = 2 * 1.5 = 3; b' = (1 - 0.25) * 1.5 + 0.5 = 1.625
    assert w.item() == 3.0 and b.item() == 1.625
    x = torch.randn(2, 1, 3, 3)
    assert torch.allclose(bn(conv(x)), nn.functional.conv2d(x, w, b), atol=1e-6)


def test_device_ascend_quant_rounds_in_fp16():
    # 1.851 in fp16 is 1.8505859375; times fp16(1 / 0.1) = 10 gives 18.505859375, which fp16 (spacing 1/64 in
    # [16, 32)) rounds to 18.5; round(18.5) = 18 (half to even). AMCT's fp32 formula gives 1.851 / 0.1 = 18.51
    # -> 19. The device and the fake-quant model disagree by one code.
    x = torch.tensor([1.851])
    assert ascend_quant(x, 0.1, 0, 8).item() == 18.0
    assert torch.round(x / torch.tensor(0.1)).item() == 19.0
    assert ascend_quant(torch.tensor([1e6, -1e6, float("nan")]), 0.1, 0, 8).tolist() == [127.0, -128.0, 0.0]


def test_integer_accumulation_is_exact_beyond_float32():
    # K = 8192 products of 255 x 127 plus the bias 7: 265,297,927 needs 29 bits, past float32's 24-bit mantissa
    k = 8192
    layer = QuantLayer("fc", ConvGeometry("linear"), torch.full((1, k), 127, dtype=torch.int8), torch.tensor([1.0]),
                       scale_d=1.0, offset_d=-128, bias_codes=torch.tensor([7]))
    q = torch.full((1, k), 127.0)                             # codes 127 with offset -128: 255 each
    acc = layer.accumulate(q)
    assert acc.dtype == torch.float64 and int(acc.item()) == 255 * 127 * k + 7


@pytest.mark.parametrize("cin, k, groups", [(8, 3, 1), (96, 3, 1), (512, 3, 1), (64, 3, 64)])
def test_fast_integer_paths_equal_float64(cin, k, groups):
    # small fan-in: float32 directly; 864: float32 on 4-bit weight halves; 4608: float64 -- all exact
    g = torch.Generator().manual_seed(cin)
    conv = nn.Conv2d(cin, 16 if groups == 1 else cin, k, padding=1, groups=groups, bias=False)
    codes = torch.randint(-128, 128, conv.weight.shape, generator=g, dtype=torch.int8)
    layer = QuantLayer("c", ConvGeometry.of(conv), codes, torch.tensor([1.0]), scale_d=1.0, offset_d=-128)
    q = torch.randint(-128, 128, (2, cin, 6, 6), generator=g).float()
    ref = nn.functional.conv2d((q + 128).double(), codes.double(), padding=1, groups=groups)
    assert torch.equal(layer.accumulate(q), ref)


def test_grouped_and_depthwise_conv_integer_path_matches_fake_quant():
    torch.manual_seed(0)
    for groups, cin, cout in ((1, 4, 6), (2, 4, 6), (4, 4, 4)):
        conv = nn.Conv2d(cin, cout, 3, padding=1, groups=groups)
        x = torch.randn(2, cin, 5, 5)
        wq = arq(conv.weight, 8, True)
        s_d, o_d = scale_offset(x.max(), x.min(), True, 8)
        deq = float(s_d) * wq.scale
        bias_codes = torch.round(conv.bias.detach() / deq).to(torch.int64)
        layer = QuantLayer("c", ConvGeometry.of(conv), wq.codes.to(torch.int8), wq.scale, float(s_d), int(o_d),
                           bias_codes=bias_codes)
        qx = layer.integer_input(x, device=False)
        y = layer.accumulate(qx).float() * deq.reshape(1, -1, 1, 1)
        # the same layer as fake-quant float math: dequantized input and weights, dequantized int32 bias
        xf = fake_quant(x, s_d, o_d, 8)
        wf = wq.codes * wq.scale.reshape(-1, 1, 1, 1)
        ref = nn.functional.conv2d(xf.double(), wf.double(), (bias_codes * deq).double(), padding=1, groups=groups)
        assert torch.allclose(y.double(), ref, rtol=1e-5, atol=1e-5), groups


def test_hfmg_histogram_merge_and_search():
    h = Histogram(8)
    h.add(torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0]))      # range [0, 8], one sample per bin
    assert h.counts.tolist() == [1, 1, 1, 1, 1, 1, 1, 1] and (h.lo, h.hi) == (0.0, 8.0)
    h.add(torch.tensor([16.0]))                                          # range widens to [0, 16]: bins of 2
    # the new batch lands in the last new bin; each pair of old bins fills one new bin
    assert h.counts.tolist() == [2, 2, 2, 2, 0, 0, 0, 1] and (h.lo, h.hi) == (0.0, 16.0)
    big = Histogram(4096)
    g = torch.Generator().manual_seed(0)
    big.add(torch.randn(200000, generator=g))
    big.add(torch.cat([torch.randn(200000, generator=g), torch.tensor([40.0])]))
    r = hfmg(big, 8, with_offset=True)
    # the lone outlier at 40 is clipped, the Gaussian body kept
    assert 3.0 < r.clip_max < 10.0 and r.clip_min < -3.0
    assert np.isclose(big.counts.sum(), 400001)


def test_requant_codes_survive_fp16_and_reach_the_next_layer_exactly():
    # AscendRequant hands the next layer (q - offset) * scale, held in fp16 between the ops; the next layer
    # divides it back. 8-bit codes need 8 of fp16's 11 significant bits: the codes come back exactly.
    g = torch.Generator().manual_seed(0)
    a = QuantLayer("a", ConvGeometry("linear"), torch.ones(4, 1, dtype=torch.int8), torch.rand(4, generator=g) + 0.1,
                   scale_d=0.37, offset_d=-5)
    for relu in (False, True):
        a.requant_to = (0.0123, -77, 8, relu)
        acc = torch.randint(-4000, 4000, (64, 4), generator=g).double()
        y = a.requantize(acc).to(torch.float16)                     # what the next op receives
        b = QuantLayer("b", ConvGeometry("linear"), torch.ones(1, 4, dtype=torch.int8), torch.tensor([1.0]),
                       scale_d=0.0123, offset_d=-77, from_requant=True)
        q = b.integer_input(y, device=True)
        expect = torch.clamp(torch.round(acc.float() * (a.deq_scale / 0.0123) - 77), -128, 127)
        if relu:
            expect = expect.clamp(min=-77)
        assert torch.equal(q, expect)
