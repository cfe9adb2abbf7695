"""Parameter checks and shape helpers TBE ops call (``para_check``, ``shape_util``, the older
``te.utils.op_utils`` and ``topi.cce.util``): same names and arguments, raising what the op build
would raise (as TbeError, with the parameter's name)."""
from __future__ import annotations

import functools
from functools import reduce

from .graph import TbeError

REQUIRED_INPUT, OPTION_INPUT, DYNAMIC_INPUT = "required_input", "option_input", "dynamic_input"
REQUIRED_OUTPUT, OPTION_OUTPUT, DYNAMIC_OUTPUT = "required_output", "option_output", "dynamic_output"
REQUIRED_ATTR_INT, REQUIRED_ATTR_FLOAT, REQUIRED_ATTR_STR, REQUIRED_ATTR_BOOL = \
    "REQUIRED_ATTR_INT", "REQUIRED_ATTR_FLOAT", "REQUIRED_ATTR_STR", "REQUIRED_ATTR_BOOL"
REQUIRED_ATTR_TYPE, REQUIRED_ATTR_LIST_INT, REQUIRED_ATTR_LIST_FLOAT, REQUIRED_ATTR_LIST_BOOL = \
    "REQUIRED_ATTR_TYPE", "REQUIRED_ATTR_LIST_INT", "REQUIRED_ATTR_LIST_FLOAT", "REQUIRED_ATTR_LIST_BOOL"
OPTION_ATTR_INT, OPTION_ATTR_FLOAT, OPTION_ATTR_STR, OPTION_ATTR_BOOL = \
    "OPTION_ATTR_INT", "OPTION_ATTR_FLOAT", "OPTION_ATTR_STR", "OPTION_ATTR_BOOL"
OPTION_ATTR_TYPE, OPTION_ATTR_LIST_INT, OPTION_ATTR_LIST_FLOAT, OPTION_ATTR_LIST_BOOL = \
    "OPTION_ATTR_TYPE", "OPTION_ATTR_LIST_INT", "OPTION_ATTR_LIST_FLOAT", "OPTION_ATTR_LIST_BOOL"
KERNEL_NAME = "kernel_name"
OP_NAME = "op_name"
ALL_FORMAT_LIST = ["NCHW", "NHWC", "ND", "NC1HWC0", "FRACTAL_Z", "HWCN", "NDHWC", "NCDHW"]
ALL_DTYPE_LIST = ["float16", "float32", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                  "uint64", "bool", "bfloat16"]
SHAPE_SIZE_LIMIT = 2 ** 31 - 1
# te.utils.op_utils error codes (names only matter: ops put them into their error messages)
globals().update({f"OP_ERROR_CODE_{i:03d}": f"E80{i:03d}" for i in range(32)})


def check_op_params(*types, **_kw):
    """The decorator: checks each dict input/output has shape and dtype, the kernel name is valid."""
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for kind, value in zip(types, args):
                if kind in (REQUIRED_INPUT, REQUIRED_OUTPUT) and not (
                        isinstance(value, dict) and "shape" in value and "dtype" in value):
                    raise TbeError(f"{fn.__name__}: a required input/output is {value!r}, not a dict with "
                                   "'shape' and 'dtype'")
            if "kernel_name" in kwargs:
                check_kernel_name(kwargs["kernel_name"])
            return fn(*args, **kwargs)
        return wrapper
    return deco


def check_kernel_name(kernel_name, param_name=None):
    name = str(kernel_name)
    if not name or len(name) > 200 or not (name[0].isalpha() or name[0] == "_") or \
            not name.replace("_", "a").isalnum():
        raise TbeError(f"kernel_name {name!r}: 1-200 letters, digits or '_', not starting with a digit")


def check_dtype(dtype, check_list=ALL_DTYPE_LIST, param_name=None):
    if dtype is None or str(dtype).lower() not in [str(d).lower() for d in check_list]:
        raise TbeError(f"E80008: the dtype of {param_name or 'input'} must be in {list(check_list)}, "
                       f"got {dtype!r}")


def check_shape(shape, min_dim=0, max_dim=None, min_rank=0, max_rank=8, max_shape_num=SHAPE_SIZE_LIMIT,
                param_name=None):
    shape = shape_to_list(shape)
    if not min_rank <= len(shape) <= max_rank:
        raise TbeError(f"E80012: rank of {param_name or 'input'} must be in [{min_rank}, {max_rank}], got {shape}")
    for d in shape:
        if d <= min_dim - 1 or d <= 0 or (max_dim is not None and d > max_dim):
            raise TbeError(f"E80002: dims of {param_name or 'input'} must be positive, got {shape}")
    if reduce(lambda a, b: a * b, shape, 1) > max_shape_num:
        raise TbeError(f"E80011: {param_name or 'input'} has more than {max_shape_num} elements: {shape}")


