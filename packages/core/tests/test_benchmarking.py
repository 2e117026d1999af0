"""The shared timing harness (numerix.benchmarking): interleaved rounds, dropped
candidates, medians and spreads."""

from __future__ import annotations

import gc
import time

import pytest

from numerix.benchmarking import alternate_calls, interleave, rounds, spread, summary


def test_candidates_take_turns_in_every_round() -> None:
    calls: list[str] = []
    times = interleave([lambda: calls.append("a"), lambda: calls.append("b")], 3, warmup=1)
    # no calibration at min_time 0: one call per turn, a warm-up round first
    assert calls == ["a", "b"] * 4
    assert [len(t) for t in times] == [3, 3]
    assert all(s >= 0 for t in times for s in t)


def test_a_failing_candidate_is_dropped_and_the_others_go_on() -> None:
    n = {"calls": 0}
    seen: list[tuple[int, str]] = []
    ticks: list[tuple[int, int]] = []

    def flaky() -> None:
        n["calls"] += 1
        if n["calls"] == 2:
            raise RuntimeError("device lost")

    times = interleave(
        [flaky, lambda: None],
        3,
        on_error=lambda i, e: seen.append((i, str(e))),
        on_call=lambda r, i: ticks.append((r, i)),
    )
    assert seen == [(0, "device lost")]
    assert times[0] == [] and len(times[1]) == 3
    assert ticks == [(r, i) for r in range(3) for i in range(2)]


def test_without_on_error_the_exception_propagates() -> None:
    def boom() -> None:
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        interleave([boom], 1)


def test_calibrated_loops_last_at_least_min_time() -> None:
    count = {"n": 0}

    def tick() -> None:
        count["n"] += 1

    ra, rb = rounds(tick, tick, 2, 0.001)
    assert len(ra) == len(rb) == 2
    assert count["n"] > 10  # many calls per loop, not one


def test_summary_and_spread_read_the_rounds() -> None:
    assert summary([3.0, 1.0, 2.0]) == {"median_s": 2.0, "mean_s": 2.0, "min_s": 1.0, "max_s": 3.0}
    assert summary([])["median_s"] is None
    s = spread([2.0, 4.0, 3.0], [1.0, 1.0, 2.0])
    assert (s["numerix_s"], s["raw_s"], s["ratio"], s["difference_s"]) == (3.0, 1.0, 3.0, 2.0)
    assert (s["numerix_min_s"], s["numerix_max_s"], s["raw_max_s"]) == (2.0, 4.0, 2.0)


def test_alternate_calls_take_turns_call_by_call() -> None:
    calls: list[str] = []
    times = alternate_calls([lambda: calls.append("a"), lambda: calls.append("b")], 2, 3)
    assert calls == ["a", "b"] * 9  # a warm-up round, then two rounds of three calls each
    assert [len(t) for t in times] == [2, 2]
    assert all(s >= 0 for t in times for s in t)


def test_alternate_calls_report_the_median_call_not_the_mean() -> None:
    n = {"calls": 0}

    def rarely_slow() -> None:  # one call in 21 sleeps 20 ms, the others return at once
        n["calls"] += 1
        if n["calls"] % 21 == 0:
            time.sleep(0.02)

    (t,) = alternate_calls([rarely_slow], 2, 21, warmup=0)
    assert n["calls"] == 42
    # a loop's mean would be about 1 ms per call; the median call takes microseconds
    assert max(t) < 0.001


def test_alternate_calls_turn_the_collector_back_on_and_refuse_no_calls() -> None:
    assert gc.isenabled()

    def boom() -> None:
        assert not gc.isenabled()  # off inside a round
        raise RuntimeError("device lost")

    with pytest.raises(RuntimeError, match="device lost"):
        alternate_calls([boom], 1, 1)
    assert gc.isenabled()
    with pytest.raises(ValueError, match="alternate_calls: rounds and calls must be >= 1"):
        alternate_calls([boom], 1, 0)
