"""The harness's case matrix: coverage of dtypes, edge shapes, distributions; determinism; ids."""
import math
import re

import pytest
import torch

from harness_standins import write_op
from opkit.harness.cases import CORES_910B, build_matrix, make_inputs
from opkit.opspec import load_spec


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    return load_spec(write_op(tmp_path_factory.mktemp("ws")))


def lead(c):
    return c.shapes["x"]


def test_ids_are_readable_and_unique(spec):
    cases = build_matrix(spec, "default")
    names = [c.name for c in cases]
    assert len(names) == len(set(names))
    assert "layer_norm_fp32[fp16-64x1000-offset200]" in names
    assert "layer_norm_fp32[fp32-64x1000-offset1000]" in names
    assert "layer_norm_fp32[bf16-64x1000-scale50]" in names
    # pytest -k identifiers: letters, digits, -, [, ], x, _ only
    assert all(re.fullmatch(r"[\w\[\]\-.]+", n) for n in names)


def test_default_matrix_covers_dtypes_edges_and_distributions(spec):
    cases = build_matrix(spec, "default")
    assert {c.dtype for c in cases} == {"float16", "bfloat16", "float32"}
    for dt in ("float16", "bfloat16", "float32"):
        cs = [c for c in cases if c.dtype == dt]
        shapes = {lead(c) for c in cs}
        item = 2 if dt != "float32" else 4
        assert any(math.prod(s) == 1 for s in shapes), "one element"
        assert any(math.prod(s) * item < 32 for s in shapes), "fewer than 32 bytes"
        assert any(s[-1] % 16 and s[-1] % 8 for s in shapes), "last dim not a multiple of 16 nor 8"
        assert any(math.prod(s[:-1]) % CORES_910B and math.prod(s[:-1]) > CORES_910B for s in shapes), "rows % 48"
        assert any(math.prod(s[:-1]) < CORES_910B for s in shapes), "fewer rows than cores"
        assert any(s[-1] == 16384 for s in shapes), "largest declared row length"
        per256 = 256 // item
        assert {per256 - 1, per256 + 1} <= {s[-1] for s in shapes}, "one less/more than a 256-byte tile"
        assert {c.distribution for c in cs} == {"normal", "offset", "scale50", "scale", "tiny", "mixed", "special"}
        # the core shapes (explicit, tail, rows % 48) see every distribution
        tail = [c for c in cs if c.kind == "edge:tail"]
        assert len({c.distribution for c in tail}) == 7


def test_shapes_respect_declared_ranges_and_cap(spec):
    for mode in ("quick", "default", "full"):
        for c in build_matrix(spec, mode):
            s = lead(c)
            assert 1 <= s[-1] <= 16384 or c.kind == "explicit"
            assert 1 <= math.prod(s[:-1]) <= 4096
            assert math.prod(s) <= spec.tests.max_numel
            assert c.shapes["weight"] == (s[-1],) == c.shapes["bias"]
            if mode != "full":
                assert math.prod(s) <= 1 << 20


def test_quick_is_a_small_subset_and_full_a_superset(spec):
    quick, default, full = (build_matrix(spec, m) for m in ("quick", "default", "full"))
    assert len(quick) < len(default) < len(full)
    assert len(quick) <= 63          # 45 + special values in weight and in bias: 3 shapes x 3 dtypes each
    assert {c.id for c in quick} <= {c.id for c in full}
    assert {c.distribution for c in quick} >= {"normal", "scale50", "offset", "special"}
    for dt in ("float16", "bfloat16", "float32"):        # every dtype meets the special values in --quick
        assert any(c.dtype == dt and c.distribution == "special" for c in quick), dt


def test_deterministic_and_seeded(spec):
    a, b = build_matrix(spec, "default", seed=0), build_matrix(spec, "default", seed=0)
    assert [(c.id, c.seed) for c in a] == [(c.id, c.seed) for c in b]
    c = build_matrix(spec, "default", seed=7)
    assert [x.seed for x in a] != [x.seed for x in c]
    assert {x.id for x in a if x.kind == "random"} != {x.id for x in c if x.kind == "random"}
    x1, x2 = make_inputs(spec, a[0]), make_inputs(spec, b[0])
    assert all(torch.equal(p, q) for p, q in zip(x1, x2))


