"""opkit's exceptions. Each names the file, field or API call at fault."""
from __future__ import annotations

import re


class OpkitError(Exception):
    """Base class: a user-facing error; the CLI prints it and exits non-zero."""


class SpecError(OpkitError):
    """op.yaml is invalid. The message starts with ``<file>:<line>: <field>:``."""


class BuildError(OpkitError):
    """A build step failed; the message carries the tool's own output."""


# The one format every emulator rule violation uses, in C++ (launch result, ICPU_RUN_KF's stderr,
# TORCH_CHECK messages) and Python:  opkit emulator: [<rule>] <call> at <file>:<line> (block <b>): <detail>
_EMU_RE = re.compile(
    r"opkit emulator: \[(?P<rule>[\w-]+)\] (?P<call>\S+) at (?P<file>.+?):(?P<line>\d+)"
    r" \(block (?P<block>-?\d+)\): (?P<detail>.*)", re.S)


class EmulatorError(OpkitError, RuntimeError):
    """A kernel broke an AscendC hardware rule on the emulator."""

    def __init__(self, rule: str, call: str, file: str, line: int, block: int, detail: str):
        self.rule, self.call, self.file, self.line, self.block, self.detail = rule, call, file, line, block, detail
        super().__init__(f"opkit emulator: [{rule}] {call} at {file}:{line} (block {block}): {detail}")

    @classmethod
    def from_message(cls, text: str) -> "EmulatorError | None":
        """Parse a violation out of any message (e.g. a torch RuntimeError); None if there is none."""
        m = _EMU_RE.search(text)
        if not m:
            return None
        return cls(m["rule"], m["call"], m["file"], int(m["line"]), int(m["block"]), m["detail"].strip())
