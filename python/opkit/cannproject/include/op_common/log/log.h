// CANN header path (opbase include/op_common/log/log.h), served by opkit's stand-in (opkit_cann/log.h; docs/cann.md).
#pragma once
#include "opkit_cann/log.h"