def test_input_values_follow_distribution_and_roles(spec):
    cases = {c.id: c for c in build_matrix(spec, "default")}
    x, w, b = make_inputs(spec, cases["fp16-64x1000-offset200"])
    assert x.dtype == w.dtype == b.dtype == torch.float16
    assert 190 < x.float().mean() < 210 and x.float().abs().min() >= 100      # |x| >= 100
    assert 0.8 < w.float().mean() < 1.2 and 0.3 < w.float().std() < 0.7       # weight ~ N(1, 0.5)
    assert abs(b.float().mean()) < 0.1 and 0.3 < b.float().std() < 0.7        # bias ~ N(0, 0.5)
    x, _, _ = make_inputs(spec, cases["fp16-64x1000-scale1e4"])
    assert 3e4 < x.float().abs().max() < 65504                                # near the fp16 range, finite
    x, _, _ = make_inputs(spec, cases["fp32-64x1000-tiny"])
    assert x.abs().max() < 2.0 ** -20 * 6
    x, _, _ = make_inputs(spec, cases["bf16-64x1000-special"])
    xf = x.float()
    assert torch.isnan(xf[0]).any() and (xf[1] == float("inf")).any() and (xf[2] == float("-inf")).any()
    row = xf[3]
    assert (row == 0).any() and ((row != 0) & (row.abs() < torch.finfo(torch.bfloat16).tiny)).any()  # subnormals
    assert torch.isfinite(xf[4:]).all()


def test_special_values_in_every_mode_declared_or_not(tmp_path):
    from harness_standins import OP_YAML
    spec = load_spec(write_op(tmp_path, op_yaml=OP_YAML.replace(", special]", "]")))
    for mode in ("quick", "default", "full"):
        got = {c.dtype for c in build_matrix(spec, mode) if c.distribution == "special"}
        assert got == {"float16", "bfloat16", "float32"}, mode


def test_special_values_reach_every_floating_input_in_cases_of_their_own(spec):
    cases = {c.id: c for c in build_matrix(spec, "default")}
    for cid, carrier in (("fp32-64x1000-special", 0), ("fp32-64x1000-special-weight", 1),
                         ("fp32-64x1000-special-bias", 2)):
        inputs = make_inputs(spec, cases[cid])
        for k, t in enumerate(inputs):
            v = t.reshape(-1, t.shape[-1])
            if k == carrier:
                assert torch.isnan(v).any() and (v == float("inf")).any() and (v == float("-inf")).any(), cid
            else:
                assert torch.isfinite(v).all(), (cid, k)
    x = make_inputs(spec, cases["fp32-64x1000-special"])[0]
    assert {tuple(i) for i in (~torch.isfinite(x)).nonzero().tolist()} == {(0, 500), (1, 0), (2, 999)}
    w = make_inputs(spec, cases["fp32-64x1000-special-weight"])[1]
    assert {i[0] for i in (~torch.isfinite(w)).nonzero().tolist()} == {1, 3, 5}
    # a second data input is moved by 4 rows and 3 odd columns (plant_specials turn 1)
    from opkit.opspec.distributions import plant_specials
    z = plant_specials(torch.zeros(8, 9, dtype=torch.float64), "float32", turn=1)
    assert {tuple(i) for i in (~torch.isfinite(z)).nonzero().tolist()} == {(4, 5), (5, 1), (6, 0)}
    z = plant_specials(torch.zeros(1, 9, dtype=torch.float64), "float32", turn=1)
    assert {tuple(i) for i in (~torch.isfinite(z)).nonzero().tolist()} == {(0, 7), (0, 1), (0, 3)}


def test_attr_variants_for_choices(tmp_path):
    yaml_text = """\
op: GeluFP32
family: elementwise
inputs:
  - name: x
    dtypes: [float16, float32]
    shape: [..., C]
outputs:
  - name: y
    dtype: x
    shape: x
attrs:
  - {name: approximate, type: str, default: none, choices: [none, tanh]}
tests:
  dims: {"...": [1, 64], C: [1, 512]}
  distributions: [normal, scale]
"""
    spec = load_spec(write_op(tmp_path, "gelu_fp32", op_yaml=yaml_text))
    cases = build_matrix(spec, "default")
    assert {c.attrs["approximate"] for c in cases} == {"none", "tanh"}
    assert any(c.id.endswith("-tanh") for c in cases)


