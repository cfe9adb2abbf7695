"""What CMake needs to know about one op folder, read from its op.yaml by opkit's own spec checker.

``python -m opkit.opinfo <op dir> <out.cmake>`` is run by ``opkit_add_op()`` (cmake/opkit.cmake) at configure
time -- as CANN's ``npu_op_kernel_sources()`` runs its Python helper at configure time -- so the top-level
CMake project and ``opkit build`` accept and reject the same op.yaml with the same ``file:line`` message.
It imports no torch and writes nothing into the op folder. Exit 1 with the message on stderr when the folder
is broken (op.yaml error, a missing kernel.cpp or tiling.h).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .errors import OpkitError


def describe(op_dir: Path) -> dict:
    """The op's build facts: names, kernel variants with their DTYPE_* definitions, sources, build stamp."""
    from .lowering import lower
    from .opspec import load_spec

    op_dir = Path(op_dir).resolve()
    if not (op_dir / "op.yaml").is_file():
        raise OpkitError(f"{op_dir}: no op.yaml (an op folder holds op.yaml, kernel.cpp, tiling.h, reference.py)")
    spec = load_spec(op_dir)
    info = {"name": spec.name, "snake": spec.snake, "lang": spec.lang, "dir": str(op_dir),
            "sources": [str(op_dir / "op.yaml")]}
    if spec.lang != "ascendc":
        return info
    for f in (spec.kernel_file, spec.tiling_file):
        if not f.is_file():
            raise OpkitError(f"{f}: missing ({op_dir / 'op.yaml'}:1 declares op {spec.name}, whose kernel and tiling "
                             f"live in kernel.cpp and tiling.h next to it)")
    op = lower(spec)
    from .toolchain.stamps import stamp_data
    info.update(gm_args=len(spec.inputs) + len(spec.outputs) + 2, tiling_struct=spec.tiling_struct,
                tiling_func=spec.tiling_func, variants={v.tag: list(v.defines) for v in op.variants},
                auto_sync=spec.auto_sync, naive_on_demand=[v.tag for v in op.variants if v.naive_on_demand],
                dtypes=list(spec.dtypes), stamp=stamp_data(spec, "cpu"))
    return info


def _cmake_list(values) -> str:
    return '"' + ";".join(str(v).replace("\\", "/").replace('"', '\\"').replace(";", "\\;") for v in values) + '"'


def to_cmake(info: dict) -> str:
    """The facts as CMake variables OPKIT_OP_* (read by opkit_add_op())."""
    lines = [f"# written by `python -m opkit.opinfo` from {info['dir']}/op.yaml -- do not edit",
             f"set(OPKIT_OP_NAME {info['name']})", f"set(OPKIT_OP_SNAKE {info['snake']})",
             f"set(OPKIT_OP_LANG {info['lang']})", f"set(OPKIT_OP_SOURCES {_cmake_list(info['sources'])})"]
    if info["lang"] == "ascendc":
        lines += [f"set(OPKIT_OP_GM_ARGS {info['gm_args']})", f"set(OPKIT_OP_TILING_STRUCT {info['tiling_struct']})",
                  f"set(OPKIT_OP_TILING_FUNC {info['tiling_func']})",
                  f"set(OPKIT_OP_VARIANTS {_cmake_list(info['variants'])})",
                  f"set(OPKIT_OP_AUTO_SYNC {'ON' if info.get('auto_sync', True) else 'OFF'})",
                  f"set(OPKIT_OP_NAIVE_ON_DEMAND {_cmake_list(info.get('naive_on_demand', []))})"]
        lines += [f"set(OPKIT_OP_DEFINES_{tag} {_cmake_list(d)})" for tag, d in info["variants"].items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from .toolchain.files import write_if_changed

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m opkit.opinfo <op dir> <out.cmake>", file=sys.stderr)
        return 2
    try:
        info = describe(Path(args[0]))
    except OpkitError as e:        # SpecError included: its text names op.yaml:line and the field
        print(str(e), file=sys.stderr)
        return 1
    out = Path(args[1])
    out.parent.mkdir(parents=True, exist_ok=True)
    write_if_changed(out, to_cmake(info))
    if "stamp" in info:     # the op's build.json, copied next to its modules after they build
        write_if_changed(out.with_suffix(".stamp.json"), json.dumps(info["stamp"], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
