"""op.yaml loading: valid specs load; every error names file:line, the field and what was expected."""
from pathlib import Path

import pytest

from opkit.errors import SpecError
from opkit.opspec import load_spec, parse_spec
from opkit.workspace import bundled_entries

GOOD = """\
op: LayerNormFP32
family: norm
summary: test
inputs:
  - name: x
    dtypes: [float16, bfloat16, float32]
    shape: [..., C]
  - name: weight
    shape: [C]
    values: weight
  - name: bias
    shape: [C]
    values: bias
outputs:
  - name: y
    dtype: x
    shape: x
attrs:
  - name: eps
    type: float
    default: 1.0e-5
compute_dtype: float32
backward:
  op: layer_norm_fp32_backward
  args: [grad.y, x, weight, attr.eps]
  grads: {x: dx, weight: dweight, bias: dbias}
tests:
  dims: {"...": [1, 4096], C: [1, 16384]}
  max_numel: 4000000
  shapes: [[64, 1000]]
  distributions: [normal, offset]
accuracy:
  standard: mere_mare
  overrides: {bfloat16: {threshold: 0.0078125}}
"""


def parse(text, name="op.yaml"):
    return parse_spec(text, Path("/ws/ops/x") / name)


def line_of(text, needle):
    return next(i for i, l in enumerate(text.splitlines(), 1) if needle in l)


def test_good_spec_loads_into_dataclasses(tmp_path):
    (tmp_path / "op.yaml").write_text(GOOD)
    s = load_spec(tmp_path)
    assert (s.name, s.snake, s.family) == ("LayerNormFP32", "layer_norm_fp32", "norm")
    assert s.inputs[0].shape == ("...", "C") and s.dtypes == ("float16", "bfloat16", "float32")
    assert s.inputs[1].values == "weight" and s.attrs[0].default == 1e-5
    assert s.tests.dims == {"...": (1, 4096), "C": (1, 16384)} and s.tests.shapes == ((64, 1000),)
    assert s.accuracy.overrides == {"bfloat16": {"threshold": 0.0078125}}
    assert s.backward.grads == {"x": "dx", "weight": "dweight", "bias": "dbias"}
    assert s.dir == tmp_path.resolve()
    assert s.schema() == "layer_norm_fp32(Tensor x, Tensor weight, Tensor bias, float eps=1e-05) -> Tensor"


@pytest.mark.parametrize("old, new, field, expected", [
    ("type: float", "type: flot", "attrs[0].type", "expected one of: float, int, bool, str"),
    ("    values: weight", "    values: wieght", "inputs[1].values", "expected one of: data, weight"),
    ("    dtype: x", "    dtype: z", "outputs[0].dtype", "neither an input"),
    ("op: LayerNormFP32", "op: layer_norm", "op", "CamelCase"),
    ("family: norm", "family: norms", "family", "expected one of: norm, softmax"),
    ("    default: 1.0e-5", "    default: yes", "attrs[0].default", "expected a float"),
    ("  max_numel: 4000000", "  max_numel: -3", "tests.max_numel", ">= 1"),
    ("  shapes: [[64, 1000]]", "  shapes: [[64, x]]", "tests.shapes[0][1]", "expected a dim size"),
    ("C: [1, 16384]}", "C: [100, 1]}", "tests.dims.C", "1 <= min <= max"),
    ("  distributions: [normal, offset]", "  distributions: [normal, gaussian]", "tests.distributions[1]",
     "expected one of"),
    ("{threshold: 0.0078125}", "{rtol: 0.0078125}", "accuracy.overrides.bfloat16.rtol",
     "unknown accuracy setting 'rtol'; expected one of threshold, mare_ratio"),
    ("  standard: mere_mare", "  standard: strict", "accuracy.standard", "mere_mare, bit_exact"),
    ("grad.y, x", "grad.z, x", "backward.args[0]", "names nothing"),
    ("compute_dtype: float32", "compute_dtype: float64", "compute_dtype", "expected one of"),
    ("    shape: [C]\n    values: weight", "    shape: [C]\n    dtypes: [float16]\n    values: weight",
     "inputs[1].dtypes", "only the first (lead) input lists dtypes"),
    ("summary: test", "summary: test\nsumary: typo", "sumary", "unknown field"),
])
def test_errors_name_file_line_field_and_expectation(old, new, field, expected):
    assert old in GOOD
    text = GOOD.replace(old, new, 1)
    with pytest.raises(SpecError) as info:
        parse(text)
    msg = str(info.value)
    first = msg.splitlines()[0]
    needle = new.splitlines()[-1].strip() if "\n" in new else new.strip()
    if field == "inputs[1].dtypes":
        needle = "dtypes: [float16]"
    assert first.startswith(f"/ws/ops/x/op.yaml:{line_of(text, needle)}: {field}: "), msg
    assert expected in first, msg


