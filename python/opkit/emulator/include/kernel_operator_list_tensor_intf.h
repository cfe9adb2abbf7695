// CANN's include/basic_api/kernel_operator_list_tensor_intf.h (mirror-cann/asc-devkit 82b89a15): ListTensorDesc and
// TensorDesc, which kernel_operator.h already has (opkit_emu/list_tensor.h).
#pragma once
#include "kernel_operator.h"
