// CANN's include/basic_api/kernel_operator_list_tensor_intf.h (mirror-cann/asc-devkit 82b89a15) declares ListTensorDesc
// and TensorDesc, included by kernels that take a dynamic list of GM tensors. The emulator has neither (a
// kernel that uses them stops at a compile error naming the type, docs/emulator.md); the header exists so
// that kernels which include it and use nothing of it compile unchanged.
#pragma once
#include "kernel_operator.h"
