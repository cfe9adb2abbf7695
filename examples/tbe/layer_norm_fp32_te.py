# Written for opkit (not copied from CANN): the same LayerNorm in the older te.lang.cce spelling of the
# CANN 3.x/5.x built-in ops (te.lang.cce, topi.generic, fusion_manager, op_utils).
"""
layer_norm_fp32 (te.lang.cce): y = (x - mean) * exp(-0.5 * ln(var + eps)) * weight + bias, last axis.
"""
from functools import reduce as functools_reduce

import te.lang.cce
from te import platform as tbe_platform
from te import tvm
from te.platform.fusion_manager import fusion_manager
from te.utils import op_utils
from topi import generic


# pylint: disable=locally-disabled,unused-argument,too-many-arguments
@fusion_manager.register("layer_norm_fp32")
def layer_norm_fp32_compute(input_x, input_weight, input_bias, output_y, eps=1e-5,
                            kernel_name="layer_norm_fp32"):
    """compute of layer_norm_fp32 in the te.lang.cce spelling"""
    dtype = input_x.dtype
    shape_x = te.lang.cce.util.shape_to_list(input_x.shape)
    if dtype == "float16" and tbe_platform.cce_conf.api_check_support("te.lang.cce.sum", "float32"):
        input_x = te.lang.cce.cast_to(input_x, "float32")
        input_weight = te.lang.cce.cast_to(input_weight, "float32")
        input_bias = te.lang.cce.cast_to(input_bias, "float32")
    reduce_mean_cof = 1.0 / shape_x[-1]

    mean_muls = te.lang.cce.vmuls(input_x, reduce_mean_cof)
    mean = te.lang.cce.sum(mean_muls, axis=[-1], keepdims=True)
    mean_broad = te.lang.cce.broadcast(mean, shape_x)
    x_sub_mean = te.lang.cce.vsub(input_x, mean_broad)
    var_muls = te.lang.cce.vmuls(te.lang.cce.vmul(x_sub_mean, x_sub_mean), reduce_mean_cof)
    variance = te.lang.cce.sum(var_muls, axis=[-1], keepdims=True)

    # rstd = exp(-0.5 * ln(variance + eps)): the built-in normalisation ops' way to 1/sqrt
    normalize_log = te.lang.cce.vlog(te.lang.cce.vadds(variance, eps))
    rstd = te.lang.cce.vexp(te.lang.cce.vmuls(normalize_log, -0.5))
    normalize = te.lang.cce.vmul(x_sub_mean, te.lang.cce.broadcast(rstd, shape_x))

    scale_mul = te.lang.cce.vmul(normalize, te.lang.cce.broadcast(input_weight, shape_x))
    res = te.lang.cce.vadd(scale_mul, te.lang.cce.broadcast(input_bias, shape_x))
    if dtype == "float16" and res.dtype != dtype:
        res = te.lang.cce.cast_to(res, "float16")
    return res


@op_utils.check_op_params(op_utils.REQUIRED_INPUT, op_utils.REQUIRED_INPUT, op_utils.REQUIRED_INPUT,
                          op_utils.REQUIRED_OUTPUT, op_utils.OPTION_ATTR_FLOAT, op_utils.KERNEL_NAME)
def layer_norm_fp32(input_x, input_weight, input_bias, output_y, eps=1e-5, kernel_name="layer_norm_fp32"):
    """layer_norm_fp32 op function (static shapes)"""
    shape_x = input_x.get("shape")
    dtype = input_x.get("dtype").lower()
    op_utils.check_shape(shape_x, param_name="input_x")
    op_utils.check_dtype(dtype, ("float16", "float32"), param_name="input_x")

    cols = shape_x[-1]
    rows = functools_reduce(lambda a, b: a * b, shape_x[:-1], 1)
    data_x = tvm.placeholder((rows, cols), name="data_x", dtype=dtype)
    data_weight = tvm.placeholder((cols,), name="data_weight", dtype=dtype)
    data_bias = tvm.placeholder((cols,), name="data_bias", dtype=dtype)
    res = layer_norm_fp32_compute(data_x, data_weight, data_bias, output_y, eps, kernel_name)

    with tvm.target.cce():
        sch = generic.auto_schedule(res)
    config = {"name": kernel_name, "tensor_list": [data_x, data_weight, data_bias, res]}
    te.lang.cce.cce_build_code(sch, config)
