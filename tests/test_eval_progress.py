"""Long evaluations show samples/s and the time left (issue 31)."""
from opkit.evaluate.runner import _Progress


def test_progress_shows_rate_and_eta():
    seen = []
    bar = _Progress(lambda *a: seen.append(a), 100, 4)
    assert bar.rate() == "-- samples/s, ETA --"
    bar._t0 -= 10.0                        # 10 s ago
    bar.advance(25)
    assert seen == [(25, 100, 1, 4)]
    rate, eta = bar.rate().split(", ")
    assert rate.endswith(" samples/s") and 2.4 <= float(rate.split()[0]) <= 2.5
    assert eta in ("ETA 0:00:30", "ETA 0:00:31")
