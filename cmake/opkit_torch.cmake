# The torch side of every opkit op: one Python extension module, opkit's _opkit_torch (python/opkit/csrc),
# that defines the schemas and registers the generic CPU (emulator), Meta, Autocast and Autograd kernels of
# each op from its description (python/opkit/registration.py). Built once per torch version and shared by
# every op, so no op build compiles a torch header.
#
# opkit_torch_library([OUTPUT_DIR <dir>]) -> target opkit_torch
# Torch is found from the Python that runs the build (its include/ and lib/ folders) instead of
# find_package(Torch): Torch's CMake config probes for CUDA and takes seconds.
include_guard(GLOBAL)

function(opkit_torch_library)
  cmake_parse_arguments(T "" "OUTPUT_DIR" "" ${ARGN})
  if(NOT T_OUTPUT_DIR)
    set(T_OUTPUT_DIR "${OPKIT_OUTPUT_DIR}")
  endif()
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" -c "import importlib.util, os; print(os.path.dirname(importlib.util.find_spec('torch').origin))"
    RESULT_VARIABLE rc OUTPUT_VARIABLE torch_dir ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0 OR NOT EXISTS "${torch_dir}/include/torch/library.h")
    message(FATAL_ERROR "opkit: PyTorch is not installed for ${Python3_EXECUTABLE} (${err}); install torch, or "
                        "configure with -DPython3_EXECUTABLE=<the python that has torch>")
  endif()
  Python3_add_library(opkit_torch MODULE WITH_SOABI
    "${OPKIT_CSRC}/registry.cpp" "${OPKIT_CSRC}/kernels.cpp")
  set_target_properties(opkit_torch PROPERTIES
    OUTPUT_NAME _opkit_torch LIBRARY_OUTPUT_DIRECTORY "${T_OUTPUT_DIR}"
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    BUILD_RPATH "${torch_dir}/lib")
  target_compile_features(opkit_torch PRIVATE cxx_std_17)
  # torch >= 2.7 pip wheels use the C++11 ABI only; torch's own pybind11 (matching its type casters)
  target_compile_definitions(opkit_torch PRIVATE _GLIBCXX_USE_CXX11_ABI=1)
  target_include_directories(opkit_torch SYSTEM PRIVATE "${torch_dir}/include"
                             "${torch_dir}/include/torch/csrc/api/include")
  target_include_directories(opkit_torch PRIVATE "${OPKIT_CSRC}" "${OPKIT_HOST_INCLUDE}")
  target_link_directories(opkit_torch PRIVATE "${torch_dir}/lib")
  target_link_libraries(opkit_torch PRIVATE torch_python torch_cpu c10 ${CMAKE_DL_LIBS})
endfunction()
