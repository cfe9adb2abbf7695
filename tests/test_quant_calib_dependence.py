"""Issue 37 (q14): what one layer's calibration depends on, and that one run's IFMR memo searches once per
distinct input. AMCT's calibration graph runs every quantized layer on ARQ fake-quantized weights and float
activations (docs/quant.md, "What a layer's calibration depends on"), so a layer's record changes with the weight
state of the layers upstream of it and with its own config, and with nothing else in the config: a change to a
layer leaves the layers that do not read its output searched once. Records with the memo must equal records without
it, bit for bit, on variants whose upstream layers differ."""
import torch
import torch.nn as nn

from opkit.accuracy.policy import load_policy
from opkit.quant import calibrate as C
from opkit.quant.builder import Deploy, VariantBuilder
from opkit.quant.config import default_config


class Branches(nn.Module):
    """a feeds b and c; d reads both. c runs after b but does not read it."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.a, self.b, self.c, self.d = nn.Linear(8, 16), nn.Linear(16, 16), nn.Linear(16, 16), nn.Linear(32, 4)

    def forward(self, x):
        h = torch.relu(self.a(x))
        return self.d(torch.cat([torch.relu(self.b(h)), torch.relu(self.c(h))], 1))


def _act_param(cfg, name, key, value):
    """``cfg`` with one activation parameter of one layer changed: activations pass the calibration graph in
    float, so no other layer's input changes."""
    c = cfg.copy()
    c.layers[name].act[key] = value
    return c


def _act(r):
    return (r.scale_d, r.offset_d, r.clip_min, r.clip_max, r.data_min, r.data_max)


def test_memo_searches_once_per_distinct_input_and_equals_uncached_records():
    m = Branches().eval()
    x = torch.randn(16, 8, generator=torch.Generator().manual_seed(4))
    b = VariantBuilder(m, x, Deploy(load_policy("amct-fake-quant")), lambda s: None)
    cfg = default_config(m)
    base = b.records(cfg)
    assert (b.ifmr.hits, b.ifmr.misses) == (1, 3)             # b and c read the same tensor: one search
    # (config, layers whose activation record equals the base calibration's, IFMR searches the config adds)
    variants = [(cfg.with_float(["b"]), {"a", "c"}, 1),       # b float: only d reads b's output
                (_act_param(cfg, "b", "asymmetric", False), {"a", "c", "d"}, 1),   # b's own search only
                (cfg.with_dmq(0.5, ["b"]), {"a", "c"}, 2),    # DMQ divides b's own input by its factor
                (cfg.with_float(["a"]), set(), 2)]            # every layer reads a (b and c still share)
    for v, same, searched in variants:
        hits, misses = b.ifmr.hits, b.ifmr.misses
        recs = b.records(v)
        assert recs == C.calibrate(m, x, v, b.graph)          # without the memo: IFMR on every layer
        assert b.ifmr.misses - misses == searched
        assert b.ifmr.hits - hits == len(v.quant_layers) - searched
        for n in v.quant_layers:
            assert (_act(recs[n]) == _act(base[n])) == (n in same), n
