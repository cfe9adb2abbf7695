# The NPU toolchain (OPKIT_TARGET=npu): AscendC kernels through CANN's kernel-direct-launch CMake support, and
# the torch_npu binding library. Included by opkit.cmake; opkit_add_op() calls opkit_npu_op() per op folder and
# opkit_check_ops() adds the binding after the last op.
#
# Inputs (cache variables; `opkit build --target npu` passes them all, the `npu` preset gets them from
# `python -m opkit.targets.npu.configure` at configure time):
#   ASCEND_CANN_PACKAGE_PATH  CANN toolkit folder (default: $ENV{ASCEND_HOME_PATH}, as CANN's own
#                             cmake/asc/fwk_modules/config.cmake falls back to it)
#   SOC_VERSION               e.g. Ascend910B1 (CANN's ascendc.cmake requires it)
#   OPKIT_NPU_PROFILE         ascend910b | ascend310p (opkit's chip profile of that SoC)
#   OPKIT_NPU_SRC             folder holding the rendered binding.cpp and the kernel prelude
#   OPKIT_TORCH_DIR           the torch package folder (include/, lib/)
#   OPKIT_TORCH_NPU_DIR       the torch_npu package folder (include/, lib/libtorch_npu.so)
#   OPKIT_HOST_INCLUDE        python/opkit/include (opkit/tiling.h, opkit/platform.h; set by opkit.cmake)
#   OPKIT_TORCH_VERSION_MACRO op-plugin's CURRENT_VERSION, e.g. V2R13
#   OPKIT_CXX11_ABI           0/1, as torch was built (torch 2.13: 1)
#   OPKIT_NPU_AUTO_SYNC       ON (default) | OFF: `opkit build --target npu --no-auto-sync`, every kernel as below
#
# Auto-sync: CANN's A2 vector kernels are compiled with `--cce-auto-sync` (asc-devkit@82b89a15
# cmake/asc/legacy_modules/bisheng_intf.cmake:110-115, c220_aiv_intf_pub); an op built without it gets
# `--cce-auto-sync=off` (the op compiler drops `--cce-auto-sync` for an op whose json says auto_sync false,
# tools/build/asc_op_compile_base/adapter/compile_op.py:1130-1139; ops-math@c4193324 cmake/func.cmake:792,830-856
# `add_kernel_sources(... AUTO_SYNC false)`). opkit passes it for an op whose op.yaml says `auto_sync: false`
# (OPKIT_OP_AUTO_SYNC OFF) or for all with OPKIT_NPU_AUTO_SYNC OFF, through ascendc_compile_options, whose options
# come after the interface's (device_project/CMakeLists.txt:55-59 "custom options should be at the end").
#
# CANN's AscendC CMake (ascendc_library, ascendc_compile_definitions, ascendc_include_directories) lives in
# ${ASCEND_CANN_PACKAGE_PATH}/compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake (also <arch>-linux/tikcpp/...,
# older: tools/tikcpp/...).
include_guard(GLOBAL)

enable_language(C)
if(NOT ASCEND_CANN_PACKAGE_PATH AND DEFINED ENV{ASCEND_HOME_PATH})
  set(ASCEND_CANN_PACKAGE_PATH "$ENV{ASCEND_HOME_PATH}" CACHE PATH "CANN toolkit folder")
endif()
if(NOT ASCEND_CANN_PACKAGE_PATH)
  message(FATAL_ERROR "opkit: OPKIT_TARGET=npu needs CANN: source <toolkit>/set_env.sh (it sets ASCEND_HOME_PATH) "
                      "or configure with -DASCEND_CANN_PACKAGE_PATH=<toolkit>")
endif()
if(NOT OPKIT_NPU_SRC)
  # No driver rendered the glue (the `npu` preset): opkit's NPU target renders it and says what it found.
  set(OPKIT_NPU_SRC "${CMAKE_BINARY_DIR}/npu_src" CACHE PATH "rendered NPU glue" FORCE)
  set(OPKIT_NPU_RENDER ON)
endif()

# the rest needs SOC_VERSION and the torch folders: included by _opkit_npu_toolchain() once they are known
macro(_opkit_npu_toolchain)
foreach(_var SOC_VERSION OPKIT_TORCH_DIR OPKIT_TORCH_NPU_DIR OPKIT_HOST_INCLUDE)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "opkit_npu.cmake: ${_var} is not set (opkit build --target npu sets it)")
  endif()
endforeach()
if(EXISTS "${ASCEND_CANN_PACKAGE_PATH}/compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake")
  set(OPKIT_ASCENDC_CMAKE "${ASCEND_CANN_PACKAGE_PATH}/compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake")
