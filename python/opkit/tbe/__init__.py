"""TBE ops in opkit (docs/tbe.md): a CPU emulation of the TBE DSL (graph, dsl, legacy, tvm, platform,
checks, shims), running op folders with ``lang: tbe`` (runner, build, register), ``opkit import-tbe``
(importer, ini, proto) and the NPU op project (package).

A language package: it imports no target, neither the harness nor the loader. The build router
(opkit/build.py) calls build.build (target cpu) and package.build_npu (target npu); the loader registers
through register.register; `opkit test --compare-langs` lives in opkit/harness/compare_langs.py."""
