"""`opkit build --target npu [--package] [--check-only]` for TBE ops: the TBE flavour of the custom op
project, and the eager torch_npu binding through OpCommand.

Project layout (Ascend/samples 1_custom_op README; docs/tbe.md "NPU and graph mode"):
  op_proto/<op>.h, <op>.cc                 REG_OP prototype + InferShape (outputs shaped like an input)
  tbe/impl/<function>.py                   the op's kernel.py, unchanged
  tbe/op_info_cfg/ai_core/<soc>/<op>.ini   op-info per SoC
  framework/torch_npu/<op>_opcommand.cpp   torch.ops.opkit.<op> on PrivateUse1 via at_npu::native::OpCommand, as a
                                           kernel table for opkit.registration.register_native
--check-only compiles the binding against torch and the torch-npu wheel's headers, and the prototype
against the GE headers that wheel carries (graph/operator_reg.h).
"""
from __future__ import annotations

import shutil
from pathlib import Path

from ..errors import BuildError
from ..opspec import OpSpec
from ..toolchain.files import write_if_changed
from ..workspace import host_include_dir
from . import proto
from .ini import Attr, OpInfo, Param

def op_info(spec: OpSpec) -> OpInfo:
    names = {i.name for i in spec.inputs}
    dts = list(spec.dtypes)
    ins = [Param(i.name, "required", dts, ["ND"] * len(dts)) for i in spec.inputs]
    outs = [Param(o.name, "required", dts if o.dtype in names else [o.dtype] * len(dts), ["ND"] * len(dts))
            for o in spec.outputs]
    attrs = [Attr(a.name, a.type if a.type != "str" else "str", "optional" if a.default is not None else "required",
                  None if a.default is None else str(a.default).lower() if a.type == "bool" else str(a.default))
             for a in spec.attrs]
    fname = spec.tbe.get("function") or spec.snake
    return OpInfo(spec.name, ins, outs, attrs, op_file=fname, op_interface=fname)


def _binding(spec: OpSpec) -> str:
    """The OpCommand binding (templates/opcommand.cpp.j2), rendered from the op's lowering."""
    import jinja2

    from ..lowering import lower
    names = {i.name for i in spec.inputs}
    bad = [o.name for o in spec.outputs if o.shape not in names]
    if bad:
        raise BuildError(f"{spec.dir / 'op.yaml'}: TBE eager binding: output(s) {', '.join(bad)} are not shaped like "
                         "an input; opkit's OpCommand binding allocates outputs like an input only")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True, trim_blocks=True,
                             lstrip_blocks=True)
    return env.get_template("opcommand.cpp.j2").render(op=lower(spec), op_yaml=spec.dir / "op.yaml")


def render_project(specs: list[OpSpec], project: Path, socs: list[str]) -> Path:
    from .ini import write as write_ini
    project = Path(project)
    for s in specs:
        info = op_info(s)
        names = {i.name for i in s.inputs}
        header, source = proto.render(info, {o.name: o.shape for o in s.outputs if o.shape in names})
        write_if_changed(project / "op_proto" / f"{s.snake}.h", header)
        write_if_changed(project / "op_proto" / f"{s.snake}.cc", source.replace(f'#include "{s.name.lower()}.h"',
                                                                      f'#include "{s.snake}.h"'))
        impl = project / "tbe" / "impl" / f"{info.op_file}.py"
        impl.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(s.dir / "kernel.py", impl)
        write_if_changed(impl.parent / "__init__.py", "")
        for soc in socs:
            write_if_changed(project / "tbe" / "op_info_cfg" / "ai_core" / soc.lower() / f"{s.snake}.ini", write_ini(info))
        write_if_changed(project / "framework" / "torch_npu" / f"{s.snake}_opcommand.cpp", _binding(s))
    return project


def check_jobs(project: Path, specs: list[OpSpec], tc) -> list[tuple[list[str], str]]:
    """Compile (syntax only) each OpCommand binding against torch + the torch-npu wheel's headers, and each
    prototype against the GE headers that wheel carries (include/graph/operator_reg.h)."""
    jobs = []
    for s in specs:
        cc = project / "op_proto" / f"{s.snake}.cc"
        jobs.append(([tc.cxx, "-std=c++17", "-fsyntax-only", f"-D_GLIBCXX_USE_CXX11_ABI={tc.cxx11_abi}",
                      f"-I{project / 'op_proto'}", *[f"-I{p}" for p in tc.includes()], str(cc)],
                     f"compiling the REG_OP prototype and InferShape {cc} against the GE headers"))
        tu = project / "framework" / "torch_npu" / f"{s.snake}_opcommand.cpp"
        jobs.append(([tc.cxx, "-std=c++17", "-fsyntax-only", f"-D_GLIBCXX_USE_CXX11_ABI={tc.cxx11_abi}",
                      *[f"-I{p}" for p in tc.includes()], f"-I{host_include_dir()}", str(tu)],
                     f"compiling the OpCommand binding {tu} against torch and torch_npu headers"))
    return jobs


def build_npu(specs: list[OpSpec], out: Path, *, check_only: bool, soc: str | None, log, toolchain=None) -> Path:
    """Render the TBE project; --check-only compiles the OpCommand bindings against the published headers
    with ``toolchain`` (the npu target's check toolchain: compiler, torch and torch-npu wheel headers; the
    build router passes it, so this language package never imports a target)."""
    import subprocess

    socs = [soc or "Ascend910B"]
    project = render_project(specs, Path(out) / "project", socs)
    say = log or (lambda m: None)
    say(f"npu: TBE op project for {', '.join(s.snake for s in specs)} rendered in {project}")
    if not check_only:
        raise BuildError(f"opkit build --target npu: the TBE op project is rendered in {project} (op_proto, tbe/impl, "
                         "op_info_cfg, the OpCommand binding), but opkit does not drive CANN's TBE package build: "
                         "build and install it with CANN's custom-op project tooling (docs/tbe.md)")
    for cmd, what in check_jobs(project, specs, toolchain):
        say(f"npu: --check-only: {what}")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise BuildError(f"{what} failed:\n{(r.stdout + r.stderr)[-4000:]}")
    say("npu: --check-only OK: REG_OP prototypes and OpCommand bindings compiled against the published "
        "headers; the TBE kernels themselves need CANN's op compiler")
    return project
