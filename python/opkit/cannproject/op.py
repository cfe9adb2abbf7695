"""One op of a CANN project, callable on torch tensors: the project's InferShape / InferDataType / TilingFunc
run in the host runner, then the kernel on the emulator with the resulting tiling bytes, block dim and tiling
key (a templated entry: the key decoded into its template arguments), GM buffers in the op-project order
(inputs, outputs, workspace, tiling)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ..emulator.abi import KernelModule
from ..errors import OpkitError
from . import dtypes, host, instances, kernel, layout, libs, tiling_view

POISON = 0xFF      # bytes of an output the OpDef does not clear (NaN for floats): unwritten elements show
DYNAMIC = 3        # ParamType(DYNAMIC): a tensor list (the host runner's describe)


def device_extent(nbytes: int) -> int:
    """Bytes a GM tensor of `nbytes` spans on the device: aclrtMalloc rounds the size up to 32 bytes and adds 32
    (CANN runtime API, aclrtMalloc / aclrtMallocAlign32: "m = ALIGN_UP[len,32] + 32"); torch_npu's caching
    allocator adds 32 bytes and rounds up to 512 (NPUCachingAllocator.cpp round_size), which covers this. A kernel
    may read or write these bytes past the tensor (whole 32-byte blocks at a tail) without touching another
    tensor, so the launch passes them as part of the buffer."""
    return (nbytes + 31) // 32 * 32 + 32


class CannOp:
    def __init__(self, project: layout.Project, op_type: str, build_dir: Path, profile: str = "ascend910b",
                 auto_sync: bool = True):
        self.project, self.op_type, self.profile = project, op_type, profile
        self.auto_sync = auto_sync  # op.yaml auto_sync: false -> built as --cce-auto-sync=off (docs/emulator.md)
        self.build_dir = Path(build_dir)
        self.runner = host.HostRunner(host.build_runner(project, self.build_dir), project)
        desc = self.runner.describe()
        ops = {o["type"]: o for o in desc["ops"]}
        if op_type not in ops:
            known = ", ".join(sorted(ops)) or "none"
            raise OpkitError(f"{project.op_host}: no OpDef registers {op_type} (OP_ADD); registered: {known}")
        self.info = ops[op_type]
        if not self.info["tiling"]:
            raise OpkitError(f"{project.op_host}: op {op_type} has no tiling function (AICore().SetTiling or "
                             "IMPL_OP_OPTILING)")
        self.tpl = desc.get("tpl")
        self.kernel = project.kernel_file(op_type)
        self.entry, self.templated = layout.entry(self.kernel, op_type)
        if self.templated and not self.tpl:
            raise OpkitError(f"{self.kernel}: the entry {self.entry} is a template but the op_host sources declare no "
                             "ASCENDC_TPL_ARGS_DECL (op_kernel/<op>_tiling_key.h included from the tiling source)")
        self.tiling_header = project.tiling_header(op_type)
        self._modules: dict[tuple, KernelModule] = {}
        self.list_sizes: dict[str, int] = {}   # op.yaml cann.lists: tensors per DYNAMIC param (register.py)

    def kernel_tiling_header(self) -> Path | None:
        """The kernel's view of the op's tiling registrations (tiling_view.py): only the registered tiling-data structs,
        as CANN's build generates them -- never the header's host-side includes and classes. The registration is
        looked up in the op's own tiling header, else anywhere in its repository (libs.py), else in the project."""
        text = tiling_view.view_for(self.op_type, self.tiling_header, self.project.libs.repo or self.project.root,
                                   kernel=self.kernel)
        if text is None:
            return None
        view = self.build_dir / "kernels" / f"{layout.cann_snake(self.op_type)}_kernel_tiling.h"
        view.parent.mkdir(parents=True, exist_ok=True)
        if not view.is_file() or view.read_text() != text:
            view.write_text(text)
        return view

    # -- what the OpDef says ------------------------------------------------------------------------
    @property
    def input_names(self) -> list[str]:
        return [p["name"] for p in self.info["inputs"]]

    @property
    def output_names(self) -> list[str]:
        return [p["name"] for p in self.info["outputs"]]

    def columns(self) -> list[dict[str, int]]:
        """The OpDef's dtype columns: {input/output name: ge dtype id} (every param lists one per column)."""
        params = self.info["inputs"] + self.info["outputs"]
        n = max((len(p["dtypes"]) for p in params), default=0)
        cols = []
        for c in range(n):
            cols.append({p["name"]: p["dtypes"][c if len(p["dtypes"]) > 1 else 0] for p in params if p["dtypes"]})
        return cols

    def column_for(self, in_dtypes: list[int | None]) -> dict[str, int]:
        for col in self.columns():
            if all(d is None or col.get(n) == d for n, d in zip(self.input_names, in_dtypes)):
                return col
        got = ", ".join(f"{n}={dtypes.name(d)}" for n, d in zip(self.input_names, in_dtypes) if d is not None)
        raise OpkitError(f"op {self.op_type}: no DataType column of its OpDef takes {got}")

    # -- template instances (ops-math layout) -------------------------------------------------------
    def decode_key(self, key: int) -> tuple[int, ...]:
        args, shift = [], 0
        for p in self.tpl["decl"]:
            v = (key >> shift) & ((1 << p["bits"]) - 1)
            shift += p["bits"]
            if p["type"] == 2:          # UINT: the key holds the index in the declared list
                if v >= len(p["vals"]):
                    raise OpkitError(f"op {self.op_type}: tiling key {key}: {p['name']} index {v} is outside "
                                     f"ASCENDC_TPL_UINT_DECL {p['vals']}")
                v = p["vals"][v]
            args.append(v)
        return tuple(args)

    def instances(self) -> list[tuple[int, ...]]:
        """Every template-argument combination ASCENDC_TPL_SEL selects (declaration order)."""
        return instances.selected(self.tpl)

    def _entry_expr(self, args: tuple[int, ...]) -> str:
        if not self.templated:
            return self.entry
        return instances.entry_expr(self.entry, self.tpl, instances.param_kinds(self.kernel, self.entry), args)

    def module(self, col: dict[str, int], args: tuple[int, ...] = ()) -> KernelModule:
        key = (tuple(sorted(col.items())), args)
        if key not in self._modules:
            defines = {}
            for name, ge in col.items():
                defines.update(dtypes.kernel_defines(name, ge))
            defines["OPKIT_CANN_OP_TYPE"] = self.op_type
            if not self.auto_sync:
                defines["OPKIT_EMU_NO_AUTO_SYNC"] = "1"
            tag = "_".join(dtypes.name(col[n]) for n in self.input_names if n in col) + \
                  ("_" + "_".join(map(str, args)) if args else "")
            path = kernel.compile_module(
                self.kernel, self._entry_expr(args), len(self.input_names) + len(self.output_names) + 2,
                self.build_dir / "kernels", defines=defines, tiling_header=self.kernel_tiling_header(),
                include_dirs=[self.project.op_kernel, self.project.root, *self.project.libs.kernel_include,
                              *libs.staged_siblings(self.project.root, self.project.op_kernel, self.project.libs.repo,
                                                    self.build_dir / "kernels")],
                profile=self.profile, tag=tag)
            self._modules[key] = KernelModule(path)
        return self._modules[key]

    # -- one call ---------------------------------------------------------------------------------
    def dynamic(self, params: str = "inputs") -> list[bool]:
        """Per IR input (or output): a DYNAMIC parameter (a tensor list; ParamType(DYNAMIC) is 3)?"""
        return [p["param_type"] == DYNAMIC for p in self.info[params]]

    def _per_ir(self, inputs: list) -> list[list[torch.Tensor]]:
        """The call's inputs as tensors per IR input: a DYNAMIC input takes a list (or tuple) of tensors, the
        others one tensor or None (an absent optional input)."""
        if len(inputs) != len(self.info["inputs"]):
            raise OpkitError(f"op {self.op_type}: {len(inputs)} inputs given, its OpDef declares "
                             f"{len(self.info['inputs'])} ({', '.join(self.input_names)})")
        out = []
        for x, p, dyn in zip(inputs, self.info["inputs"], self.dynamic()):
            if dyn:
                if not isinstance(x, (list, tuple)) or not x:
                    raise OpkitError(f"op {self.op_type}: input {p['name']} is DYNAMIC (a tensor list): give a "
                                     f"non-empty list of tensors, not {type(x).__name__}")
                out.append(list(x))
            elif isinstance(x, (list, tuple)):
                raise OpkitError(f"op {self.op_type}: input {p['name']} is one tensor (ParamType "
                                 f"{p['param_type']}), given a list")
            else:
                out.append([] if x is None else [x])
        return out

    def tiling(self, inputs: list, attrs: dict) -> dict:
        per_ir = self._per_ir(inputs)
        firsts = [ts[0] if ts else None for ts in per_ir]
        in_ge = [None if t is None else dtypes.ge_id(str(t.dtype).removeprefix("torch.")) for t in firsts]
        col = self.column_for(in_ge)
        req_in = []
        for ts, p in zip(per_ir, self.info["inputs"]):
            for t in ts:
                data = t.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes() if p["value_depend"] \
                    else None
                req_in.append((dtypes.ge_id(str(t.dtype).removeprefix("torch.")), tuple(t.shape), data))
        lead = next((tuple(t.shape) for t in firsts if t is not None), ())
        # a DYNAMIC output holds as many tensors as the first DYNAMIC input (the foreach ops: y[i] from x[i])
        n_list = next((len(ts) for ts, d in zip(per_ir, self.dynamic()) if d), 1)
        req_out = [(col[n], lead) for n, d in zip(self.output_names, self.dynamic("outputs"))
                   for _ in range(n_list if d else 1)]
        req_attrs = []
        for a in self.info["attrs"]:
            v = attrs.get(a["name"], a["default"])
            req_attrs.append((a["kind"], v))
        line = host.request_line(self.op_type, self.profile, req_in, req_out, req_attrs, [len(ts) for ts in per_ir])
        r = self.runner.request(line)
        if r.get("status") != 0:
            log = [ln for ln in self.runner.take_log() if ln.startswith("[ERROR]")][-3:]
            raise OpkitError(f"op {self.op_type}: {r.get('stage')} failed: {r.get('message')} "
                             f"(inputs {[_shapes(t) for t in inputs]}, attrs {attrs})"
                             + "".join(f"\n  its log: {ln}" for ln in log))
        r["column"] = col
        r["list_sizes"] = [n_list if d else 1 for d in self.dynamic("outputs")]
        return r

    def __call__(self, inputs: list, attrs: dict) -> list:
        """The op on `inputs` (one per IR input; a list of tensors for a DYNAMIC one): its outputs, a list of
        tensors for a DYNAMIC output. A tensor list reaches the kernel as CANN's runtime passes it, one GM address
        holding a ListTensorDesc (list_buffer)."""
        r = self.tiling(inputs, attrs)
        if r["block_dim"] == 0:
            raise OpkitError(f"op {self.op_type}: the TilingFunc set no block dim (context->SetBlockDim)")
        args = self.decode_key(r["tiling_key"]) if self.templated else ()
        if self.templated and args not in self.instances():
            raise OpkitError(f"op {self.op_type}: tiling key {r['tiling_key']} means template arguments {args}, "
                             "which ASCENDC_TPL_SEL does not select (CANN builds no such kernel)")
        mod = self.module(r["column"], args)
        flat = iter(r["outputs"])
        outs = []      # per IR output: its tensors
        for p, n in zip(self.info["outputs"], r["list_sizes"]):
            ts = []
            for _ in range(n):
                o = next(flat)
                t = torch.empty(o["shape"], dtype=getattr(torch, dtypes.name(o["dtype"])))
                t.reshape(-1).view(torch.uint8).fill_(0 if p["init_value"] else POISON)
                ts.append(t)
            outs.append(ts)
        ws = int(sum(r["workspace"]))
        # per buffer, its data extent (launch_abi.h arg_data_bytes): a tensor's own bytes, the rest of its
        # device_extent is padding nobody reads (a 0-byte tensor: 0, all of its 32 bytes padding; KernelModule.launch
        # passes that as a member, the ABI's 0 being "all"); a list buffer: each member's own (list_members); None
        # (all of it) for the workspace and the tiling
        bufs, spans, extents, members = [], [], [], []
        for ts, dyn in zip(self._per_ir(inputs), self.dynamic()):
            if dyn:
                ts = [t.detach().contiguous() for t in ts]
                buf, offs = list_buffer(ts)
                bufs.append(buf)
                extents.append(None)
                members.append(_members(ts, offs))
            else:
                data = _bytes(ts[0].detach().contiguous()) if ts else None
                bufs.append(_device(data) if ts else None)
                extents.append(data.nbytes if ts else None)
                members.append(None)
        for ts, dyn in zip(outs, self.dynamic("outputs")):
            if dyn:
                buf, offs = list_buffer(ts)
                extents.append(None)
                members.append(_members(ts, offs))
            else:
                buf, offs = _device(_bytes(ts[0])), [0]
                extents.append(ts[0].numel() * ts[0].element_size())
                members.append(None)
            bufs.append(buf)
            spans.append((buf, offs))
        bufs.append(_device(np.zeros(ws, np.uint8)) if ws else None)
        # the tiling buffer stays exact: reading past SetDataSize is the kernel's bug (gm-bounds GET_TILING_DATA)
        bufs.append(np.frombuffer(bytes.fromhex(r["tiling"]), np.uint8).copy() if r["data_size"] else None)
        extents += [None, None]
        members += [None, None]
        mod.launch(bufs, r["block_dim"], tiling_key=r["tiling_key"], data_bytes=extents, list_members=members)
        for ts, (buf, offs) in zip(outs, spans):
            for t, off in zip(ts, offs):
                _bytes(t)[:] = buf[off:off + t.numel() * t.element_size()]
        return [ts if dyn else ts[0] for ts, dyn in zip(outs, self.dynamic("outputs"))]

    def close(self):
        self.runner.close()


