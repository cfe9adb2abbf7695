"""The op spec: ``ops/<op>/op.yaml`` loaded into plain dataclasses (model.py) by a checker that names
``<file>:<line>: <field>`` for every mistake (check.py, on yaml_nodes.py)."""
from .check import FAMILIES, load_spec, parse_spec
from .model import (DTYPES, REDUCE_SHAPE, dtype_names, AccuracySpec, AttrSpec, BackwardSpec, InputSpec, OpSpec, OutputSpec,
                    TestSpec)

__all__ = ["DTYPES", "REDUCE_SHAPE", "dtype_names", "FAMILIES", "AccuracySpec", "AttrSpec", "BackwardSpec", "InputSpec", "OpSpec",
           "OutputSpec", "TestSpec", "load_spec", "parse_spec"]
