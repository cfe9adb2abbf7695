import pytest

from opkit.errors import OpkitError
from opkit.opspec.names import check_identifier, check_op_name, to_snake


@pytest.mark.parametrize("camel, snake", [
    ("LayerNormFP32", "layer_norm_fp32"), ("GELU", "gelu"), ("AddRMSNormFP32", "add_rms_norm_fp32"),
    ("SiluFP32", "silu_fp32"), ("Softmax", "softmax"), ("ReduceMaxFP32", "reduce_max_fp32"),
    ("Fp32Op", "fp32_op"), ("RMSNorm", "rms_norm"), ("A", "a"), ("Conv2D", "conv2_d"),
])
def test_camel_to_snake(camel, snake):
    assert to_snake(camel) == snake
    assert check_op_name(camel) == snake


@pytest.mark.parametrize("bad, words", [
    ("layerNorm", "lower-case"), ("Layer_Norm", "letters and digits"), ("2Norm", "upper-case"),
    ("", "empty"), ("Layer-Norm", "letters and digits"), ("Ünorm", "letters and digits"),
    ("Class", "keyword"), ("Return", "keyword"), ("Int", "keyword"), ("Match", "keyword"),
])
def test_bad_names_are_refused_with_the_reason(bad, words):
    with pytest.raises(OpkitError, match=words):
        check_op_name(bad)


def test_identifiers():
    check_identifier("weight", "input name")
    with pytest.raises(OpkitError, match="keyword"):
        check_identifier("class", "input name")
    with pytest.raises(OpkitError, match="not an identifier"):
        check_identifier("my-input", "input name")
