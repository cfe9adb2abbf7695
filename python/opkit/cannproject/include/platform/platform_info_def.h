// CANN header path (platform/platform_info_def.h, beside platform_infos_def.h in the toolkit), served by opkit's
// CPU stand-in of the op_host API (opkit_cann/host.h; docs/cann.md).
#pragma once
#include "opkit_cann/host.h"
