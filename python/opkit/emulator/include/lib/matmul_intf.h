// CANN's lib/matmul_intf.h: the Matmul high-level API, which runs on the cube (matrix) unit.
#pragma once
#error "not supported on the emulator: lib/matmul_intf.h (Matmul runs on the cube unit, which the emulator does not run; see docs/cann.md)"
