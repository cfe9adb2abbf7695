# The emulator toolchain (OPKIT_TARGET=cpu): an op's kernel.cpp compiled with g++ against opkit's AscendC
# CPU emulator headers, once per I/O dtype and variant, into kernel modules that export the C launch ABI
# (python/opkit/include/opkit/launch_abi.h). Nothing here includes a torch header: the torch side is one
# library shared by every op (opkit_torch.cmake), so an op build never compiles torch headers.
include_guard(GLOBAL)

set(OPKIT_EMULATOR_INCLUDE "${OPKIT_PACKAGE_DIR}/emulator/include")
set(OPKIT_CSRC "${OPKIT_PACKAGE_DIR}/csrc")
set(OPKIT_CHIP ascend910b CACHE STRING "emulator chip profile: ascend910b | ascend310p")
# CANN's CPU-mode definitions for the profile; the same list as opkit.emulator.defines() (tests/test_cmake.py
# checks that they agree).
if(OPKIT_CHIP STREQUAL "ascend310p")
  set(OPKIT_EMULATOR_DEFINES ASCENDC_CPU_DEBUG=1 __CCE_KT_TEST__=1 OPKIT_CHIP_ASCEND310P __NPU_ARCH__=2002)
else()
  set(OPKIT_EMULATOR_DEFINES ASCENDC_CPU_DEBUG=1 __CCE_KT_TEST__=1 __NPU_ARCH__=2201)
endif()
find_package(Threads REQUIRED)
# The kernel modules' vector ISA level (python/opkit/toolchain/isa.py, docs/emulator.md "Host ISA"): empty or
# host (the default: x86-64-v3 with AVX2, x86-64-v4 with AVX-512), baseline, or a named level (same bits: the NaN rule);
# `opkit build` passes it (OPKIT_ISA in its environment).
set(OPKIT_ISA "" CACHE STRING "kernel modules' ISA level: empty/host | baseline | x86-64-v2 | -v3 | -v4")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -E env "PYTHONPATH=${OPKIT_PYTHONPATH}" "OPKIT_ISA=${OPKIT_ISA}"
          "${Python3_EXECUTABLE}" -m opkit.toolchain.isa
  RESULT_VARIABLE _isa_rc OUTPUT_VARIABLE _isa_out ERROR_VARIABLE _isa_err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _isa_rc EQUAL 0)
  message(FATAL_ERROR "opkit: OPKIT_ISA: ${_isa_err}")
endif()
list(POP_FRONT _isa_out OPKIT_ISA_LEVEL)
# no FMA contraction at any level (the device rounds every operation), then the level's -march (none: baseline)
set(OPKIT_ISA_FLAGS -ffp-contract=off ${_isa_out})
message(STATUS "opkit: kernel modules for ${OPKIT_ISA_LEVEL}: ${OPKIT_ISA_FLAGS}")
option(OPKIT_EMULATOR_PCH "precompile the emulator headers once for all kernel modules" ON)
# The emulator's non-template runtime (OPKIT_EMU_RT functions: launch, block threads, rule bookkeeping; see
# opkit_emu/config.h) compiled once per flavour and linked into every kernel module, instead of generated again
# in each (~1 CPU s a module). OFF: every module compiles the headers header-only, as before.
option(OPKIT_EMULATOR_RUNTIME "compile the emulator's runtime once for all kernel modules" ON)
# `opkit build --no-auto-sync` (OFF) or an op.yaml's `auto_sync: false` (OPKIT_OP_AUTO_SYNC): the kernel modules
# are built as CANN's `--cce-auto-sync=off` would build the kernel -- OPKIT_EMU_NO_AUTO_SYNC (opkit_emu/hazard.h)
option(OPKIT_EMU_AUTO_SYNC "kernels built with CANN's default --cce-auto-sync=on" ON)