def list_buffer(tensors: list[torch.Tensor]) -> tuple[np.ndarray, list[int]]:
    """A tensor list as one GM buffer in the layout CANN's runtime passes a DYNAMIC parameter in and the kernel's
    ListTensorDesc reads (asc-devkit@82b89a15 impl/basic_api/dav_c220/kernel_operator_list_tensor_impl.h, as
    the emulator decodes it, opkit_emu/list_tensor.h; ops-nn foreach_utils/op_kernel/kernel_foreach_base.h:
    101-107 reads the pointers the same way): 64-bit words -- [0] the byte offset of the pointer array;
    per tensor (index << 32 | dim) then its dim sizes; the pointer array; then, in the same buffer, each tensor's
    data with its device extent (device_extent, the gaps POISON). Returns the buffer and each tensor's data
    offset. The emulator knows the list as one GM buffer: a kernel running past one tensor into the next
    stays inside it (only the list's end is gm-bounds)."""
    if not tensors:
        raise OpkitError("a tensor list needs at least one tensor")
    ts = [t.reshape(1) if t.dim() == 0 else t for t in tensors]   # a 0-d tensor is described as shape (1,)
    dim = ts[0].dim()
    if any(t.dim() != dim for t in ts):
        raise OpkitError(f"a tensor list's tensors must have one rank (ListTensorDesc describes them with one "
                         f"stride): got ranks {[t.dim() for t in ts]}")
    head = 1 + len(ts) * (1 + dim)
    ptr_off = head * 8
    offs, pos = [], ptr_off + len(ts) * 8
    for t in ts:
        pos = (pos + 31) // 32 * 32              # each tensor 32-byte aligned, as the device allocates it
        offs.append(pos)
        pos += device_extent(t.numel() * t.element_size())
    buf = np.full(pos, POISON, np.uint8)
    words = buf[:ptr_off + len(ts) * 8].view(np.uint64)
    words[0] = ptr_off
    for i, t in enumerate(ts):
        base = 1 + i * (1 + dim)
        words[base] = (i << 32) | dim
        words[base + 1:base + 1 + dim] = list(t.shape)
        words[head + i] = buf.ctypes.data + offs[i]
        data = _bytes(t.detach().contiguous())
        buf[offs[i]:offs[i] + data.nbytes] = data
    return buf, offs


def _members(ts: list[torch.Tensor], offs: list[int]) -> list[tuple[int, int, int]]:
    """A list buffer's members for the launch (KernelModule.launch list_members): each tensor's offset, its own
    bytes and the device extent list_buffer gave it, so a tail written into one member's padding is padding (a
    0-byte member's whole extent: a member's data 0 is 0 bytes, unlike arg_data_bytes' 0)."""
    out = []
    for t, off in zip(ts, offs):
        n = t.numel() * t.element_size()
        out.append((off, n, device_extent(n)))
    return out


def _shapes(x):
    """An input's shape for a message: a tuple, a list of them for a tensor list, None when absent."""
    return None if x is None else [tuple(t.shape) for t in x] if isinstance(x, (list, tuple)) else tuple(x.shape)


def _device(data: np.ndarray) -> np.ndarray:
    """A GM buffer as the device allocates it (device_extent): the data, then garbage (POISON bytes)."""
    buf = np.full(device_extent(data.nbytes), POISON, np.uint8)
    buf[:data.nbytes] = data
    return buf


def _bytes(t: torch.Tensor) -> np.ndarray:
    """The tensor's storage as a uint8 numpy view (bf16 has no numpy dtype)."""
    return t.reshape(-1).view(torch.uint8).numpy()
