# opkit's CMake modules: the one build path of opkit ops, in the shape of a CANN custom-op project (one
# opkit_add_op() per op folder, as CANN's op_kernel/CMakeLists.txt has one npu_op_kernel_sources() per op;
# asc-devkit examples/01_simd_cpp_api/02_features/99_acl_based/00_acl_compilation/custom_op/). Used by the
# repository's CMakeLists.txt (`cmake --preset cpu`) and by `opkit build` (cmake/workspace/CMakeLists.txt).
#
#   OPKIT_TARGET       cpu (the AscendC CPU emulator, default: opkit_emulator.cmake) | npu (CANN, found from
#                      ASCEND_HOME_PATH: opkit_npu.cmake) | <name> (cmake/opkit_<name>.cmake)
#   OPKIT_OUTPUT_DIR   where <op>/kernel_<tag>[_naive].so and <op>/build.json go (default: the binary dir)
#   OPKIT_KEEP_GOING   ON: a broken op folder becomes a target that fails at build time naming the op and
#                      file:line, so `cmake --build ... -- -k 0` still builds every other op
#   OPKIT_CHIP         ascend910b (default) | ascend310p: the emulator's chip profile
#   ENABLE_CCACHE      compiles go through ccache when it is installed (default ON, as opkit build does)
include_guard(GLOBAL)
cmake_policy(SET CMP0074 NEW)

set(OPKIT_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")
# opkit's Python package next to these modules: a source checkout (<repo>/cmake, <repo>/python/opkit) or an
# installed opkit (<site-packages>/opkit/_share/cmake).
if(EXISTS "${OPKIT_CMAKE_DIR}/../python/opkit/__init__.py")
  get_filename_component(OPKIT_PYTHONPATH "${OPKIT_CMAKE_DIR}/../python" ABSOLUTE)
elseif(EXISTS "${OPKIT_CMAKE_DIR}/../../__init__.py")
  get_filename_component(OPKIT_PYTHONPATH "${OPKIT_CMAKE_DIR}/../../.." ABSOLUTE)
else()
  message(FATAL_ERROR "opkit: cannot find opkit's Python package next to ${OPKIT_CMAKE_DIR}")
endif()
set(OPKIT_PACKAGE_DIR "${OPKIT_PYTHONPATH}/opkit")
set(OPKIT_HOST_INCLUDE "${OPKIT_PACKAGE_DIR}/include")

set(OPKIT_TARGET cpu CACHE STRING "opkit build target: cpu (AscendC CPU emulator) or npu (CANN)")
set_property(CACHE OPKIT_TARGET PROPERTY STRINGS cpu npu)
set(OPKIT_OUTPUT_DIR "${CMAKE_BINARY_DIR}" CACHE PATH "where the ops' build outputs go")
option(OPKIT_KEEP_GOING "a broken op folder fails its own target, not the configure" OFF)
option(ENABLE_CCACHE "compile through ccache when it is installed" ON)
if(ENABLE_CCACHE AND NOT DEFINED ENV{OPKIT_NO_CCACHE})
  find_program(OPKIT_CCACHE ccache)
  if(OPKIT_CCACHE)
    # The kernel modules include the emulator's precompiled header (-include cmake_pch.hxx, its .gch made just
    # before): ccache refuses such a compile ("could not use precompiled header": every kernel compile was a
    # miss) unless told these sloppinesses, its manual's recipe for GCC PCHs (ccache.dev/manual, "Precompiled
    # headers"). The .gch's own content is still hashed, so an edited emulator header still misses.
    # CCACHE_SLOPPINESS replaces ccache.conf's setting, so the user's own (env or config, as ccache reports it)
    # is kept beside these.
    set(_opkit_sloppy pch_defines time_macros include_file_mtime include_file_ctime)
    execute_process(COMMAND "${OPKIT_CCACHE}" --get-config sloppiness OUTPUT_VARIABLE _user_sloppy
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
    if(_rc EQUAL 0 AND _user_sloppy)
      string(REPLACE "," ";" _user_sloppy "${_user_sloppy}")
      string(REPLACE " " "" _user_sloppy "${_user_sloppy}")
      list(PREPEND _opkit_sloppy ${_user_sloppy})
      list(REMOVE_DUPLICATES _opkit_sloppy)
    endif()
    list(JOIN _opkit_sloppy "," _opkit_sloppy)
    set(CMAKE_CXX_COMPILER_LAUNCHER "${CMAKE_COMMAND}" -E env "CCACHE_SLOPPINESS=${_opkit_sloppy}" "${OPKIT_CCACHE}")
  endif()
endif()

if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release)
endif()
set(CMAKE_CXX_FLAGS_RELEASE "-O2")
set(CMAKE_POSITION_INDEPENDENT_CODE ON)

# The Python that holds torch (and opkit's spec checker, which needs only PyYAML): the active virtualenv or
# the one given with -DPython3_EXECUTABLE (opkit build passes its own interpreter).
set(Python3_FIND_VIRTUALENV FIRST)
find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module)

set(OPKIT_BROKEN_OPS "" CACHE INTERNAL "")