elseif(EXISTS "${ASCEND_CANN_PACKAGE_PATH}/${CMAKE_HOST_SYSTEM_PROCESSOR}-linux/tikcpp/ascendc_kernel_cmake/ascendc.cmake")
  # where asc-devkit installs cmake/asc (its cmake/CMakeLists.txt:16-18, INSTALL_LIBRARY_DIR <arch>-linux)
  set(OPKIT_ASCENDC_CMAKE "${ASCEND_CANN_PACKAGE_PATH}/${CMAKE_HOST_SYSTEM_PROCESSOR}-linux/tikcpp/ascendc_kernel_cmake/ascendc.cmake")
elseif(EXISTS "${ASCEND_CANN_PACKAGE_PATH}/tools/tikcpp/ascendc_kernel_cmake/ascendc.cmake")
  set(OPKIT_ASCENDC_CMAKE "${ASCEND_CANN_PACKAGE_PATH}/tools/tikcpp/ascendc_kernel_cmake/ascendc.cmake")
else()
  message(FATAL_ERROR "CANN: no ascendc_kernel_cmake/ascendc.cmake under ASCEND_CANN_PACKAGE_PATH="
                      "${ASCEND_CANN_PACKAGE_PATH}; source <toolkit>/set_env.sh or set ASCEND_HOME_PATH")
endif()
set(RUN_MODE "npu" CACHE STRING "CANN ascendc_library run mode" FORCE)
# The binding calls only the generated aclrtlaunch_* functions (no <<<>>> in host code), so CANN's
# host-side bisheng recompile of the sources is not needed.
set(ASCEND_KERNEL_LAUNCH_ONLY ON CACHE BOOL "kernels are launched only through aclrtlaunch_*")
include("${OPKIT_ASCENDC_CMAKE}")
# ascendc_library puts its libraries in ${CMAKE_BINARY_DIR}/lib.
set(OPKIT_KERNEL_LIB_DIR "${CMAKE_BINARY_DIR}/lib")
endmacro()

# One kernel variant: the user's kernel.cpp compiled for one dtype, its entry renamed
# <entry>_<tag> by a compile definition so that all variants live in one process, with opkit's
# kernel prelude (GET_TILING_DATA_WITH_STRUCT for direct launch) force-included.
#   opkit_npu_kernel(<target> SOURCE <kernel.cpp> PRELUDE <header> DEFINITIONS <NAME=value>...)
# SHARED, as in CANN's kernel-launch samples: each variant is its own device link (kernel classes
# that share a name across dtypes never merge) with its own copy of the AscendC runtime.
function(opkit_npu_kernel target)
  cmake_parse_arguments(K "" "SOURCE;PRELUDE" "DEFINITIONS" ${ARGN})
  ascendc_library(${target} SHARED "${K_SOURCE}")
  # ASCENDC_DUMP=0: CANN's generated launcher allocates a printf/DumpTensor buffer per launch unless this
  # definition is among the target's (asc-devkit cmake/asc/legacy_modules/function.cmake:346-347,
  # util/gen_host_stub.py:18); opkit kernels do not print on the device.
  ascendc_compile_definitions(${target} PRIVATE ${K_DEFINITIONS} ASCENDC_DUMP=0)
  ascendc_compile_options(${target} PRIVATE "-include${K_PRELUDE}")   # joined: options are de-duplicated
  get_filename_component(_src_dir "${K_SOURCE}" DIRECTORY)
  ascendc_include_directories(${target} PRIVATE "${_src_dir}" "${OPKIT_HOST_INCLUDE}")
endfunction()

