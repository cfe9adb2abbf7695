"""The modelled 910B device time (python/opkit/roofline.py): a model with estimated figures."""
import pytest

from opkit import roofline as R


def stats(gm, reps, blocks, busiest_gm=None, busiest_reps=None):
    return {"gm_read_bytes": gm // 2, "gm_write_bytes": gm - gm // 2, "vector_repeats": reps, "blocks": blocks,
            "max_block_gm_bytes": busiest_gm if busiest_gm is not None else gm // blocks,
            "max_block_vector_repeats": busiest_reps if busiest_reps is not None else reps // blocks}


def test_balanced_memory_bound_launch_sits_on_the_hbm_floor():
    gm = 48 * 1 << 20
    m = R.model(stats(gm, 48 * 10, 48), ideal_bytes=gm)
    assert m["estimate"] is True and m["bound"] == "memory"
    assert m["modelled_s"] == pytest.approx(gm / R.HBM_BYTES_PER_S)
    assert m["vs_floor"] == pytest.approx(1.0)


def test_few_blocks_cannot_reach_full_bandwidth_and_waves_serialise():
    gm = 1 << 20
    one = R.model(stats(gm, 10, 1), ideal_bytes=gm)
    assert one["vs_floor"] == pytest.approx(R.AIV_CORES)          # one AIV gets 1/48 of the bandwidth
    many = R.model(stats(96 * 1000, 96, 96, busiest_gm=1000, busiest_reps=1), ideal_bytes=96 * 1000)
    assert many["memory_s"] == pytest.approx(2 * 1000 / (R.HBM_BYTES_PER_S / R.AIV_CORES))


def test_vector_bound_launch():
    m = R.model(stats(1 << 10, 48 * 10 ** 6, 48), ideal_bytes=1 << 10)
    assert m["bound"] == "vector"
    assert m["modelled_s"] == pytest.approx(10 ** 6 / R.CLOCK_HZ)
    assert "estimates" in m["assumptions"]
