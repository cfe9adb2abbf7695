"""The `opkit` command, every subcommand of it (docs/cli.md). One module per group of commands, each
registering on the click group in app.py:

  ops.py     new / build / test / list / cflags   (the op loop)
  model.py   scan / diagnose / dump / compare     (model-level tools; MODEL loaded by one function)
  evaluate.py eval / golden-set / experiment      (labelled data: opkit.evaluate, opkit.experiment)
  quant.py   quant                                (AMCT INT8 + ATC fusions + fp16 overflow: opkit.quant)
  tbe.py     import-tbe                           (the TBE language)
  cann.py    import-cann                          (CANN custom-op projects: opkit.cannproject)
  options.py the options several commands share (one declaration each); console.py the consoles

A new command goes in one of these modules, or in a new module listed below (docs/architecture.md "Layers").
Commands stay thin: parse options, call the layer below, print.
"""
from __future__ import annotations

from . import cann, evaluate, model, ops, quant, tbe  # noqa: F401 - each registers its commands on `cli`
from .app import cli, main

__all__ = ["cli", "main"]
