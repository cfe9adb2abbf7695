// CANN header path, served by opkit's CPU stand-in of the op_host API (opkit_cann/host.h; docs/cann.md).
#pragma once
#include "opkit_cann/host.h"
