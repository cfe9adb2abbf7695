// CANN header path (exe_graph/runtime/storage_shape.h, also reached as runtime/storage_shape.h: the toolkit puts include/exe_graph on the
// path), served by opkit's CPU stand-in of the op_host API (opkit_cann/host.h; docs/cann.md).
#pragma once
#include "opkit_cann/host.h"
