"""`opkit experiment`: which change recovers how many points of top-1, and the configuration to deploy.

run.py (the variants and the verdict), shapes.py (static vs bucketed/padded shapes, buckets from observed
sizes), cost.py (modelled throughput: a roofline per aten op, an estimate), report.py (text). Docs:
docs/experiment.md.
"""
from .run import experiment

__all__ = ["experiment"]