# The emulator's headers precompiled once per flavour (opkit / naive: their flags differ) and reused by every
# kernel module: ~25% of a module's compile time (g++ 12, -O2). GCC checks the PCH against each compile
# (macros the headers use, options) and falls back to the headers when it does not apply.
function(_opkit_emulator_pch name naive)
  if(TARGET ${name})
    return()
  endif()
  file(WRITE "${CMAKE_BINARY_DIR}/${name}.cpp" "// carries the precompiled emulator headers\n")
  add_library(${name} OBJECT "${CMAKE_BINARY_DIR}/${name}.cpp")
  _opkit_emulator_flags(${name} "${naive}")
  _opkit_emulator_runtime_extern(${name})
  target_include_directories(${name} PRIVATE "${OPKIT_EMULATOR_INCLUDE}" "${OPKIT_HOST_INCLUDE}")
  target_precompile_headers(${name} PRIVATE "${OPKIT_EMULATOR_INCLUDE}/kernel_operator.h")
endfunction()

# The runtime object of a flavour (naive: "" | _naive; nosync: "" | _nosync): the same flags as the flavour's
# kernel modules, so it is the code they compiled before (the bits are unchanged), once.
function(_opkit_emulator_runtime name naive nosync)
  if(TARGET ${name})
    return()
  endif()
  add_library(${name} OBJECT "${OPKIT_CSRC}/op/emulator_runtime.cpp")
  _opkit_emulator_flags(${name} "${naive}")
  target_include_directories(${name} PRIVATE "${OPKIT_EMULATOR_INCLUDE}" "${OPKIT_HOST_INCLUDE}")
  target_compile_definitions(${name} PRIVATE OPKIT_EMU_RUNTIME_IMPL)
  if(nosync)
    target_compile_definitions(${name} PRIVATE OPKIT_EMU_NO_AUTO_SYNC)
  endif()
endfunction()

# A kernel module (or its PCH) that links the runtime object: the headers give it declarations only.
function(_opkit_emulator_runtime_extern tgt)
  if(OPKIT_EMULATOR_RUNTIME)
    target_compile_definitions(${tgt} PRIVATE OPKIT_EMU_RUNTIME_EXTERN)
  endif()
endfunction()

