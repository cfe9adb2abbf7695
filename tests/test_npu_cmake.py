"""The real `opkit build --target npu` path (driver -> cmake/workspace with OPKIT_TARGET=npu -> cmake/opkit_npu.cmake ->
CMake + Ninja -> libopkit_npu.so + manifest), run against a TEST DOUBLE of CANN: a folder that looks
like a toolkit to opkit's discovery and whose ascendc.cmake defines CANN's function names
(ascendc_library, ascendc_compile_definitions, ascendc_include_directories) with plain C stand-ins
for the launchers. It checks opkit's wiring (targets per op x dtype, the entry rename reaching the
launcher name, include dirs, the binding compiled and linked against libtorch_npu, rpath, outputs),
not CANN: the real kernel compile needs bisheng and is not run here (docs/npu.md)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_npu_glue import REPO, make_op  # noqa: E402

pytestmark = pytest.mark.slow   # one torch binding compile (~25 s CPU)

FAKE_ASCENDC_CMAKE = textwrap.dedent(r'''
    # TEST DOUBLE of CANN's ascendc_kernel_cmake/ascendc.cmake (same function names, no bisheng).
    if(NOT DEFINED SOC_VERSION)
      message(FATAL_ERROR "SOC_VERSION value not set.")
    endif()
    if(NOT ASCEND_KERNEL_LAUNCH_ONLY)
      message(FATAL_ERROR "opkit should build kernels in launch-only mode")
    endif()
    function(ascendc_library target type)
      if(NOT ARGN)
        message(FATAL_ERROR "ascendc_library(${target}): no sources")
      endif()
      foreach(src ${ARGN})
        if(NOT EXISTS "${src}")
          message(FATAL_ERROR "ascendc_library(${target}): no such source ${src}")
        endif()
      endforeach()
      add_library(${target}_interface INTERFACE)
      file(WRITE "${CMAKE_BINARY_DIR}/fake/${target}.c" "/* filled by ascendc_compile_definitions */\n")
      add_library(${target} ${type} "${CMAKE_BINARY_DIR}/fake/${target}.c")
      set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/lib")
      target_include_directories(${target} INTERFACE "${CMAKE_BINARY_DIR}/include/${target}")
    endfunction()
    function(ascendc_compile_definitions target scope)
      # The launcher is named after the entry as preprocessed: opkit's rename definition comes first.
      list(GET ARGN 0 rename)
      string(REGEX REPLACE "^[^=]*=" "" entry "${rename}")
      list(JOIN ARGN " " defs)
      file(WRITE "${CMAKE_BINARY_DIR}/include/${target}/aclrtlaunch_${entry}.h"
           "#pragma once\n#include <stdint.h>\n/* defs: ${defs} */\n"
           "extern \"C\" uint32_t aclrtlaunch_${entry}(uint32_t blockDim, void* stream, ...);\n")
      file(WRITE "${CMAKE_BINARY_DIR}/fake/${target}.c"
           "#include <stdint.h>\nuint32_t aclrtlaunch_${entry}(uint32_t b, void* s, ...) { return 0; }\n")
    endfunction()
    function(ascendc_compile_options target scope)
      foreach(opt ${ARGN})
        if(opt MATCHES "^-include(.+)$")
          if(NOT EXISTS "${CMAKE_MATCH_1}")
            message(FATAL_ERROR "ascendc_compile_options(${target}): no such prelude ${CMAKE_MATCH_1}")
          endif()
        endif()
      endforeach()
      list(JOIN ARGN " " opts)
      file(APPEND "${CMAKE_BINARY_DIR}/fake/options.txt" "${target}: ${opts}\n")
    endfunction()
    function(ascendc_include_directories target scope)
      foreach(d ${ARGN})
        if(NOT IS_DIRECTORY "${d}")
          message(FATAL_ERROR "ascendc_include_directories(${target}): no folder ${d}")
        endif()
      endforeach()
    endfunction()
''')


def test_npu_build_through_cmake_with_a_cann_double(tmp_path):
    from opkit.targets.npu import wheel
    npu_root = wheel.torch_npu_root()                 # include/ + lib/libtorch_npu.so (never installed)
    cann = tmp_path / "Ascend" / "ascend-toolkit" / "8.1.RC1"
    cm = cann / "compiler" / "tikcpp" / "ascendc_kernel_cmake" / "ascendc.cmake"
    cm.parent.mkdir(parents=True)
    cm.write_text(FAKE_ASCENDC_CMAKE)
    site = tmp_path / "site"                          # `torch_npu` findable (find_spec), not importable
    site.mkdir()
    (site / "torch_npu").symlink_to(npu_root)
    op = make_op(tmp_path / "ops")
    build_dir = tmp_path / "build"
    script = textwrap.dedent(f"""
        from pathlib import Path
        import sys
        sys.path.insert(0, {str(REPO / 'tests')!r})
        from test_npu_glue import make_op
        from opkit.targets import npu
        op = make_op(Path({str(tmp_path / 'ops')!r}))
        npu.build([op], Path({str(build_dir)!r}), jobs=2, log=print, soc="Ascend910B3")
    """)
    env = dict(os.environ, ASCEND_HOME_PATH=str(cann), PYTHONPATH=f"{REPO / 'python'}:{site}",
               PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=900)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "CANN 8.1.RC1" in out and "Ascend910B3" in out
    lib = build_dir / "libopkit_npu.so"
    assert lib.is_file(), out
    dyn = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True).stdout
    for tag in ("fp16", "bf16", "fp32"):
        assert f"libopkit_kernel_{op.snake}_{tag}.so" in dyn
        header = build_dir / "cmake" / "include" / f"opkit_kernel_{op.snake}_{tag}" / f"aclrtlaunch_{op.snake}_{tag}.h"
        assert header.is_file()
        assert f"DTYPE_X={ {'fp16': 'half', 'bf16': 'bfloat16_t', 'fp32': 'float'}[tag] }" in header.read_text()
    assert "libtorch_npu.so" in dyn and str(build_dir / "cmake" / "lib") in dyn       # NEEDED + rpath
    assert (build_dir / "npu_ops.txt").read_text().split() == [op.snake]
    binding = (build_dir / "src" / "binding.cpp").read_text()
    assert "p.vector_cores = 40;" in binding                                         # --soc Ascend910B3
    options = (build_dir / "cmake" / "fake" / "options.txt").read_text()
    prelude = build_dir / "src" / "opkit_npu_kernel_prelude.h"
    assert f"opkit_kernel_{op.snake}_fp16: -include{prelude}" in options and prelude.is_file()


def test_npu_preset_configures_and_builds_with_no_python_step(tmp_path):
    """`cmake --preset npu` shape: OPKIT_TARGET=npu with nothing rendered by a driver. CANN comes from
    ASCEND_HOME_PATH; opkit's NPU target is asked at configure time for the SoC, the torch folders and the glue
    (opkit.targets.npu.configure); the same opkit_add_op() per op folder builds the kernels and the binding."""
    from opkit.toolchain.tools import cmake_exe
    from opkit.targets.npu import wheel
    npu_root = wheel.torch_npu_root()
    cann = tmp_path / "Ascend" / "ascend-toolkit" / "8.1.RC1"
    cm = cann / "compiler" / "tikcpp" / "ascendc_kernel_cmake" / "ascendc.cmake"
    cm.parent.mkdir(parents=True)
    cm.write_text(FAKE_ASCENDC_CMAKE)
    site = tmp_path / "site"
    site.mkdir()
    (site / "torch_npu").symlink_to(npu_root)
    op = make_op(tmp_path / "ops")
    out, tree = tmp_path / "out", tmp_path / "tree"
    env = dict(os.environ, ASCEND_HOME_PATH=str(cann), PYTHONPATH=f"{REPO / 'python'}:{site}",
               PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    env.pop("SOC_VERSION", None)
    r = subprocess.run([cmake_exe(), "-G", "Unix Makefiles", "-S", str(REPO / "cmake" / "workspace"), "-B", str(tree),
                        "-DOPKIT_TARGET=npu", f"-DOPKIT_OP_DIRS={op.dir}", f"-DOPKIT_OUTPUT_DIR={out}",
                        f"-DPython3_EXECUTABLE={sys.executable}"], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    settings = (tree / "opkit_npu_settings.cmake").read_text()
    assert 'set(SOC_VERSION "Ascend910B' in settings and "OPKIT_TORCH_NPU_DIR" in settings
    assert (tree / "npu_src" / "binding.cpp").is_file()
    r = subprocess.run([cmake_exe(), "--build", str(tree), "-j", "2"], env=env, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    lib = out / "libopkit_npu.so"
    dyn = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True).stdout
    for tag in ("fp16", "bf16", "fp32"):
        assert f"libopkit_kernel_{op.snake}_{tag}.so" in dyn
    assert (out / "npu_ops.txt").read_text().split() == [op.snake]
