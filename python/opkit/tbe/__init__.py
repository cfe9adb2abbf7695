"""TBE ops in opkit (docs/tbe.md): a CPU emulation of the TBE DSL (graph, dsl, legacy, tvm, platform,
checks, shims), running op folders with ``lang: tbe`` (runner, build, register), ``opkit import-tbe``
(importer, ini, proto), ``opkit test --compare-langs`` (compare) and the NPU op project (package)."""
