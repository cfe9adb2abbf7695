"""Padding across launches in `opkit run-asc` (test_asc_padding.asc; opkit_emu/gm_pad.h gm_pad_begin): what one
launch writes into an aclrtMalloc buffer's padding stays written for the next launch, as on the device, until
aclrtFree; padding nobody ever wrote is garbage wherever it is used."""
from __future__ import annotations

from pathlib import Path

from conftest import run_asc

PROGRAM = Path(__file__).resolve().parent / "test_asc_padding.asc"
# the garbage sum is caught where it reaches GM data: sum_all's store of the sum
STORE = next(i for i, s in enumerate(PROGRAM.read_text().splitlines(), 1) if "DataCopy(oGm, sum, 8)" in s)


def test_padding_one_launch_wrote_is_defined_in_the_next():
    r = run_asc(str(PROGRAM))
    assert r.returncode == 0 and "sum 100" in r.stdout and "test pass!" in r.stdout, r.stdout + r.stderr


def test_padding_nobody_wrote_is_garbage_in_a_later_launch():
    r = run_asc(str(PROGRAM), defines=["SKIP_ZERO_TAIL"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "[ub-uninitialized] DataCopy" in r.stderr and f"test_asc_padding.asc:{STORE} " in r.stderr, r.stderr


def test_a_new_allocation_forgets_the_freed_ones_padding():
    r = run_asc(str(PROGRAM), defines=["REALLOC"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "[ub-uninitialized] DataCopy" in r.stderr and f"test_asc_padding.asc:{STORE} " in r.stderr, r.stderr


def test_aclrtmalloc_too_large_to_round_is_bad_alloc():
    """ALIGN_UP(size, 32) + 32 wraps for a size near SIZE_MAX (before: a 32-byte buffer and success, so a copy
    bounded by `size` ran past it)."""
    r = run_asc(str(PROGRAM), defines=["HUGE_MALLOC"])
    assert r.returncode == 0 and "huge: ACL_ERROR_BAD_ALLOC" in r.stdout, r.stdout + r.stderr
    assert "aclrtMalloc" in r.stderr and "too large" in r.stderr, r.stderr
