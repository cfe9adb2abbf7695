# Written for opkit (not copied from CANN): a LayerNorm TBE op in the style of the built-in ops of the
# newer CANN releases (imports through impl.util.platform_adapter, tbe.dsl calls, para_check).
"""
layer_norm_fp32: y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias over the last axis.

fp16 data is cast to float32 when the SoC's reduce_sum takes float32, so the statistics are FP32.
"""
from functools import reduce as functools_reduce

from impl.util.platform_adapter import para_check
from impl.util.platform_adapter import register_operator
from impl.util.platform_adapter import shape_util
from impl.util.platform_adapter import tbe
from impl.util.platform_adapter import tbe_platform
from impl.util.platform_adapter import tvm
from tbe.common.register import register_op_compute


# 'pylint: disable=unused-argument,too-many-arguments,too-many-locals
@register_op_compute("LayerNormFP32", op_mode="static", support_fusion=True)
def layer_norm_fp32_compute(input_x, input_weight, input_bias, output_y, eps=1e-5,
                            kernel_name="layer_norm_fp32"):
    """
    compute of layer_norm_fp32

    Parameters
    ----------
    input_x: TVM tensor, [rows, cols]
    input_weight, input_bias: TVM tensors, [cols]
    output_y: dict of the output
    eps: float, added to the variance

    Returns
    -------
    res: TVM tensor, input_x's dtype
    """
    ori_dtype = input_x.dtype
    shape_x = shape_util.shape_to_list(input_x.shape)
    if ori_dtype == "float16" and tbe_platform.api_check_support("tbe.dsl.reduce_sum", "float32"):
        input_x = tbe.cast_to(input_x, "float32")
        input_weight = tbe.cast_to(input_weight, "float32")
        input_bias = tbe.cast_to(input_bias, "float32")
    cof = 1.0 / shape_x[-1]

    x_mean = tbe.reduce_sum(tbe.vmuls(input_x, cof), axis=[-1], keepdims=True)
    x_centered = tbe.vsub(input_x, tbe.broadcast(x_mean, shape_x))
    x_var = tbe.reduce_sum(tbe.vmuls(tbe.vmul(x_centered, x_centered), cof), axis=[-1], keepdims=True)
    x_std = tbe.vsqrt(tbe.vadds(x_var, eps))
    x_norm = tbe.vdiv(x_centered, tbe.broadcast(x_std, shape_x))

    res = tbe.vadd(tbe.vmul(x_norm, tbe.broadcast(input_weight, shape_x)), tbe.broadcast(input_bias, shape_x))
    if res.dtype != ori_dtype:
        res = tbe.cast_to(res, ori_dtype)
    return res


@register_operator("LayerNormFP32")
@para_check.check_op_params(para_check.REQUIRED_INPUT, para_check.REQUIRED_INPUT, para_check.REQUIRED_INPUT,
                            para_check.REQUIRED_OUTPUT, para_check.OPTION_ATTR_FLOAT, para_check.KERNEL_NAME)
def layer_norm_fp32(input_x, input_weight, input_bias, output_y, eps=1e-5, kernel_name="layer_norm_fp32"):
    """
    layer_norm_fp32: normalisation over the last axis with FP32 statistics

    Parameters
    ----------
    input_x: dict, shape and dtype (float16, float32)
    input_weight, input_bias: dicts, shape [last dim of input_x], same dtype
    output_y: dict, same shape and dtype as input_x
    eps: float, default 1e-5
    kernel_name: str

    Returns
    -------
    None
    """
    shape_x = input_x.get("shape")
    dtype_x = input_x.get("dtype").lower()
    para_check.check_shape(shape_x, param_name="input_x")
    para_check.check_dtype(dtype_x, ("float16", "float32"), param_name="input_x")
    para_check.check_dtype(input_weight.get("dtype").lower(), (dtype_x,), param_name="input_weight")
    para_check.check_dtype(input_bias.get("dtype").lower(), (dtype_x,), param_name="input_bias")

    cols = shape_x[-1]
    rows = functools_reduce(lambda a, b: a * b, shape_x[:-1], 1)
    data_x = tvm.placeholder((rows, cols), name="data_x", dtype=dtype_x)
    data_weight = tvm.placeholder((cols,), name="data_weight", dtype=dtype_x)
    data_bias = tvm.placeholder((cols,), name="data_bias", dtype=dtype_x)
    res = layer_norm_fp32_compute(data_x, data_weight, data_bias, output_y, eps, kernel_name)

    with tvm.target.cce():
        schedule = tbe.auto_schedule(res)
    config = {"name": kernel_name, "tensor_list": [data_x, data_weight, data_bias, res]}
    tbe.build(schedule, config)
