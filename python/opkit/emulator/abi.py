"""ctypes mirror of python/opkit/include/opkit/launch_abi.h, to call a kernel module without torch.

Used by the emulator's benchmark and tests; the torch binding uses the C header directly.
"""
from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from opkit.errors import EmulatorError

ABI_VERSION = 3
LAUNCH_FAST = 1      # OPKIT_LAUNCH_FAST: skip the per-call rules (docs/emulator.md "Checked once, then fast")
LAUNCH_ALT_FILL = 2  # with it: fresh UB buffers hold 0x5A, not the checked launch's 0xFF
MAX_GM_ARGS = 32


class LaunchArgs(ctypes.Structure):
    _fields_ = [
        ("abi_version", ctypes.c_uint32),
        ("block_dim", ctypes.c_uint32),
        ("num_args", ctypes.c_uint32),
        ("args", ctypes.c_void_p * MAX_GM_ARGS),
        ("arg_bytes", ctypes.c_uint64 * MAX_GM_ARGS),
        ("tiling_key", ctypes.c_uint64),
        ("threads", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("arg_data_bytes", ctypes.c_uint64 * MAX_GM_ARGS),
    ]


class LaunchStats(ctypes.Structure):
    _fields_ = [
        ("gm_read_bytes", ctypes.c_uint64),
        ("gm_write_bytes", ctypes.c_uint64),
        ("vector_elems", ctypes.c_uint64),
        ("vector_repeats", ctypes.c_uint64),
        ("ub_high_water", ctypes.c_uint64),
        ("max_block_gm_bytes", ctypes.c_uint64),
        ("max_block_vector_repeats", ctypes.c_uint64),
        ("blocks", ctypes.c_uint32),
    ]


class LaunchResult(ctypes.Structure):
    _fields_ = [
        ("status", ctypes.c_int32),
        ("rule", ctypes.c_char * 64),
        ("call", ctypes.c_char * 64),
        ("file", ctypes.c_char * 512),
        ("line", ctypes.c_int32),
        ("block", ctypes.c_int32),
        ("message", ctypes.c_char * 1024),
        ("stats", LaunchStats),
    ]


class KernelModule:
    """A compiled kernel module (`OPKIT_EMU_DEFINE_MODULE`), loaded RTLD_LOCAL."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lib = ctypes.CDLL(str(self.path), mode=os.RTLD_LOCAL | os.RTLD_NOW)
        self._fn = self._lib.opkit_kernel_launch
        self._fn.argtypes = [ctypes.POINTER(LaunchArgs), ctypes.POINTER(LaunchResult)]
        self._fn.restype = ctypes.c_int32

    def launch(self, buffers: Sequence[np.ndarray | None], block_dim: int, *, tiling_key: int = 0,
               threads: int = 0, fast: bool = False, alt_fill: bool = False,
               data_bytes: Sequence[int | None] | None = None,
               list_members: Sequence[Sequence[tuple[int, int, int]] | None] | None = None) -> dict:
        """Run the kernel; buffers are C-contiguous numpy arrays (GM), None for an absent one. fast: skip the
        per-call rules (only for a launch whose tiling and GM sizes passed them once); alt_fill (with fast):
        fresh UB buffers hold 0x5A instead of being left as they were. data_bytes: per buffer, the bytes of real
        data at its start (the rest is allocation padding the kernel may write garbage into; launch_abi.h
        arg_data_bytes); None, or None for a buffer: all of it. list_members: per buffer, for a tensor list's
        buffer, each member's (offset, data bytes, allocation bytes), so each member's own padding is padding
        (opkit_kernel_set_list_members); None: the buffer is one tensor. A buffer's members override its
        data_bytes (a copy outside every member's allocation treats all of the buffer as data). A data_bytes of 0
        is an empty tensor (all of its buffer padding): the ABI's arg_data_bytes 0 means "all", so it goes to the
        module as one member (0, 0, buffer bytes) -- modules built before opkit_kernel_set_list_members refuse it.
        Returns the stats as a dict; raises EmulatorError on a rule violation, RuntimeError otherwise."""
        if data_bytes is not None and len(data_bytes) != len(buffers):
            raise ValueError(f"data_bytes has {len(data_bytes)} entries for {len(buffers)} buffers")
        if list_members and len(list_members) != len(buffers):
            raise ValueError(f"list_members has {len(list_members)} entries for {len(buffers)} buffers")
        members = list(list_members) if list_members else [None] * len(buffers)
        a = LaunchArgs()
        a.abi_version, a.block_dim, a.num_args = ABI_VERSION, block_dim, len(buffers)
        a.tiling_key, a.threads, a.flags = tiling_key, threads, \
            (LAUNCH_FAST | (LAUNCH_ALT_FILL if alt_fill else 0)) if fast else 0
        for i, b in enumerate(buffers):
            if b is None:
                continue
            if not b.flags["C_CONTIGUOUS"]:
                raise ValueError(f"GM argument {i} is not C-contiguous")
            a.args[i] = b.ctypes.data
            a.arg_bytes[i] = b.nbytes
            n = b.nbytes if data_bytes is None or data_bytes[i] is None else int(data_bytes[i])
            if b.nbytes and not 0 <= n <= b.nbytes:
                raise ValueError(f"GM argument {i}: data_bytes {n} is outside [0, {b.nbytes}] (its buffer's bytes)")
            if n == 0 and b.nbytes and not members[i]:
                members[i] = [(0, 0, b.nbytes)]   # the empty extent arg_data_bytes cannot say (its 0 is "all")
            a.arg_data_bytes[i] = n
        self._set_list_members(members)  # last: nothing after it may raise
        r = LaunchResult()
        self._fn(ctypes.byref(a), ctypes.byref(r))
        if r.status == 1:
            raise EmulatorError(r.rule.decode(), r.call.decode(), r.file.decode(), r.line, r.block,
                                EmulatorError.from_message(r.message.decode()).detail)
        if r.status != 0:
            raise RuntimeError(r.message.decode())
        return {name: getattr(r.stats, name) for name, _ in LaunchStats._fields_}

    def _set_list_members(self, list_members: Sequence[Sequence[tuple[int, int, int]] | None]) -> None:
        """Give the module every buffer's members (one entry per buffer: launch checks the count) for the next launch,
        or none: all are checked before the first is set, and a refusal clears the ones set (left pending, they would
        apply to the thread's next launch)."""
        flats = []
        for i, ms in enumerate(list_members):
            if not ms:
                continue
            try:
                vals = [int(v) for m in ms for v in m] if all(len(m) == 3 for m in ms) else [-1]
            except (TypeError, ValueError):
                vals = [-1]
            if not all(0 <= v < 2**64 for v in vals):
                raise ValueError(f"GM argument {i}: list_members must be (offset, data bytes, allocation bytes) "
                                 f"triples of non-negative 64-bit integers, got {list(ms)}")
            flats.append((i, len(ms), (ctypes.c_uint64 * len(vals))(*vals)))
        if not flats:
            return
        fn = getattr(self._lib, "opkit_kernel_set_list_members", None)
        if fn is None:
            raise RuntimeError(f"kernel module {self.path} has no opkit_kernel_set_list_members (built by an older "
                               "opkit): run `opkit build` again")
        for k, (i, n, flat) in enumerate(flats):
            if fn(ctypes.c_uint32(i), ctypes.c_uint32(n), flat) != 0:
                for j, _, _ in flats[:k]:
                    fn(ctypes.c_uint32(j), ctypes.c_uint32(0), None)
                raise ValueError(f"GM argument {i}: list_members refused (the argument index is past the ABI's "
                                 f"{MAX_GM_ARGS})")
