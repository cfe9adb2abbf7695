"""Model-level accuracy: `opkit diagnose`, per-layer accuracy of a model under a device precision policy, simulated on the CPU.

Modules: policy.py (policy files, policies/*.yaml), simulate.py (running a model under a policy),
layers.py (per-layer metrics, msprobe verdict), diagnose.py (``diagnose()``: rescue ablation, greedy
recommendation, the patched run), report.py (text / JSON / HTML), dump.py (``opkit dump`` / ``compare``),
baseline.py (baseline gates for ``opkit test`` and ``opkit diagnose``). Docs: docs/diagnose.md.
"""
from .diagnose import diagnose, load_data
from .policy import Policy, builtin_names, load_policy
from .report import DiagnoseReport

__all__ = ["diagnose", "DiagnoseReport", "Policy", "load_policy", "builtin_names", "load_data"]
