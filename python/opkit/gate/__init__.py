"""The CI accuracy gate (docs/ci.md): a pytest plugin (plugin.py, entry point ``opkit_accuracy``) judging top-1
results against the best stored in ``.npu-accuracy-baseline`` (baseline.py), with an HTML history report
(report.py)."""