def test_missing_required_fields_and_dim_ranges():
    text = GOOD.replace("C: [1, 16384]", "D: [1, 5]")
    with pytest.raises(SpecError) as info:
        parse(text)
    assert "tests.dims: no range for shape dim 'C'" in str(info.value)
    assert "dim 'D' appears in no input shape" in str(info.value)
    with pytest.raises(SpecError, match=r"op.yaml:1: outputs: missing required field 'outputs'"):
        parse("op: Foo\ninputs: [{name: x, dtypes: [float32], shape: [N]}]\ntests: {dims: {N: [1, 2]}}\n")


def test_yaml_syntax_error_and_empty_file():
    with pytest.raises(SpecError, match=r"op.yaml:3: <document>: not valid YAML: mapping values are not allowed"):
        parse("op: Foo\nfamily: norm\nsummary: a: b\n")
    with pytest.raises(SpecError, match="the file is empty"):
        parse("")


def test_reduce_shape_rule_needs_role_attrs():
    text = (GOOD.replace("    shape: x\n", "    shape: reduce(x, dim, keepdim)\n")
            .replace("  - name: eps", "  - {name: dim, type: int, default: -1, role: dim}\n  - name: eps"))
    with pytest.raises(SpecError, match=r"outputs\[0\].shape: reduce\(\): 'keepdim' must be an attr with role: keepdim"):
        parse(text)
    ok = text.replace("  - name: eps", "  - {name: keepdim, type: bool, default: false, role: keepdim}\n  - name: eps")
    s = parse(ok)
    assert s.outputs[0].shape == "reduce(x, dim, keepdim)" and s.attrs[0].role == "dim"


def test_every_bundled_op_yaml_is_valid():
    entries = bundled_entries()
    assert entries, "opkit ships bundled ops"
    bad = [str(e.error) for e in entries if e.error]
    assert not bad, "\n".join(bad)


def test_kernel_abi_names_are_reserved():
    text = GOOD.replace("  - name: bias\n", "  - name: workspace\n").replace("bias: dbias", "workspace: dbias")
    with pytest.raises(SpecError, match=r"op.yaml:11: inputs\[2\].name: input name 'workspace' is reserved"):
        parse(text)


def test_yaml_nodes_resolve_values_as_safe_load_does():
    """op.yaml's line-keeping reader gives every value exactly what yaml.safe_load gives (it reuses safe_load's
    constructor per node instead of re-parsing each scalar)."""
    import yaml

    from opkit.opspec.yaml_nodes import wrap
    text = ("a: 1e-5\nb: 1.0e-5\nc: true\nd: off\ne: ~\nf: 0x1f\ng: 010\nh: '3'\ni: [1, 2.5, x, null]\n"
            "j: {k: .inf, l: .nan, m: 2026-12-06}\nn: 1_000\n")

    def plain(node):
        v = node.value
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return [plain(x) for x in v] if isinstance(v, list) else v

    got, want = plain(wrap(yaml.compose(text, Loader=yaml.SafeLoader), "")), yaml.safe_load(text)
    want = {str(k): v for k, v in want.items()}          # the reader names fields by their text
    nan = got["j"].pop("l"), want["j"].pop("l")
    assert all(x != x for x in nan) and got == want
