// CANN host header path as a KERNEL translation unit sees it (`opkit cflags --cann`; opkit_cann_kernel_view.h says why).
#pragma once
#include "opkit_cann_kernel_view.h"
