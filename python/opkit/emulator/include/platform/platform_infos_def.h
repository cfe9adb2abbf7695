// platform/platform_infos_def.h as a kernel compile finds it: CANN's kernel build puts the toolkit's include folder
// on the path (mirror-cann/asc-devkit 82b89a15 tools/build/asc_op_compile_base/adapter/compile_op.py:1356), where
// this host header (fe::PlatFormInfos, hicann/metadef) lives, so a kernel header that includes it (ops-transformer
// c29bc106 posembedding/interleave_rope/op_kernel/interleave_rope_b11d.h:17) compiles. The kernel uses none of its
// names; here it declares none: a kernel that names one (fe::PlatFormInfos, ...) stops at an ordinary compile error
// naming it. The op_host side has its own stand-in (opkit/cannproject/include/platform/).
#pragma once
