# opkit's NPU target: AscendC kernels through CANN's kernel-direct-launch CMake support, and the
# torch_npu binding library. Included by the CMakeLists.txt opkit renders into build/opkit/npu/src.
#
# Inputs (cache variables the generated CMakeLists sets):
#   ASCEND_CANN_PACKAGE_PATH  CANN toolkit folder (ASCEND_HOME_PATH)
#   SOC_VERSION               e.g. Ascend910B1 (CANN's ascendc.cmake requires it)
#   OPKIT_TORCH_DIR           the torch package folder (include/, lib/)
#   OPKIT_TORCH_NPU_DIR       the torch_npu package folder (include/, lib/libtorch_npu.so)
#   OPKIT_HOST_INCLUDE        python/opkit/include (opkit/tiling.h, opkit/platform.h)
#   OPKIT_TORCH_VERSION_MACRO op-plugin's CURRENT_VERSION, e.g. V2R13
#   OPKIT_CXX11_ABI           0/1, as torch was built (torch 2.13: 1)
#
# CANN's AscendC CMake (ascendc_library, ascendc_compile_definitions, ascendc_include_directories) lives in
# ${ASCEND_CANN_PACKAGE_PATH}/compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake (also <arch>-linux/tikcpp/...,
# older: tools/tikcpp/...).
include_guard(GLOBAL)

foreach(_var ASCEND_CANN_PACKAGE_PATH SOC_VERSION OPKIT_TORCH_DIR OPKIT_TORCH_NPU_DIR OPKIT_HOST_INCLUDE)
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
