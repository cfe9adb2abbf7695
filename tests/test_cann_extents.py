"""The data extents `opkit import-cann` passes to a launch (python/opkit/cannproject/op.py CannOp.__call__;
launch_abi.h arg_data_bytes; docs/emulator.md "Data extent"): each tensor's own bytes inside its aclrtMalloc-sized
buffer (a 0-byte tensor: 0, all of its buffer padding); for a tensor list, all of the buffer as one extent and each
member's own bytes (list_members); None (all of the buffer) for an absent input, the workspace and the tiling.
The CannOp is built without a CANN project: its tiling and kernel module are stand-ins that record the launch."""
from __future__ import annotations

import numpy as np
import torch

from opkit.cannproject.op import CannOp, device_extent


class _RecordingModule:
    def launch(self, bufs, block_dim, *, tiling_key=0, data_bytes=None, list_members=None):
        self.bufs, self.data_bytes, self.list_members = bufs, data_bytes, list_members


def _fake_op(inputs: list, outputs: list, r: dict) -> tuple[CannOp, _RecordingModule]:
    """A CannOp without a project or host runner (only what __call__ reads): its tiling returns ``r`` and its
    kernel module records the launch."""
    op = CannOp.__new__(CannOp)
    op.op_type, op.templated = "Fake", False
    op.info = {"inputs": inputs, "outputs": outputs}
    mod = _RecordingModule()
    op.tiling = lambda ins, attrs: r
    op.module = lambda column, args: mod
    return op, mod


def test_cann_import_passes_each_tensors_bytes_as_its_data_extent():
    r = {"block_dim": 1, "tiling_key": 0, "column": 0, "list_sizes": [1, 2], "workspace": [64],
         "tiling": "00" * 8, "data_size": 8,
         "outputs": [{"shape": [3, 72], "dtype": 1}, {"shape": [5], "dtype": 0}, {"shape": [7], "dtype": 0}]}
    op, mod = _fake_op([{"name": "x", "param_type": 1}, {"name": "xs", "param_type": 3},
                        {"name": "e", "param_type": 1}, {"name": "opt", "param_type": 0}],
                       [{"name": "y", "param_type": 1, "init_value": False},
                        {"name": "ys", "param_type": 3, "init_value": False}], r)
    x = torch.ones(3, 72, dtype=torch.float16)
    op([x, [torch.ones(4), torch.ones(9)], torch.ones(0), None], {})
    # x: 432 of device_extent(432) = 480 (ReluV3's case); the list: all; the 0-byte tensor: 0, its 32 bytes all
    # padding (before: None, all data -- KernelModule.launch passes the 0 as a member, the ABI's 0 being "all"); the
    # absent input; y: 432 bytes; the output list: all; the workspace and tiling: all
    assert mod.data_bytes == [432, None, 0, None, 432, None, None, None]
    # each list member: (offset in the list buffer, its bytes, its device extent) -- a tail into one member's
    # padding is padding (before: the whole list was data); 5 descriptor words + 2 pointers, members 32-aligned
    assert mod.list_members == [None, [(64, 16, 64), (128, 36, 96)], None, None,
                                None, [(64, 20, 64), (128, 28, 64)], None, None]
    assert [None if b is None else b.nbytes for b in mod.bufs][:5] == \
        [device_extent(432), mod.bufs[1].nbytes, device_extent(0), None, device_extent(432)]


def test_a_zero_byte_list_member_is_passed_as_all_padding():
    # a member's data 0 is 0 bytes (the launch treats its whole extent as padding), unlike arg_data_bytes' 0 ("all"):
    # so a 0-byte tensor in a list gets its entry (before: none, and its 32 bytes were data)
    r = {"block_dim": 1, "tiling_key": 0, "column": 0, "list_sizes": [1], "workspace": [0],
         "tiling": "", "data_size": 0, "outputs": [{"shape": [4], "dtype": 0}]}
    op, mod = _fake_op([{"name": "xs", "param_type": 3}],
                       [{"name": "y", "param_type": 1, "init_value": False}], r)
    op([[torch.ones(4), torch.ones(0)]], {})
    # 1 + 2 * 2 descriptor words + 2 pointers = 56 bytes, members 32-aligned
    assert mod.list_members[0] == [(64, 16, 64), (128, 0, device_extent(0))]


def test_a_zero_byte_output_is_passed_as_an_empty_extent():
    # an empty output gets its 32-byte device buffer and data extent 0 (before: None, all of it data, so a block
    # of garbage the kernel copies into it failed where the device is fine)
    r = {"block_dim": 1, "tiling_key": 0, "column": 0, "list_sizes": [1], "workspace": [0],
         "tiling": "", "data_size": 0, "outputs": [{"shape": [0, 4], "dtype": 0}]}
    op, mod = _fake_op([{"name": "x", "param_type": 1}],
                       [{"name": "y", "param_type": 1, "init_value": False}], r)
    (y,) = op([torch.ones(0, 4)], {})
    assert mod.data_bytes == [0, 0, None, None] and mod.list_members == [None] * 4
    assert [b.nbytes for b in mod.bufs[:2]] == [device_extent(0)] * 2 and y.shape == (0, 4)
