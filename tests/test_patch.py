"""opkit.patch / unpatch on real opkit ops (opkit.load()): what is swapped, state kept, outputs within the
fp32 standard, reversibility, user mappings, the naive variant."""
from __future__ import annotations

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import opkit
from opkit.patching import CannotPatch, OpkitModule, register_mapping
from opkit.patching import LayerNorm as OpkitLayerNorm
from opkit.errors import OpkitError
from opkit.harness.metrics import compare
from opkit.opspec.standard import thresholds


@pytest.fixture(scope="module", autouse=True)
def _loaded(bundled_ops):
    return bundled_ops


class ChannelsFirstLN(nn.Module):
    """LayerNorm over dim 1 as ConvNeXt code writes it (mean/var by hand, data_format attr)."""

    def __init__(self, c: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(c))
        self.bias = nn.Parameter(torch.randn(c))
        self.eps = eps
        self.data_format = "channels_first"

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class Net(nn.Module):
    """Every built-in mapping once, plus modules patch must leave alone."""

    def __init__(self, c: int = 37):
        super().__init__()
        self.conv = nn.Conv2d(3, c, 3, stride=3)
        self.cln = ChannelsFirstLN(c)
        self.fc1 = nn.Linear(c, 3 * c)
        self.ln = nn.LayerNorm(3 * c)
        self.gelu = nn.GELU()
        self.fc2 = nn.Linear(3 * c, c)
        self.gelu_tanh = nn.GELU(approximate="tanh")
        self.silu = nn.SiLU()
        self.rms = nn.RMSNorm(c, eps=1e-6)
        self.ln_plain = nn.LayerNorm(c, elementwise_affine=False)
        self.ln_2d = nn.LayerNorm([5, c])                   # two trailing dims: flattened into one row
        self.bn = nn.BatchNorm1d(5)                         # no mapping: reported, kept
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x):
        x = self.cln(self.conv(x))                          # N, C, 5, 5
        x = x.permute(0, 2, 3, 1).flatten(1, 2)             # N, 25, C
        x = self.fc2(self.gelu(self.ln(self.fc1(x))))
        x = self.rms(self.silu(self.gelu_tanh(x)))
        x = self.ln_plain(x).reshape(x.shape[0], 5, 5, -1).flatten(0, 1)      # N*5, 5, C
        x = self.ln_2d(x)
        return self.softmax(x * 4)


def _net(seed=0):
    torch.manual_seed(seed)
    net = Net().eval()
    with torch.no_grad():   # LayerNorm params away from the trivial ones/zeros
        for m in net.modules():
            if isinstance(m, (nn.LayerNorm, nn.RMSNorm)) and m.weight is not None:
                m.weight.normal_(1, 0.2)
                if getattr(m, "bias", None) is not None:
                    m.bias.normal_(0, 0.2)
    return net


def _x(seed=1, n=2):
    return torch.randn(n, 3, 15, 15, generator=torch.Generator().manual_seed(seed)) * 3 + 1


EXPECTED = {"cln": "layer_norm_fp32", "ln": "layer_norm_fp32", "gelu": "gelu_fp32", "gelu_tanh": "gelu_fp32",
            "silu": "silu_fp32", "rms": "rms_norm_fp32", "ln_plain": "layer_norm_fp32",
            "ln_2d": "layer_norm_fp32", "softmax": "softmax_fp32"}


def test_swaps_and_reports():
    net = _net()
    rep = opkit.patch(net)
    assert {p: op for p, _, op in rep.swapped} == EXPECTED
    assert rep.not_swapped_paths == ["bn"] and "no opkit mapping for BatchNorm1d" in rep.not_swapped[0][2]
    for path, op in EXPECTED.items():
        m = getattr(net, path)
        assert isinstance(m, OpkitModule) and m.op is getattr(torch.ops.opkit, op)
    assert isinstance(net.conv, nn.Conv2d) and isinstance(net.bn, nn.BatchNorm1d)
    assert "swapped" in str(rep) and "ln_2d" in str(rep)


def test_state_dict_identical_and_same_parameters():
    net = _net()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    params = dict(net.named_parameters())
    opkit.patch(net)
    after = net.state_dict()
    assert list(after) == list(before)
    for k in before:
        assert torch.equal(after[k], before[k]), k
    assert {k: id(p) for k, p in net.named_parameters()} == {k: id(p) for k, p in params.items()}
    net.load_state_dict(before)             # loads into the patched model with the original keys


def test_fp32_output_within_fp32_standard():
    net = _net()
    x = _x()
    with torch.no_grad():
        gold = copy.deepcopy(net).double()(x.double())
        opkit.patch(net)
        out = net(x)
    assert out.dtype == torch.float32
    res = compare(out, gold, thresholds("float32"))
    assert res["passed"], res["reason"]
    assert res["mere"] < 2 ** -13 and res["mare"] < 10 * 2 ** -13


@pytest.mark.parametrize("shape", [(4, 77), (2, 3, 1000)])
def test_each_module_alone_within_fp32_standard(shape):
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(3)) * 50 + 200
    c = shape[-1]
    for module in (nn.LayerNorm(c), nn.RMSNorm(c), nn.Softmax(-1), nn.Softmax(0), nn.GELU(), nn.GELU("tanh"),
                   nn.SiLU()):
        holder = nn.Sequential(module)
        with torch.no_grad():
            gold = copy.deepcopy(holder).double()(x.double())
            rep = opkit.patch(holder)
            out = holder(x)
        assert len(rep.swapped) == 1, rep
        res = compare(out, gold, thresholds("float32"))
        assert res["passed"], f"{module}: {res['reason']}"


