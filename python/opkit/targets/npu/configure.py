"""What the `npu` CMake preset needs from opkit's NPU target at configure time (cmake/opkit_npu.cmake), so
`cmake --preset npu && cmake --build --preset npu` needs no Python step of the user's; `opkit build --target
npu` computes and renders the same and passes it on the command line instead.

    python -m opkit.targets.npu.configure settings <out.cmake> <CANN folder> <src folder>
        SoC (detected as `opkit build --target npu` does), chip profile, torch / torch_npu folders, op-plugin
        version macro, C++ ABI -> CMake cache variables; the kernel prelude -> <src folder>
    python -m opkit.targets.npu.configure binding <src folder> <SoC> <op folder>...
        the torch_npu binding of these ops -> <src folder>/binding.cpp
Errors go to stderr with exit 1 (CMake prints them and stops).
"""
from __future__ import annotations

import sys
from pathlib import Path

from ...errors import OpkitError


def settings(soc: str | None, cann_root: Path | None):
    """glue.Settings for a SoC (None: detected) and the CANN folder; the same as builder.build computes."""
    from . import cann, glue
    from ...workspace import host_include_dir
    soc_name, _ = cann.detect_soc(soc)
    try:
        info = cann.soc_info(soc_name, cann_root)
    except ValueError as e:
        raise OpkitError(str(e)) from None
    s = glue.Settings(soc=soc_name, profile=info.profile, vector_cores=info.vector_cores,
                      torch_version_macro=cann.version_macro(cann.dist_version("torch") or "2.13.0"),
                      host_include=host_include_dir(), family=info.family)
    s.cxx11_abi = _cxx11_abi()
    return s


def _cxx11_abi() -> int:
    from ...toolchain.stamps import torch_version
    major_minor = tuple(int(x) for x in torch_version().split("+")[0].split(".")[:2])
    if major_minor >= (2, 7):
        return 1        # torch >= 2.7 wheels use the C++11 ABI only
    import torch
    return int(torch.compiled_with_cxx11_abi())


def _cmake_set(name: str, value) -> str:
    return f'set({name} "{str(value)}" CACHE STRING "found by opkit.targets.npu.configure" FORCE)'


def main(argv: list[str]) -> int:
    from . import builder, glue
    from ...toolchain.files import write_if_changed
    try:
        if argv[:1] == ["settings"] and len(argv) == 4:
            out, cann_root, src = Path(argv[1]), Path(argv[2]), Path(argv[3])
            s = settings(None, cann_root)
            lines = [_cmake_set("SOC_VERSION", s.soc), _cmake_set("OPKIT_NPU_PROFILE", s.profile),
                     _cmake_set("OPKIT_TORCH_DIR", builder._torch_dir()),
                     _cmake_set("OPKIT_TORCH_NPU_DIR", builder._torch_npu_dir()),
                     _cmake_set("OPKIT_TORCH_VERSION_MACRO", s.torch_version_macro),
                     _cmake_set("OPKIT_CXX11_ABI", s.cxx11_abi)]
            out.write_text("\n".join(lines) + "\n")
            write_if_changed(src / glue.PRELUDE, glue.render_prelude())
            return 0
        if argv[:1] == ["binding"] and len(argv) >= 4:
            from ...opspec import load_spec
            src, soc = Path(argv[1]), argv[2]
            specs = [load_spec(d) for d in argv[3:]]
            write_if_changed(src / "binding.cpp", glue.render_binding([glue.op_glue(x) for x in specs],
                                                                    settings(soc, None)))
            return 0
    except (OpkitError, ValueError) as e:
        print(str(e), file=sys.stderr)
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
