"""CANN custom-op projects as they are (docs/cann.md): `opkit import-cann PROJECT` takes a project in msOpGen's
layout (op_host/<op>_tiling.h + op_host/<op>.cpp + op_kernel/<op>.cpp) or the ops-math/ops-nn layout
(op_host/<op>_def.cpp + op_host/<op>_tiling.cpp, template-argument tiling keys, op_kernel/<op>_tiling_data.h)
into an op folder without editing it; `opkit build` / `opkit test` then run the project's own TilingFunc on
a CPU gert::TilingContext per case and its kernel on the emulator.

layout.py   what a project holds (op_host / op_kernel files, kernel entry, template or not)
dtypes.py   ge::DataType ids <-> torch dtypes <-> the kernel's C++ types
host.py     the host runner: op_host/*.cpp + opkit's CPU gert/ops stand-in (include/), one process per op
kernel.py   the kernel as emulator modules: one per dtype column (msOpGen) or template instance (ops-math)
op.py       one call: tiling, output allocation, launch
register.py, build.py, importer.py, cli.py   the op folder (`lang: cann`) in opkit's build / load / CLI
"""