def test_channels_first_layer_norm_matches():
    m = nn.Sequential(ChannelsFirstLN(19))
    x = torch.randn(2, 19, 6, 7) * 100 + 300
    with torch.no_grad():
        gold = copy.deepcopy(m).double()(x.double())
        opkit.patch(m)
        out = m(x)
    assert out.shape == x.shape
    res = compare(out, gold, thresholds("float32"))
    assert res["passed"], res["reason"]


def test_dry_run_changes_nothing():
    net = _net()
    mods = dict(net.named_children())
    rep = opkit.patch(net, dry_run=True)
    assert rep.dry_run and set(rep.swapped_paths) == set(EXPECTED)
    assert dict(net.named_children()) == mods
    assert "would swap" in str(rep)


def test_unpatch_restores_originals():
    net = _net()
    x = _x()
    with torch.no_grad():
        ref = net(x)
    mods = dict(net.named_children())
    opkit.patch(net)
    restored = opkit.unpatch(net)
    assert sorted(restored) == sorted(EXPECTED)
    assert all(getattr(net, k) is v for k, v in mods.items())
    with torch.no_grad():
        assert torch.equal(net(x), ref)


def test_ops_filter_and_unpatchable_modules():
    class MyLN(nn.LayerNorm):            # own forward: maths unknown -> kept
        def forward(self, x):
            return super().forward(x) * 2

    class PlainLN(nn.LayerNorm):         # only __init__ differs -> same maths -> swapped
        pass

    m = nn.Sequential(nn.LayerNorm(8), nn.GELU(), nn.Softmax(), MyLN(8), PlainLN(8))
    rep = opkit.patch(m, ops=["gelu_fp32"])
    why = {p: r for p, _, r in rep.not_swapped}
    assert rep.swapped_paths == ["1"]
    assert "not in ops=" in why["0"] and "not in ops=" in why["4"]
    assert "dim=None" in why["2"]
    assert "own forward" in why["3"]
    rep = opkit.patch(m)
    assert sorted(rep.swapped_paths) == ["0", "4"]
    assert "already patched" in dict((p, r) for p, _, r in rep.not_swapped)["1"]


def test_shared_module_stays_shared_and_hooks_fire():
    ln = nn.LayerNorm(8)
    calls = []
    ln.register_forward_hook(lambda mod, inp, out: calls.append(out.shape))
    m = nn.Sequential(ln, nn.Linear(8, 8), ln)
    opkit.patch(m)
    assert m[0] is m[2] and isinstance(m[0], OpkitLayerNorm)
    m(torch.randn(3, 8))
    assert calls == [torch.Size([3, 8])] * 2


def test_register_mapping_user_module():
    class Swish(nn.Module):              # a user's activation: x * sigmoid(beta x), beta learnable
        def __init__(self):
            super().__init__()
            self.beta = nn.Parameter(torch.tensor(1.0))

        def forward(self, x):
            return x * torch.sigmoid(self.beta * x)

    class OpkitSwish(nn.Module):
        opkit_op = "silu_fp32"

        def __init__(self, original, ops):
            super().__init__()
            self.beta = original.beta
            self.silu = ops.silu_fp32

        def forward(self, x):            # x * sigmoid(b x) = silu(b x) / b
            return self.silu(self.beta * x) / self.beta

    def factory(module, ops):
        if module.beta.item() == 0:
            raise CannotPatch("beta == 0")
        return OpkitSwish(module, ops)

    register_mapping(Swish, factory)
    m = nn.Sequential(nn.Linear(4, 6), Swish(), Swish())
    with torch.no_grad():
        m[2].beta.zero_()
        x = torch.randn(5, 4)
        ref = m(x)
        rep = opkit.patch(m)
        out = m(x)
    assert rep.swapped_paths == ["1"] and rep.not_swapped == [("2", "Swish", "beta == 0")]
    assert isinstance(m[1], OpkitSwish) and list(m.state_dict()) == ["0.weight", "0.bias", "1.beta", "2.beta"]
    torch.testing.assert_close(out, ref)
    assert opkit.unpatch(m) == ["1"] and isinstance(m[1], Swish)

    class Bad(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(2))

    register_mapping(Bad, lambda mod, ops: nn.Linear(2, 2))
    with pytest.raises(OpkitError, match="changes state_dict keys"):
        opkit.patch(nn.Sequential(Bad()))
    with pytest.raises(OpkitError, match="nn.Module subclass"):
        register_mapping(int, factory)


def test_naive_variant_uses_opkit_naive_namespace():
    net = _net()
    rep = opkit.patch(net, variant="naive")
    assert rep.variant == "naive" and set(rep.swapped_paths) == set(EXPECTED)
    assert net.ln.op is torch.ops.opkit_naive.layer_norm_fp32
    x = _x()
    with torch.no_grad():
        out32 = net(x)
        gold = copy.deepcopy(_net()).double()(x.double())
    # in fp32 the naive kernels compute in fp32 too: same standard holds
    assert compare(out32, gold, thresholds("float32"))["passed"]
    with pytest.raises(OpkitError, match="variant"):
        opkit.patch(net, variant="fast")


def test_patched_model_trains_and_unpatch_keeps_learned_weights():
    net = _net()
    opkit.patch(net)
    net.train()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x = _x()
    target = torch.rand(10, 5, 37).softmax(-1)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = F.mse_loss(net(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert net.ln.weight.grad is not None and net.cln.weight.grad is not None
    w = net.ln.weight.detach().clone()
    opkit.unpatch(net)
    assert isinstance(net.ln, nn.LayerNorm) and torch.equal(net.ln.weight, w)