# Flags every kernel-module compile of a flavour shares (the PCH is only valid for identical ones).
function(_opkit_emulator_flags tgt naive)
  set_target_properties(${tgt} PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  target_compile_features(${tgt} PRIVATE cxx_std_17)
  target_compile_definitions(${tgt} PRIVATE ${OPKIT_EMULATOR_DEFINES})
  target_compile_options(${tgt} PRIVATE ${OPKIT_ISA_FLAGS})
  if(naive)
    target_compile_definitions(${tgt} PRIVATE OPKIT_NAIVE_COMPUTE OPKIT_EMU_ALLOW_BF16_MATH)
    # -O1 compiles it ~25% faster (the emulator's element loops are OPKIT_EMU_HOT, optimised at O3 anyway)
    target_compile_options(${tgt} PRIVATE -O1)
  endif()
endfunction()

# opkit_emulator_op(<op folder>), after opinfo's OPKIT_OP_* variables are set (opkit_add_op):
#   <snake>__tiling                   the op's tiling.h in a TU of its own (no emulator, no torch)
#   <snake>__kernel_<tag>[_naive]     kernel_<tag>[_naive].so per lead dtype: the opkit variant at -O2, the
#                                     naive-compute variant (a baseline the harness runs once per case) at -O1;
#                                     the naive one of the compute dtype (OPKIT_OP_NAIVE_ON_DEMAND) is not part
#                                     of the op: built on its first call
#   opkit_<snake>                     all of them, then the op's build.json (the stamp opkit.load() checks)
function(opkit_emulator_op dir)
  set(op ${OPKIT_OP_SNAKE})
  set(out "${OPKIT_OUTPUT_DIR}/${op}")
  set(modules "")

  add_library(${op}__tiling OBJECT "${OPKIT_CSRC}/op/kernel_tiling.cpp")
  target_compile_features(${op}__tiling PRIVATE cxx_std_17)
  target_compile_options(${op}__tiling PRIVATE ${OPKIT_ISA_FLAGS})
  target_include_directories(${op}__tiling BEFORE PRIVATE "${dir}" "${OPKIT_HOST_INCLUDE}")
  target_compile_definitions(${op}__tiling PRIVATE OPKIT_TILING_STRUCT=${OPKIT_OP_TILING_STRUCT}
                             OPKIT_TILING_FUNC=${OPKIT_OP_TILING_FUNC} ${OPKIT_EMULATOR_DEFINES})
  set_target_properties(${op}__tiling PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)

  # Every -O2 module before any -O1 naive one: Ninja (>= 1.12) starts the ready compiles of equal critical-path
  # length (counted in edges, not seconds) in the order build.ninja declares them, which is this order, so the
  # longest compiles start first and the short naive ones fill the last slots of an edit's rebuild (issue 38
  # item 3: LayerNormFP32's fp32 module no longer starts last, alone).
  foreach(naive IN ITEMS "" "_naive")
    foreach(tag IN LISTS OPKIT_OP_VARIANTS)
      set(tgt ${op}__kernel_${tag}${naive})
      add_library(${tgt} MODULE "${OPKIT_CSRC}/op/kernel_module.cpp" $<TARGET_OBJECTS:${op}__tiling>)
      set_target_properties(${tgt} PROPERTIES
        OUTPUT_NAME kernel_${tag}${naive} PREFIX "" SUFFIX ".so"
        LIBRARY_OUTPUT_DIRECTORY "${out}")
      _opkit_emulator_flags(${tgt} "${naive}")   # hidden visibility: dtype variants never collide
      # the op folder first: kernel_module.cpp includes "kernel.cpp" and the kernel its "tiling.h"
      target_include_directories(${tgt} BEFORE PRIVATE "${dir}" "${OPKIT_EMULATOR_INCLUDE}" "${OPKIT_HOST_INCLUDE}")
      target_compile_definitions(${tgt} PRIVATE ${OPKIT_OP_DEFINES_${tag}}
                                 OPKIT_KERNEL_ENTRY=${op} OPKIT_KERNEL_GM_ARGS=${OPKIT_OP_GM_ARGS})
      set(auto_sync ON)
      if(NOT OPKIT_EMU_AUTO_SYNC OR (DEFINED OPKIT_OP_AUTO_SYNC AND NOT OPKIT_OP_AUTO_SYNC))
        set(auto_sync OFF)
        target_compile_definitions(${tgt} PRIVATE OPKIT_EMU_NO_AUTO_SYNC)   # the headers' flavour differs: no PCH
      endif()
      if(OPKIT_EMULATOR_PCH AND auto_sync)
        _opkit_emulator_pch(opkit_emulator_pch${naive} "${naive}")
        target_precompile_headers(${tgt} REUSE_FROM opkit_emulator_pch${naive})
      endif()
      if(OPKIT_EMULATOR_RUNTIME)
        set(nosync "")
        if(NOT auto_sync)
          set(nosync "_nosync")
        endif()
        _opkit_emulator_runtime(opkit_emulator_runtime${naive}${nosync} "${naive}" "${nosync}")
        _opkit_emulator_runtime_extern(${tgt})
        target_sources(${tgt} PRIVATE $<TARGET_OBJECTS:opkit_emulator_runtime${naive}${nosync}>)
      endif()
      target_link_libraries(${tgt} PRIVATE Threads::Threads)
      if(naive AND tag IN_LIST OPKIT_OP_NAIVE_ON_DEMAND)
        # the lead dtype is the compute dtype: the naive variant computes as the opkit one does and only an explicit
        # torch.ops.opkit_naive call in this dtype needs it -- built then (opkit.loader), not with the op
        set_target_properties(${tgt} PROPERTIES EXCLUDE_FROM_ALL ON)
      else()
        list(APPEND modules "$<TARGET_FILE:${tgt}>")
      endif()
    endforeach()
  endforeach()
  set(stamp "${CMAKE_BINARY_DIR}/opkit_ops/${OPKIT_OP_FOLDER}.stamp.json")
  add_custom_command(OUTPUT "${out}/build.json"
    COMMAND "${CMAKE_COMMAND}" -E copy "${stamp}" "${out}/build.json"
    COMMAND "${CMAKE_COMMAND}" -E touch "${out}/build.json"
    DEPENDS "${stamp}" ${modules} VERBATIM)
  add_custom_target(opkit_${op} ALL DEPENDS "${out}/build.json")
endfunction()
