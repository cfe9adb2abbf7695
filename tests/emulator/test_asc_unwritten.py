"""Device memory nothing wrote, inside its size, in `opkit run-asc` (test_asc_unwritten.asc; opkit_emu/gm_pad.h
gm_data_begin, acl/acl_rt.h): aclrtMalloc does not initialise what it allocates (CANN runtime API, aclrtMalloc), so
an aclrtMalloc buffer's data is garbage until aclrtMemset, a host-to-device copy or a kernel writes it -- loading it
and not using it passes, using it fails `ub-uninitialized`, a device-to-host copy of it warns. Before, those bytes
were zeros that counted as written: every failing case below passed."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_asc

PROGRAM = Path(__file__).resolve().parent / "test_asc_unwritten.asc"
LINES = PROGRAM.read_text().splitlines()
STORE = max(i for i, s in enumerate(LINES, 1) if "DataCopy(yGm, tx, N);" in s)  # acc's store of y
GETVALUE = next(i for i, s in enumerate(LINES, 1) if "yGm.GetValue(3)" in s)
BYPASS_READ = next(i for i, s in enumerate(LINES, 1) if "ReadGmByPassDCache(" in s)


@pytest.mark.parametrize(
    "define", [None, "INIT_BY_COPY", "INIT_BY_KERNEL", "LOAD_UNUSED", "RAW_INIT", "MEMSET_ASYNC", "COPY_ASYNC",
               "BYPASS_WRITE"])
def test_memory_written_before_use_or_loaded_and_not_used_passes(define):
    r = run_asc(str(PROGRAM), defines=[define] if define else [])
    assert r.returncode == 0 and "test pass!" in r.stdout, r.stdout + r.stderr
    assert "opkit emulator" not in r.stderr and "opkit acl" not in r.stderr, r.stderr


@pytest.mark.parametrize("define", ["NO_INIT", "INIT_BY_D2D", "RAW_PART"])
def test_memory_nothing_wrote_used_as_data_fails_where_it_reaches_gm(define):
    """acc adds y's never-written bytes (or bytes copied device to device from a buffer nothing wrote, or all but the
    first aligned word a raw __gm__ store wrote) into x and stores the sum into y's data. RAW_INIT (passing, above) is
    the other side: a raw store of 0.8515625f (00 00 5A 3F) defines its word although one byte holds the garbage fill
    (before: that byte stayed garbage, a false ub-uninitialized)."""
    r = run_asc(str(PROGRAM), defines=[define])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "[ub-uninitialized] DataCopy" in r.stderr and f"test_asc_unwritten.asc:{STORE} " in r.stderr, r.stderr


@pytest.mark.parametrize("define, call, line, byte", [("SCALAR_READ", "GlobalTensor::GetValue", GETVALUE, 12),
                                                      ("BYPASS_READ", "ReadGmByPassDCache", BYPASS_READ, 20)])
def test_a_scalar_read_of_memory_nothing_wrote_fails_naming_the_byte(define, call, line, byte):
    """GetValue, and ReadGmByPassDCache as GetValue does (BYPASS_WRITE, passing above, is the other side: it
    defines)."""
    r = run_asc(str(PROGRAM), defines=[define])
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"[ub-uninitialized] {call} at {PROGRAM}:{line} " in r.stderr, r.stderr
    assert f"GM byte {byte} of an aclrtMalloc buffer is garbage" in r.stderr, r.stderr


def test_copying_memory_nothing_wrote_to_the_host_warns_and_hands_over_garbage():
    """A device-to-host copy of garbage is legal (a warning), and the host gets garbage, not zeros: an atomic add
    onto a buffer nobody zeroed gives the program a wrong result of its own (before: zeros, and it passed)."""
    r = run_asc(str(PROGRAM), defines=["D2H_UNWRITTEN"])
    assert r.returncode == 0 and "test pass!" in r.stdout, r.stdout + r.stderr
    assert "[acl-uninitialized]" in r.stderr and "copies 256 bytes of device garbage" in r.stderr, r.stderr
    r = run_asc(str(PROGRAM), defines=["ATOMIC"])
    assert r.returncode == 1 and "mismatch at 0" in r.stdout, r.stdout + r.stderr
    assert "[acl-uninitialized]" in r.stderr and "opkit emulator" not in r.stderr, r.stderr


def test_an_ibwait_on_a_workspace_nothing_wrote_says_the_word_was_never_written():
    """The flag holds the garbage fill; the sync-all failure says why, not only the number (review fid14 finding 4)."""
    r = run_asc(str(PROGRAM), defines=["IB_WAIT"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "[sync-all] IBWait" in r.stderr and "stays 1515870810" in r.stderr, r.stderr
    assert "that word was never written" in r.stderr and "aclrtMemset" in r.stderr, r.stderr


def test_a_2d_copy_of_memory_nothing_wrote_to_the_host_warns_once_for_the_call():
    """8 rows of garbage, one warning with their total (before: a line per row)."""
    r = run_asc(str(PROGRAM), defines=["COPY2D"])
    assert r.returncode == 0 and "test pass!" in r.stdout, r.stdout + r.stderr
    assert r.stderr.count("[acl-uninitialized]") == 1, r.stderr
    assert "aclrtMemcpy2d copies 256 bytes of device garbage" in r.stderr, r.stderr
