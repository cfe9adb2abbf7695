# CMake helpers for the emulator target, included by the CMakeLists that `opkit build` generates in
# <workspace>/build/opkit/cpu/_gen/. The generated file sets:
#   OPKIT_OUTPUT_DIR         outputs go to ${OPKIT_OUTPUT_DIR}/<op>/
#   OPKIT_EMU_CFLAGS         opkit.emulator.cflags(): include dirs and defines of the emulator
#   OPKIT_HOST_INCLUDE       python/opkit/include (opkit/tiling.h, opkit/launch_abi.h, ...)
#   OPKIT_TORCH_INCLUDE_DIRS / OPKIT_TORCH_LIBRARY_DIR / OPKIT_TORCH_DEFINES  from the running torch
#   OPKIT_PCH                precompile the torch headers once for all bindings (worth it from ~3 ops)
#   OPKIT_CCACHE             ccache's path when it is installed (compiles go through it), else empty
# Torch is passed in directly instead of find_package(Torch): its config probes CUDA and takes seconds.
include_guard(GLOBAL)

if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release)
endif()
set(CMAKE_CXX_FLAGS_RELEASE "-O2")
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
if(OPKIT_CCACHE)
  set(CMAKE_CXX_COMPILER_LAUNCHER "${OPKIT_CCACHE}")
endif()

if(OPKIT_PCH)
  # One precompiled header shared by every binding (REUSE_FROM needs identical flags: same helper).
  add_library(opkit_torch_pch OBJECT "${CMAKE_CURRENT_SOURCE_DIR}/pch_stub.cpp")
  target_compile_features(opkit_torch_pch PRIVATE cxx_std_20)
  target_include_directories(opkit_torch_pch SYSTEM PRIVATE ${OPKIT_TORCH_INCLUDE_DIRS})
  target_include_directories(opkit_torch_pch PRIVATE "${OPKIT_HOST_INCLUDE}")
  target_compile_definitions(opkit_torch_pch PRIVATE ${OPKIT_TORCH_DEFINES})
  set_target_properties(opkit_torch_pch PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  target_precompile_headers(opkit_torch_pch PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}/pch.h")
endif()

# opkit_cpu_op(<op>): the aggregate target `opkit_<op>` (what `opkit build <op>` asks ninja for).
function(opkit_cpu_op op)
  add_custom_target(opkit_${op} ALL)
endfunction()

# A kernel module: module.cpp (kernel_operator.h + the user's kernel.cpp) for one dtype and variant.
# NAIVE: the naive-compute variant, a baseline the harness runs once per case: -O1 compiles it ~25% faster
# (the emulator's element loops are OPKIT_EMU_HOT, optimised at O3 whatever the level).
function(opkit_kernel_module)
  cmake_parse_arguments(K "NAIVE" "OP;NAME;SOURCE;OPDIR" "DEFINES" ${ARGN})
  set(tgt ${K_OP}__${K_NAME})
  add_library(${tgt} MODULE "${K_SOURCE}")
  set_target_properties(${tgt} PROPERTIES
    OUTPUT_NAME ${K_NAME} PREFIX "" SUFFIX ".so"
    LIBRARY_OUTPUT_DIRECTORY "${OPKIT_OUTPUT_DIR}/${K_OP}"
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)   # dtype variants never collide
  target_compile_features(${tgt} PRIVATE cxx_std_17)
  target_compile_options(${tgt} PRIVATE ${OPKIT_EMU_CFLAGS})
  if(K_NAIVE)
    target_compile_options(${tgt} PRIVATE -O1)   # after CMAKE_CXX_FLAGS_RELEASE's -O2: the last -O wins
  endif()
  target_compile_definitions(${tgt} PRIVATE ${K_DEFINES})
  target_include_directories(${tgt} PRIVATE "${K_OPDIR}" "${OPKIT_HOST_INCLUDE}")
  find_package(Threads REQUIRED)
  target_link_libraries(${tgt} PRIVATE Threads::Threads)
  add_dependencies(opkit_${K_OP} ${tgt})
endfunction()

# The torch binding libopkit_<op>.so: schema, CPU/Meta/Autocast kernels, naive variant. Links libtorch only.
# TILING: the op's tiling.h in a TU of its own (no torch headers, no PCH): a tiling edit recompiles only it.
function(opkit_torch_binding)
  cmake_parse_arguments(B "" "OP;SOURCE;TILING;OPDIR" "" ${ARGN})
  set(tgt ${B_OP}__binding)
  add_library(${tgt} SHARED "${B_SOURCE}" "${B_TILING}")
  set_source_files_properties("${B_TILING}" PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  set_target_properties(${tgt} PROPERTIES
    OUTPUT_NAME opkit_${B_OP}
    LIBRARY_OUTPUT_DIRECTORY "${OPKIT_OUTPUT_DIR}/${B_OP}"
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    BUILD_RPATH "${OPKIT_TORCH_LIBRARY_DIR}")
  target_compile_features(${tgt} PRIVATE cxx_std_20)
  target_include_directories(${tgt} SYSTEM PRIVATE ${OPKIT_TORCH_INCLUDE_DIRS})
  target_include_directories(${tgt} PRIVATE "${B_OPDIR}" "${OPKIT_HOST_INCLUDE}")
  target_compile_definitions(${tgt} PRIVATE ${OPKIT_TORCH_DEFINES})
  target_link_directories(${tgt} PRIVATE "${OPKIT_TORCH_LIBRARY_DIR}")
  target_link_libraries(${tgt} PRIVATE torch_cpu c10 ${CMAKE_DL_LIBS})
  if(OPKIT_PCH)
    target_precompile_headers(${tgt} REUSE_FROM opkit_torch_pch)
  endif()
  add_dependencies(opkit_${B_OP} ${tgt})
endfunction()
