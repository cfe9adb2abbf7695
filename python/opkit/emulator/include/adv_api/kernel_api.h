// CANN's adv_api/kernel_api.h (asc-devkit 82b89a15 include/adv_api/kernel_api.h): the advanced API, which CANN's
// kernel_operator.h includes (include/basic_api/kernel_operator_intf.h:64) -- here the families the emulator has,
// one header each under lib/ (the path CANN's installed kernels include them by). A family not listed is not
// implemented: using one of its names is an ordinary compile error naming it.
#pragma once
#include "lib/math/sin.h"
#include "lib/math/cos.h"
#include "lib/math/tan.h"
#include "lib/math/asin.h"
#include "lib/math/acos.h"
#include "lib/math/atan.h"
#include "lib/math/sinh.h"
#include "lib/math/cosh.h"
#include "lib/math/tanh.h"
#include "lib/math/asinh.h"
#include "lib/math/acosh.h"
#include "lib/math/atanh.h"
#include "lib/math/erf.h"
#include "lib/math/erfc.h"
#include "lib/math/floor.h"
#include "lib/math/ceil.h"
#include "lib/math/round.h"
#include "lib/math/trunc.h"
#include "lib/math/frac.h"
#include "lib/math/sign.h"
#include "lib/math/log.h"
#include "lib/math/exp.h"
#include "lib/math/power.h"
#include "lib/math/axpy.h"