# Runs `python -m <module> <args...>` with opkit's package importable; a failure stops the configure with
# what the module said.
function(_opkit_python module)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env "PYTHONPATH=${OPKIT_PYTHONPATH}:$ENV{PYTHONPATH}" "${Python3_EXECUTABLE}" -m ${module}
                          ${ARGN} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(STRIP "${err}" err)
    message(FATAL_ERROR "opkit: ${module}: ${err}")
  endif()
endfunction()

# opkit_add_op(<op folder>): the op's kernels for OPKIT_TARGET. Its op.yaml is read by opkit's spec checker
# (python -m opkit.opinfo); an edit of op.yaml re-runs the configure.
function(opkit_add_op dir)
  get_filename_component(dir "${dir}" ABSOLUTE)
  get_filename_component(folder "${dir}" NAME)
  set(info "${CMAKE_BINARY_DIR}/opkit_ops/${folder}.cmake")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${dir}/op.yaml")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -E env "PYTHONPATH=${OPKIT_PYTHONPATH}" "OPKIT_ISA=${OPKIT_ISA_LEVEL}"
            "${Python3_EXECUTABLE}" -m opkit.opinfo "${dir}" "${info}"
    RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(STRIP "${err}" err)
    _opkit_broken_op("${folder}" "${err}")
    return()
  endif()
  include("${info}")
  set(OPKIT_OP_FOLDER "${folder}")
  if(NOT OPKIT_OP_LANG STREQUAL "ascendc")
    return()        # TBE ops run from Python (docs/tbe.md); CANN-project ops (lang: cann) are built by their own
                    # host runner through `opkit build` (docs/cann.md)
  endif()
  cmake_language(CALL opkit_${OPKIT_TOOLCHAIN}_op "${dir}")
endfunction()

# A broken op folder: the configure fails naming the op and its file:line, after every op was read (so one
# run lists every broken op); with OPKIT_KEEP_GOING the op becomes a target that fails the same way.
function(_opkit_broken_op folder why)
  if(OPKIT_KEEP_GOING)
    message(WARNING "opkit: op ${folder} is broken and will fail its target opkit_${folder}:\n${why}")
    add_custom_target(opkit_${folder} ALL
      COMMAND "${CMAKE_COMMAND}" -E echo "opkit: op ${folder}: ${why}"
      COMMAND "${CMAKE_COMMAND}" -E false
      VERBATIM)
  else()
    message(NOTICE "opkit: op ${folder}: ${why}")
  endif()
  set(OPKIT_BROKEN_OPS "${OPKIT_BROKEN_OPS};${folder}" CACHE INTERNAL "")
endfunction()

# Call once after the last opkit_add_op(): fails the configure when an op folder was broken; for the NPU,
# adds the binding library over every op's kernels.
function(opkit_check_ops)
  if(COMMAND opkit_${OPKIT_TOOLCHAIN}_finish)
    cmake_language(CALL opkit_${OPKIT_TOOLCHAIN}_finish)
  endif()
  set(broken ${OPKIT_BROKEN_OPS})
  list(REMOVE_ITEM broken "")
  set(OPKIT_BROKEN_OPS "" CACHE INTERNAL "")
  if(broken AND NOT OPKIT_KEEP_GOING)
    list(JOIN broken ", " names)
    message(FATAL_ERROR "opkit: broken op folder(s): ${names} (the reasons are printed above, each with its "
                        "file:line); fix them, or configure with -DOPKIT_KEEP_GOING=ON to build the others")
  endif()
endfunction()

# The target's toolchain: cmake/opkit_<toolchain>.cmake defines opkit_<toolchain>_op(<op folder>) and optionally
# opkit_<toolchain>_finish() (after the last op); a new target adds its file here and nothing else.
if(OPKIT_TARGET STREQUAL "cpu")
  set(OPKIT_TOOLCHAIN emulator)
else()
  set(OPKIT_TOOLCHAIN ${OPKIT_TARGET})
endif()
if(NOT EXISTS "${OPKIT_CMAKE_DIR}/opkit_${OPKIT_TOOLCHAIN}.cmake")
  message(FATAL_ERROR "opkit: OPKIT_TARGET=${OPKIT_TARGET}: no ${OPKIT_CMAKE_DIR}/opkit_${OPKIT_TOOLCHAIN}.cmake")
endif()
include("${OPKIT_CMAKE_DIR}/opkit_torch.cmake")
include("${OPKIT_CMAKE_DIR}/opkit_${OPKIT_TOOLCHAIN}.cmake")
if(OPKIT_TARGET STREQUAL "npu")
  if(OPKIT_NPU_RENDER)
    # What `opkit build --target npu` passes, found by opkit's NPU target (SoC, torch and torch_npu folders),
    # and the glue it renders (the kernel prelude now, the binding after the last op: opkit_npu_finish).
    _opkit_python(opkit.targets.npu.configure settings "${CMAKE_BINARY_DIR}/opkit_npu_settings.cmake"
                  "${ASCEND_CANN_PACKAGE_PATH}" "${OPKIT_NPU_SRC}")
    include("${CMAKE_BINARY_DIR}/opkit_npu_settings.cmake")
  endif()
  _opkit_npu_toolchain()
endif()