def check_format(data_format, check_list=ALL_FORMAT_LIST, param_name=None):
    if data_format not in check_list:
        raise TbeError(f"the format of {param_name or 'input'} must be in {list(check_list)}, got {data_format!r}")


def check_elewise_shape_range(inputs, support_broadcast=False):
    return None


def shape_to_list(shape):
    return [int(getattr(s, "value", s)) for s in shape]


def broadcast_shapes(shape1, shape2, op_name=None, param_name_input1="", param_name_input2=""):
    """Pad both to one rank with leading 1s; each dim pair equal or one of them 1 -> (s1, s2, max)."""
    s1, s2 = shape_to_list(shape1), shape_to_list(shape2)
    n = max(len(s1), len(s2))
    s1, s2 = [1] * (n - len(s1)) + s1, [1] * (n - len(s2)) + s2
    out = []
    for a, b in zip(s1, s2):
        if a != b and 1 not in (a, b):
            raise TbeError(f"E80013: shapes of {param_name_input1 or 'input1'} {s1} and "
                           f"{param_name_input2 or 'input2'} {s2} cannot broadcast")
        out.append(max(a, b))
    return s1, s2, out


def refine_shapes_for_broadcast(shape1, shape2):
    """Fusing adjacent dims is a performance step on the device; the CPU keeps the shapes as they are."""
    return shape_to_list(shape1), shape_to_list(shape2)


def axis_check(shape_len, axis):
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = []
    for a in axes:
        if not -shape_len <= a < shape_len:
            raise TbeError(f"E80001: axis {a} is out of range for rank {shape_len}")
        out.append(a % shape_len)
    return sorted(set(out))


def shape_refine(shape, reduce_axis=None, keep_dims=True):
    shape = shape_to_list(shape)
    if reduce_axis is None:
        return [d for d in shape if d != 1] or [1]
    return shape, reduce_axis


def refine_shape_axes(shape, axes):
    return shape_to_list(shape), axis_check(len(shape), axes)


def simplify_axis_shape(shape, axis):
    return shape_to_list(shape), axis_check(len(shape), axis)


def produce_shapes(shape1, shape2):
    return broadcast_shapes(shape1, shape2)


def check_shape_rule(shape, min_dim=None, max_dim=None, max_shape_num=None):
    check_shape(shape)


def check_tensor_shape_size(shape):
    size = reduce(lambda a, b: a * b, shape_to_list(shape), 1)
    if size > SHAPE_SIZE_LIMIT:
        raise TbeError(f"tensor of shape {list(shape)} is too large")
    return size


def check_shape_size(shape, limit=SHAPE_SIZE_LIMIT):
    return check_tensor_shape_size(shape)


def check_dtype_rule(dtype, check_list, param_name=None):
    check_dtype(dtype, check_list, param_name)


def check_input_type(*_types):
    def deco(fn):
        return fn
    return deco


def compare_tensor_dict_key(dict1, dict2, key):
    if dict1.get(key) != dict2.get(key):
        raise TbeError(f"the {key} of the two tensors differs: {dict1.get(key)} vs {dict2.get(key)}")


def variable_shape(inputs, op_mode="elewise", support_broadcast=False):
    """Dynamic style: the concrete shapes (every CPU call has them). Reduce mode gets [dict, axes]."""
    if op_mode == "reduce" or (len(inputs) == 2 and isinstance(inputs[1], list)):
        return [shape_to_list(inputs[0]["shape"])]
    return [shape_to_list(d["shape"]) for d in inputs]


def get_data_size(dtype):
    return {"float16": 2, "float32": 4, "int32": 4, "int8": 1, "uint8": 1, "int16": 2, "int64": 8,
            "bfloat16": 2, "bool": 1}[str(dtype).lower()]


def get_bit_len(dtype):
    return 8 * get_data_size(dtype)


def scalar2tensor_one(shape):
    """A scalar's shape [] becomes [1]."""
    return [1] if isinstance(shape, (list, tuple)) and len(shape) == 0 else shape


def reuse_input_as_output(*_a, **_k):
    """In-place update on the device (output buffer = input buffer); the CPU returns a new tensor."""
    return None


def is_scalar(shape):
    return len(shape) == 1 and shape[0] == 1


class error_manager_vector:                      # noqa: N801 - the module's name in CANN
    """``error_manager_vector.raise_err_*``: every one raises with the op and parameter names."""

    def __getattr__(self, name):
        if not name.startswith("raise_err"):
            raise AttributeError(name)

        def raise_(*args, **_kw):
            raise TbeError(f"{name}: {', '.join(str(a) for a in args)}")
        return raise_


error_manager_vector = error_manager_vector()


def get_error_message(info: dict) -> str:
    """``error_manager_util.get_error_message(error_info)``: the message the op puts in its RuntimeError."""
    return ", ".join(f"{k}: {v}" for k, v in dict(info).items())
