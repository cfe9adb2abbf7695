// CANN's CPU-debug header for `<<<>>>` launches: "in CPU debug mode bisheng rewrites a `<<<>>>` kernel call into a
// CPU call whose functions cpu_debug_launch.h defines; a source file launching with <<<>>> includes it under
// #ifdef ASCENDC_CPU_DEBUG" (asc-devkit 82b89a15 docs/zh/guide/编程指南/调试调优/功能调试/CPU域孪生调试.md:20-26).
// Here `opkit run-asc` does the rewrite (python/opkit/cannproject/asc_program.py) and the launch lives in
// acl/acl_rt.h, so this header only makes sure that is included.
#pragma once
#include "acl/acl.h"
#if !defined(OPKIT_ASC_PROGRAM)
#error "cpu_debug_launch.h: a `<<<>>>` program runs on the emulator with `opkit run-asc FILE.asc` (docs/emulator.md)"
#endif
