"""Crash and hang watchdog of harness cases: per-process files that outlive a crash.

Before a case runs, the worker writes which case is in flight, arms faulthandler (its C thread dumps the
stacks and exits the process on a hang, even while a kernel holds the GIL) and sends fd 2 to a file, so an
emulator message printed before an abort survives. The controlling process reads them back when a worker
dies (read_crash) and turns them into one line (crash_reason).
"""
from __future__ import annotations

import faulthandler
import json
import os
import time
from contextlib import contextmanager
from pathlib import Path


class CrashFiles:
    """Per-process files that outlive a crash: the case in flight, its stderr, the fault handler's dump."""

    def __init__(self, folder: Path, wid: str):
        self.folder, self.wid = folder, wid
        self.inflight = folder / f"{wid}.inflight"
        self.stderr = folder / f"{wid}.stderr"
        self.fault = folder / f"{wid}.fault"
        self._fault_file = None

    def arm(self) -> None:
        if self._fault_file is None:
            self._fault_file = open(self.fault, "w")
            faulthandler.enable(file=self._fault_file, all_threads=False)

    def begin(self, nodeid: str, timeout: float) -> None:
        self.arm()
        self.inflight.write_text(json.dumps({"nodeid": nodeid, "start": time.time(), "timeout": timeout}))
        # The hang watchdog: faulthandler's C thread dumps the stacks into the fault file and exits the
        # process, even while the kernel holds the GIL. (pytest-timeout's thread method needs the terminal
        # reporter, which `opkit test` replaces by its progress bar.)
        faulthandler.dump_traceback_later(timeout, exit=True, file=self._fault_file)

    def end(self) -> None:
        faulthandler.cancel_dump_traceback_later()
        self.inflight.unlink(missing_ok=True)

    @contextmanager
    def stderr_to_file(self):
        """fd 2 -> our file for the op call, so an emulator message printed before an abort survives."""
        saved = os.dup(2)
        with open(self.stderr, "w+b") as f:
            os.dup2(f.fileno(), 2)
            try:
                yield f
            finally:
                os.dup2(saved, 2)
                os.close(saved)


def read_crash(folder: Path, wid: str) -> dict:
    cf = CrashFiles(folder, wid)
    info = {}
    try:
        info.update(json.loads(cf.inflight.read_text()))
    except (OSError, ValueError):
        pass
    # stderr: its tail holds the last message. fault: its head holds the verdict ("Fatal Python error: ..."
    # or "Timeout (...)!"); a deep pytest stack with long site-packages paths runs past 4 KB after it.
    for name, p, cut in (("stderr", cf.stderr, slice(-4000, None)), ("fault", cf.fault, slice(0, 4000))):
        try:
            info[name] = p.read_text(errors="replace")[cut]
        except OSError:
            info[name] = ""
    return info


def crash_reason(info: dict) -> str:
    from ..errors import EmulatorError

    start, timeout = info.get("start"), info.get("timeout")
    elapsed = time.time() - start if start else None
    emu = EmulatorError.from_message(info.get("stderr", ""))
    if emu is not None:
        return (f"process aborted on emulator rule [{emu.rule}] by {emu.call} at {emu.file}:{emu.line} "
                f"(block {emu.block}): {emu.detail}")
    fault = info.get("fault", "")
    if "Timeout (" in fault or (elapsed is not None and timeout and elapsed >= 0.9 * timeout):
        return f"timed out after {timeout:g} s (the kernel hangs or is far too slow)"
    for line in fault.splitlines():
        if line.startswith("Fatal Python error:"):
            return f"process crashed: {line.split(':', 1)[1].strip()}"
    return "process crashed (no message; the worker died)"