@pytest.mark.parametrize("shape, planted", [((1000,), 3), ((3, 7), 3), ((1, 5), 2), ((2,), 1), ((1,), 1), ((3, 1), 3)])
def test_special_values_reach_1d_and_few_row_inputs(shape, planted):
    """NaN, +inf, -inf (in that order, as many as fit on odd columns) and +-0/subnormals on even ones."""
    from opkit.opspec.distributions import draw
    x = draw("special", "float16", shape, torch.Generator().manual_seed(0)).to(torch.float16).float()
    got = [bool(torch.isnan(x).any()), bool((x == float("inf")).any()), bool((x == float("-inf")).any())]
    assert got == [True] * planted + [False] * (3 - planted)
    if shape[-1] > 1:       # one column: the specials only
        assert (x.reshape(-1, shape[-1])[0, 0::2] == 0).any()


def test_distribution_registry_is_the_one_list():
    """op.yaml's allowed names, the ids/markers and the sampler all come from distributions.REGISTRY."""
    from opkit.opspec.distributions import DECLARABLE, REGISTRY, all_tags, expand
    from opkit.opspec import TestSpec
    assert TestSpec(dims={}).distributions == DECLARABLE
    assert "scale50" in REGISTRY and "scale50" not in DECLARABLE
    assert expand(["normal", "scale"], "default") == ["normal", "scale50", "scale", "special"]
    assert expand(["normal", "scale", "special"], "quick") == ["normal", "scale50", "special"]
    assert expand(["normal"], "default") == ["normal", "special"]     # every op meets the special values
    assert {"offset200", "offset1000", "scale1e4", "scale1e6"} <= set(all_tags(["float16", "float32"]))


LEAKY = """\
op: LeakyReluFP32
family: elementwise
inputs:
  - name: x
    dtypes: [float16, float32]
    shape: [...]
outputs:
  - {name: y, dtype: x, shape: x}
attrs:
  - {name: negative_slope, type: float, default: 0.01}
tests:
  dims: {"...": [1, 100000]}
"""


def test_float_attr_gets_three_values_and_1d_inputs_get_special_values(tmp_path):
    spec = load_spec(write_op(tmp_path, "leaky_relu_fp32", op_yaml=LEAKY))
    cases = build_matrix(spec, "default")
    assert {c.attrs["negative_slope"] for c in cases} == {0.01, 0.1, 0.001}
    special_1d = [c for c in cases if c.distribution == "special" and len(c.lead_shape) == 1 and c.lead_shape[0] >= 6]
    assert len(special_1d) >= 3
    for c in special_1d:
        x = make_inputs(spec, c)[0].float()
        assert torch.isnan(x).any() and (x == float("inf")).any() and (x == float("-inf")).any()
    assert not any("rows" in c.kind for c in cases) and any(c.kind == "edge:numel%48" for c in cases)


def test_tests_attrs_lists_the_values_and_dim_variants_cover_every_dim(tmp_path):
    spec = load_spec(write_op(tmp_path, "leaky_relu_fp32", op_yaml=LEAKY + "  attrs: {negative_slope: [0.2, -1.0]}\n"))
    cases = build_matrix(spec, "default")
    assert {c.attrs["negative_slope"] for c in cases} == {0.01, 0.2, -1.0}
    assert any(c.id.endswith("-negative_slope-1") for c in cases)
    reduce = load_spec(write_op(tmp_path, "reduce_sum_fp32", op_yaml=REDUCE))
    seen = {(len(c.lead_shape), c.attrs["dim"], c.attrs["keepdim"]) for c in build_matrix(reduce, "default")}
    assert {(2, -1, False), (2, 0, False), (2, -1, True), (3, 0, False), (3, 1, False), (3, -1, False)} <= seen
    bad = LEAKY + "  attrs: {negative_slope: [fast]}\n"
    with pytest.raises(Exception, match=r"tests.attrs.negative_slope\[0\]: 'fast' is a string; expected a float"):
        load_spec(write_op(tmp_path / "bad", "leaky_relu_fp32", op_yaml=bad))


REDUCE = """\
op: ReduceSumFP32
family: reduce
inputs:
  - {name: x, dtypes: [float32], shape: [..., C]}
outputs:
  - {name: y, dtype: x, shape: "reduce(x, dim, keepdim)"}
attrs:
  - {name: dim, type: int, default: -1, role: dim}
  - {name: keepdim, type: bool, default: false, role: keepdim}
tests:
  dims: {"...": [1, 4096], C: [1, 4096]}
  shapes: [[64, 100], [3, 5, 77]]
"""
