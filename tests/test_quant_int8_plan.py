"""Issue 38 item 2: each INT8 layer's integer accumulation runs on a plan chosen when the variant is built (one
float32 conv per chunk of input channels whose bound |x_code| * sum|w_code| stays below 2^24, summed in float64)
instead of measuring max|x| per call. Proof of equality with the per-call path (``exact_product``), bit for bit,
layer call by layer call, on the zoo and held-out-style nets, under the device policy and AMCT's fake-quant."""
import pickle
import sys
from pathlib import Path

import pytest
import torch
import torch.nn as nn

from opkit.quant.amct import zoo
from opkit.quant.calibrate import calibrate
from opkit.quant.config import default_config
from opkit.quant.graph import read_graph
from opkit.quant import modes as M
from opkit.quant.modes import INT32_MAX, ConvGeometry, QuantLayer, plan_chunks
from opkit.quant.variant import build_variant

sys.path.insert(0, str(Path(__file__).parent))
from evaldata.models import gelu_net, overflow_net, overflow_set  # noqa: E402
from quantdata.models import inputs, mixed_scale, with_dead_channel  # noqa: E402

F64 = torch.float64


class Wide(nn.Module):
    """ResNet-18-like widths and fan-ins (3x3 over 256 and 512 channels, a 512-wide Linear): chunked plans."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.c1 = nn.Conv2d(3, 64, 3, padding=1)
        self.b1 = nn.BatchNorm2d(64)
        self.c2 = nn.Conv2d(64, 256, 3, padding=1, bias=False)
        self.c3 = nn.Conv2d(256, 512, 3, padding=1)
        self.fc = nn.Linear(512, 10)

    def forward(self, x):
        x = torch.relu(self.b1(self.c1(x)))
        x = torch.relu(self.c3(torch.relu(self.c2(x))))
        return self.fc(x.mean((2, 3)))


def _nets():
    g = torch.Generator().manual_seed(5)
    for name in zoo.ZOO:
        yield f"zoo-{name}", zoo.load(name), zoo.calib_set(16), zoo.test_set(32)[0]
    yield "mixed_scale", mixed_scale(), inputs(16, 1), inputs(16, 2)
    yield "with_dead_channel", with_dead_channel(), inputs(16, 1), inputs(16, 2)
    yield "overflow_net", overflow_net(), overflow_set(16, seed=1)[0], overflow_set(16, seed=2)[0]
    yield "gelu_net", gelu_net(), torch.randn(8, 3, 8, 8, generator=g), torch.randn(8, 3, 8, 8, generator=g)
    yield "wide", Wide().eval(), torch.randn(8, 3, 8, 8, generator=g), torch.randn(8, 3, 8, 8, generator=g)


NETS = list(_nets())


@pytest.mark.parametrize("policy", ["cann-force-fp16", "amct-fake-quant"])
@pytest.mark.parametrize("net", NETS, ids=[n[0] for n in NETS])
def test_planned_accumulation_equals_the_per_call_path_bit_for_bit(net, policy, monkeypatch):
    name, model, calib, x = net
    model.eval()
    cfg = default_config(model)
    graph = read_graph(model, (calib[:2],))
    v = build_variant(model, cfg, calibrate(model, calib, cfg, graph), graph)
    v.policy = policy
    fn = v.as_variant().prepare(model)
    orig = QuantLayer._accumulate
    seen = []

    def both(self, q, int_bias=True, own=False, centered=False, kept=None):
        monkeypatch.setattr(QuantLayer, "planned", False)
        ref, _ = orig(self, q.clone(), int_bias, centered=centered)
        x_codes = q if centered else q - self.offset_d          # centered: fused.codes took the offset off
        x_lo, x_hi = self.x_range
        assert x_lo <= float(x_codes.min()) and float(x_codes.max()) <= x_hi      # the plan premise, every call
        monkeypatch.setattr(QuantLayer, "planned", True)
        acc, bounded = orig(self, q, int_bias, own, centered, kept)
        assert torch.equal(acc.to(F64), ref.to(F64)), f"{name}: {self.name}"
        if bounded:
            assert float(ref.abs().max()) <= INT32_MAX
        seen.append((self.name, self.chunk_plan()))
        return acc, bounded

    monkeypatch.setattr(QuantLayer, "_accumulate", both)
    # the general path's _accumulate is what this compares; the lean call (which skips it) is compared with the
    # general path bit for bit in tests/test_quant_lean_call.py
    monkeypatch.setattr(M, "LEAN_CALL", False)
    y_planned = fn(x)
    assert seen, f"{name}: no INT8 layer ran"
    assert any(p is not None for _, p in seen)
    if name == "wide":
        assert any(p is not None and len(p) > 1 for _, p in seen), seen
    monkeypatch.setattr(QuantLayer, "_accumulate", orig)
    monkeypatch.setattr(QuantLayer, "planned", False)
    y_per_call = fn(x)
    assert torch.equal(y_planned, y_per_call)


def test_plan_bound_by_hand():
    # |x_code| <= 255 (offset -128): a channel of 3x3 weights 127 bounds at 255 * 9 * 127 = 291,465 per channel;
    # 2^24 / 291,465 = 57.56: 57 channels per chunk, 512 channels -> 9 chunks + 1 of 512 - 9 * 57 = 1
    codes = torch.full((4, 512, 3, 3), 127, dtype=torch.int8)
    plan = plan_chunks(codes, 255)
    assert len(plan) == 9 and all(c1 - c0 == 57 for c0, c1 in plan[:8]) and plan[-1] == (456, 512)
    assert plan_chunks(torch.full((4, 512, 3, 3), 1, dtype=torch.int8), 255) == ((0, 512),)
    # after a ReLU (x in [0, 255]) a partial sum is at most the positive or the negative weights times 255:
    # channels of alternating sign fill each bound half as fast -- 114 channels per chunk, 5 chunks, not 9
    alt = codes.clone()
    alt[:, 1::2] = -127
    relu = plan_chunks(alt, 255, x_lo=0)
    assert len(relu) == 5 and relu[0] == (0, 114) and relu[-1] == (456, 512)
    assert len(plan_chunks(alt, 255)) == 9
    # a grouped conv: its whole fan-in or nothing; a single channel past 2^24: no plan (the per-call path)
    assert plan_chunks(torch.full((8, 1, 3, 3), 127, dtype=torch.int8), 255, groups=8) == ((0, 1),)
    assert plan_chunks(torch.full((2, 1, 1000, 1), 127, dtype=torch.int16), 255) is None


def test_bias_inside_the_float32_conv_and_the_overflow_check_kept_when_it_can_happen():
    conv = nn.Conv2d(8, 4, 3, padding=1)
    codes = torch.randint(-128, 128, conv.weight.shape, generator=torch.Generator().manual_seed(0), dtype=torch.int8)
    q = torch.randint(-128, 128, (2, 8, 5, 5), generator=torch.Generator().manual_seed(1)).float()
    for bias in (torch.tensor([7, -3, 0, 1000]), torch.tensor([2 ** 24, 5, -(2 ** 30), 3])):
        layer = QuantLayer("c", ConvGeometry.of(conv), codes, torch.tensor([1.0]), 1.0, -128, bias_codes=bias)
        ref = nn.functional.conv2d((q + 128).double(), codes.double(), bias.double(), padding=1)
        acc, bounded = layer._accumulate(q)
        assert torch.equal(acc.to(F64), ref) and torch.equal(layer.accumulate(q), ref)
        assert acc.dtype == (torch.float32 if bias.abs().max() < 1000 + 1 else torch.float64)
        assert bounded
    layer = QuantLayer("c", ConvGeometry.of(conv), codes, torch.tensor([1.0]), 1.0, -128,
                       bias_codes=torch.tensor([2 ** 31, 0, 0, 0]))
    assert not layer._accumulate(q)[1]           # |acc| can pass 2^31 - 1: run() measures it
    back = pickle.loads(pickle.dumps(layer))     # Ray workers: the plan is not shipped, it is rebuilt
    assert "_plan" not in back.__dict__ or back.__dict__["_plan"] is not None
    assert back.chunk_plan() == layer.chunk_plan() and torch.equal(back.accumulate(q), layer.accumulate(q))


def test_split_bounds_equal_the_channel_bounds_and_the_plans(monkeypatch):
    """modes.SPLIT_BOUNDS: the bounds from the codes' positive / negative window sums (kept per codes content) times
    the input range's ends equal _channel_bounds' for every shape with a window > 1, code width and range, and so
    do the plans; one set of codes with another range is planned from the kept sums. A window of 1 (Linear, 1x1)
    is not taken: its sums would be as large as its codes for a ~2x gain."""
    from opkit.quant import modes as M
    monkeypatch.setattr(M, "_SIGN_SUMS", M.BoundedCache(512, M.MAX_SIGN_SUMS_BYTES))
    g = torch.Generator().manual_seed(8)
    shapes = [(8, 4, 3), (8, 4, 3, 3), (4, 2, 3, 3, 3), (16, 1, 3, 3), (64, 512, 3, 3)]
    ranges = [(-128, 127), (-255, 0), (0, 255), (-3, 252), (-32768, 32767), (5, 9), (-9, -5)]
    for shape in shapes:
        for bits in (8, 16):
            hi = (1 << (bits - 1)) - 1
            codes = torch.randint(-hi - 1, hi + 1, shape, generator=g).to(torch.int8 if bits == 8 else torch.int16)
            codes.view(-1)[:3] = 0                       # zeros: the sign of a zero sum is the one difference
            codes.view(-1)[3] = -hi - 1                  # the dtype's minimum, whose abs() wraps
            content = (codes.dtype, shape, codes.numpy().tobytes())
            for lo, up in ranges:
                want = M._channel_bounds(codes, up, lo)
                got = M._split_bounds(codes, up, lo, content)
                assert got is not None
                assert all(torch.equal(a, b) for a, b in zip(got, want)), (shape, bits, lo, up)
                for groups in (1, 2) if shape[0] % 2 == 0 and len(shape) > 2 else (1,):
                    assert plan_chunks(codes, up, groups, lo, bounds=got) == plan_chunks(codes, up, groups, lo,
                                                                                          bounds=want)
            peak, pos, neg = M._SIGN_SUMS.get(content)
            assert peak == hi + 1 and pos.dtype == neg.dtype == torch.int32     # kept as int32, exact
    assert M._split_bounds(codes, 0, 5, content) is None           # an empty range: the old path
    wide = torch.full((2, 2, 3), 127, dtype=torch.int16)
    assert M._split_bounds(wide, 2 ** 46, -1, ("w",)) is None        # products that could pass 2^52
    n = len(M._SIGN_SUMS)
    for shape in ((6, 5), (6, 5, 1), (6, 5, 1, 1)):                  # window 1: the old path, nothing kept
        linear = torch.randint(-128, 128, shape, generator=g).to(torch.int8)
        assert M._split_bounds(linear, 127, -128, ("lin", shape)) is None
    assert len(M._SIGN_SUMS) == n


def test_split_bounds_guard_reads_the_dtype_minimum(monkeypatch):
    """The 2^52 guard takes max|w| from the codes' min and max: int16 -32768 (whose abs() is -32768) with a
    +-2^37 input range over a window of 2 can reach 2^53, so the old path is taken."""
    from opkit.quant import modes as M
    monkeypatch.setattr(M, "_SIGN_SUMS", M.BoundedCache(8))
    codes = torch.tensor([[[-32768, 1]]], dtype=torch.int16)
    assert M._split_bounds(codes, 2 ** 37, -2 ** 37, ("min",)) is None
    assert M._split_bounds(codes, 2 ** 35, -2 ** 35, ("min",)) is not None     # 2^51: below the guard


def test_sign_sums_are_bounded_in_bytes(monkeypatch):
    """The kept sums drop their oldest entries past the byte bound (a process quantizing many models does not
    keep every one's sums), and are computed again, equal, when asked after."""
    from opkit.quant import modes as M
    g = torch.Generator().manual_seed(10)
    sets = [torch.randint(-128, 128, (16, 32, 3, 3), generator=g).to(torch.int8) for _ in range(4)]
    one = 2 * 16 * 32 * 4                                            # P and N, int32
    monkeypatch.setattr(M, "_SIGN_SUMS", M.BoundedCache(512, 2 * one))
    for i, c in enumerate(sets):
        M._split_bounds(c, 127, -128, ("set", i))
    assert len(M._SIGN_SUMS) == 2 and M._SIGN_SUMS.nbytes == 2 * one
    assert ("set", 0) not in M._SIGN_SUMS and ("set", 3) in M._SIGN_SUMS
    again = M._split_bounds(sets[0], 127, -128, ("set", 0))
    assert all(torch.equal(a, b) for a, b in zip(again, M._channel_bounds(sets[0], 127, -128)))


def test_plan_of_with_split_bounds_equals_without(monkeypatch):
    from opkit.quant import modes as M
    g = torch.Generator().manual_seed(9)
    codes = torch.randint(-128, 128, (32, 256, 3, 3), generator=g).to(torch.int8)
    other = torch.randint(-128, 128, (32, 256, 3, 3), generator=g).to(torch.int8)      # same shape, other codes
    bias = torch.randint(-10 ** 6, 10 ** 6, (32,), generator=g)
    answers = {}
    for split in (True, False):
        monkeypatch.setattr(M, "SPLIT_BOUNDS", split)
        monkeypatch.setattr(M, "_PLANS", M.BoundedCache(M.MAX_PLANS))
        monkeypatch.setattr(M, "_SIGN_SUMS", M.BoundedCache(512, M.MAX_SIGN_SUMS_BYTES))
        monkeypatch.setattr(M, "_PLAN_OF_TENSOR", M.TensorMemo())
        answers[split] = [M._plan_of(c.clone(), (-128 - o, 127 - o), 1, bias) for c in (codes, other)
                          for o in (-128, -20, 0, 90)]
        assert len(M._SIGN_SUMS) == (2 if split else 0)             # two codes contents: their sums made once each
    assert answers[True] == answers[False]
