"""``amp="npu-o1"``: torch_npu's autocast table applied where torch_npu applies it, and the ops whose
precision matters.

torch_npu registers its table on the AutocastPrivateUse1 key, above autograd, so it acts on the ops as the
model calls them (``linear``, ``layer_norm``, ``softmax.int``) before they decompose; ``torch.autocast("cpu")``
uses a different table, so the scan applies this one itself. Table: torch_npu/csrc/aten/AutoCastOps.cpp in
github.com/Ascend/pytorch (unchanged since v2.1); default low-precision dtype float16. Policies follow
upstream's CastPolicy: only floating, non-fp64 tensors are cast; ops not listed keep their input dtype.
"""
from __future__ import annotations

import torch
from torch.utils._pytree import tree_map

# Exact overloads, as the yaml spells them (bare name = default overload): the table registers
# KERNEL_PRIVATEUSEONE(op[, overload], policy) per overload.
LOWER = {  # lower_precision_fp: run in float16
    "_convolution.deprecated", "_convolution", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d",
    "conv_transpose2d.input", "conv_transpose3d.input", "convolution", "cudnn_convolution",
    "cudnn_convolution_transpose", "prelu", "addmm", "addmv", "addr", "matmul", "einsum", "mm", "mv", "linear",
    "addbmm", "baddbmm", "bmm", "chain_matmul", "linalg_multi_dot", "_thnn_fused_lstm_cell",
    "_thnn_fused_gru_cell", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell",
    "_scaled_dot_product_flash_attention", "scaled_dot_product_attention",
}
FP32_OVERLOADS = {  # fp32: run in float32
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt",
    "sinh", "tan", "pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar", "softplus", "layer_norm",
    "native_layer_norm", "group_norm", "frobenius_norm.dim", "nuclear_norm", "nuclear_norm.dim",
    "cosine_similarity", "poisson_nll_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d",
    "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss",
    "margin_ranking_loss", "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss",
    "multi_margin_loss", "binary_cross_entropy_with_logits", "dist", "pdist", "cdist", "renorm", "logsumexp",
}
OPT_DTYPE = {  # fp32_set_opt_dtype / fp32_append_dtype: computed (and returned) in float32 unless a dtype is given
    "prod", "prod.dim_int", "softmax.int", "log_softmax.int", "cumprod", "cumsum", "linalg_vector_norm",
    "linalg_matrix_norm", "linalg_matrix_norm.str_ord", "sum", "sum.dim_IntList", "norm.Scalar",
    "norm.ScalarOpt_dim",
}
PROMOTE = {"addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sampler", "index_put", "tensordot",
           "scatter_add"}
BANNED = {"binary_cross_entropy"}

# Precision-sensitive ops (as the scan records them, after decomposition): they lose accuracy when they
# compute in fp16 -- long reductions, exp/log ranges, normalisation statistics, losses.
SENSITIVE = {
    "norm": {"native_layer_norm", "native_group_norm", "native_batch_norm", "_native_batch_norm_legit",
             "_native_batch_norm_legit_no_training", "rms_norm", "_fused_rms_norm", "layer_norm", "group_norm",
             "batch_norm"},
    "softmax": {"_softmax", "_log_softmax", "softmax", "log_softmax", "logsumexp"},
    "reduction": {"sum", "mean", "var", "std", "var_mean", "std_mean", "prod", "cumsum", "cumprod",
                  "linalg_vector_norm", "norm", "amax"},
    "exp/log": {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "rsqrt", "reciprocal",
                "softplus", "erfinv", "logcumsumexp", "_logcumsumexp"},
    "loss": {"nll_loss_forward", "nll_loss2d_forward", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss",
             "huber_loss", "kl_div", "binary_cross_entropy", "binary_cross_entropy_with_logits",
             "cross_entropy_loss", "soft_margin_loss", "poisson_nll_loss"},
}
MATMUL = {"addmm", "mm", "bmm", "matmul", "linear", "baddbmm", "addbmm", "mv", "addmv", "einsum"}
_CATEGORY = {name: cat for cat, names in SENSITIVE.items() for name in names}


def category(base: str) -> str | None:
    return _CATEGORY.get(base)


def policy(overload: str) -> str | None:
    """``overload`` as the yaml spells it (``softmax.int``, ``exp``)."""
    if overload in BANNED:
        return "banned"
    if overload in LOWER:
        return "lower"
    if overload in FP32_OVERLOADS or overload in OPT_DTYPE:
        return "fp32"
    if overload in PROMOTE:
        return "promote"
    return None


def _floating(t) -> bool:
    return isinstance(t, torch.Tensor) and t.is_floating_point() and t.dtype != torch.float64


def cast(overload: str, args, kwargs, low: torch.dtype = torch.float16):
    """(args, kwargs) as torch_npu's autocast passes them to ``overload``; None when it is not listed."""
    pol = policy(overload)
    if pol is None:
        return None
    if pol == "banned":
        raise RuntimeError(f"torch_npu autocast: {overload} is unsafe to autocast (banned list); "
                           "use binary_cross_entropy_with_logits")
    if pol == "promote":
        dts = [t.dtype for t in _leaves(args, kwargs) if _floating(t)]
        if not dts:
            return None
        to = torch.float32 if torch.float32 in dts else dts[0]
    elif pol == "fp32" and overload in OPT_DTYPE and kwargs.get("dtype") is not None:
        return None                                  # the caller chose the dtype
    else:
        to = low if pol == "lower" else torch.float32

    def f(t):
        return t.to(to) if _floating(t) else t
    return tree_map(f, args), tree_map(f, kwargs)


def _leaves(args, kwargs):
    from torch.utils._pytree import tree_leaves
    return tree_leaves((args, kwargs))