# The binding: libopkit_npu.so = TORCH_LIBRARY_IMPL(opkit, PrivateUse1) + the kernel variants.
#   opkit_npu_binding(<target> SOURCE <binding.cpp> KERNELS <targets>... OUTPUT_DIR <dir>)
function(opkit_npu_binding target)
  cmake_parse_arguments(B "" "SOURCE;OUTPUT_DIR" "KERNELS;DEFINITIONS" ${ARGN})
  add_library(${target} SHARED "${B_SOURCE}")
  set_target_properties(${target} PROPERTIES PREFIX "lib" OUTPUT_NAME "opkit_npu"
                        LIBRARY_OUTPUT_DIRECTORY "${B_OUTPUT_DIR}" CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
  target_compile_definitions(${target} PRIVATE _GLIBCXX_USE_CXX11_ABI=${OPKIT_CXX11_ABI}
                             CURRENT_VERSION=${OPKIT_TORCH_VERSION_MACRO} ${B_DEFINITIONS})
  target_compile_options(${target} PRIVATE -Wno-c++20-extensions)
  set(_npu_inc "${OPKIT_TORCH_NPU_DIR}/include")
  target_include_directories(${target} PRIVATE
    "${OPKIT_HOST_INCLUDE}"
    "${OPKIT_TORCH_DIR}/include" "${OPKIT_TORCH_DIR}/include/torch/csrc/api/include"
    "${_npu_inc}" "${_npu_inc}/third_party/acl/inc" "${_npu_inc}/third_party/hccl/inc"
    "${_npu_inc}/third_party/op-plugin" "${_npu_inc}/third_party/op-plugin/op_plugin/include")
  # Kernel variants first: their INTERFACE include dirs carry the generated aclrtlaunch_*.h.
  target_link_directories(${target} PRIVATE "${OPKIT_TORCH_DIR}/lib" "${OPKIT_TORCH_NPU_DIR}/lib")
  target_link_libraries(${target} PRIVATE ${B_KERNELS} torch_npu torch torch_cpu c10)
  # ascendc.cmake sets CMAKE_SKIP_RPATH; the kernel libraries sit next to the build, so say where.
  target_link_options(${target} PRIVATE "-Wl,-rpath,${OPKIT_KERNEL_LIB_DIR}")
endfunction()

# opkit_npu_op(<op folder>), after opinfo's OPKIT_OP_* variables are set (opkit_add_op): one CANN kernel
# library per lead dtype, opkit_kernel_<op>_<tag>, the entry renamed <op>_<tag>.
option(OPKIT_NPU_AUTO_SYNC "kernels built with CANN's default --cce-auto-sync" ON)

function(opkit_npu_op dir)
  set(op ${OPKIT_OP_SNAKE})
  set(chip "")
  if(OPKIT_NPU_PROFILE STREQUAL "ascend310p")
    set(chip OPKIT_CHIP_ASCEND310P)
  endif()
  foreach(tag IN LISTS OPKIT_OP_VARIANTS)
    opkit_npu_kernel(opkit_kernel_${op}_${tag} SOURCE "${dir}/kernel.cpp"
                     PRELUDE "${OPKIT_NPU_SRC}/opkit_npu_kernel_prelude.h"
                     DEFINITIONS ${op}=${op}_${tag} ${OPKIT_OP_DEFINES_${tag}} ${chip})
    if(NOT OPKIT_NPU_AUTO_SYNC OR (DEFINED OPKIT_OP_AUTO_SYNC AND NOT OPKIT_OP_AUTO_SYNC))
      ascendc_compile_options(opkit_kernel_${op}_${tag} PRIVATE --cce-auto-sync=off)   # see the header
    endif()
    set_property(GLOBAL APPEND PROPERTY OPKIT_NPU_KERNELS opkit_kernel_${op}_${tag})
  endforeach()
  set_property(GLOBAL APPEND PROPERTY OPKIT_NPU_OP_DIRS "${dir}")
  set_property(GLOBAL APPEND PROPERTY OPKIT_NPU_OPS "${op}")
endfunction()

# After the last op: the glue (rendered now if no driver did) and libopkit_npu.so over every kernel.
function(opkit_npu_finish)
  get_property(kernels GLOBAL PROPERTY OPKIT_NPU_KERNELS)
  get_property(dirs GLOBAL PROPERTY OPKIT_NPU_OP_DIRS)
  if(NOT kernels)
    return()
  endif()
  if(OPKIT_NPU_RENDER)
    _opkit_python(opkit.targets.npu.configure binding "${OPKIT_NPU_SRC}" "${SOC_VERSION}" ${dirs})
  endif()
  set(chip "")
  if(OPKIT_NPU_PROFILE STREQUAL "ascend310p")
    set(chip OPKIT_CHIP_ASCEND310P)
  endif()
  opkit_npu_binding(opkit_npu_binding SOURCE "${OPKIT_NPU_SRC}/binding.cpp" KERNELS ${kernels}
                    OUTPUT_DIR "${OPKIT_OUTPUT_DIR}" DEFINITIONS ${chip})
  # npu_ops.txt next to the library: the ops it holds (opkit.load() warns about the others)
  get_property(ops GLOBAL PROPERTY OPKIT_NPU_OPS)
  list(JOIN ops "\n" text)
  file(WRITE "${CMAKE_BINARY_DIR}/npu_ops.txt" "${text}\n")
  add_custom_command(TARGET opkit_npu_binding POST_BUILD
    COMMAND "${CMAKE_COMMAND}" -E copy "${CMAKE_BINARY_DIR}/npu_ops.txt" "${OPKIT_OUTPUT_DIR}/npu_ops.txt" VERBATIM)
endfunction()
