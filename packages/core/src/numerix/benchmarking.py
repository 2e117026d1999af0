"""The timing harness every numerix benchmark shares: ``numerix bench`` and the scripts in
the repository's ``benchmarks/`` folder.

Candidates run in **interleaved rounds** (a, b, c, a, b, c, ...): a load that comes and
goes on the machine falls on every candidate alike instead of on one candidate's block
of runs. Each round is one :class:`timeit.Timer` loop per candidate (the garbage
collector off inside it, as timeit does), long enough to measure (:func:`calibrate`).
A result is reported as its **median and spread** (min–max over the rounds), never as
one figure (:func:`summary`, :func:`spread`). Nothing here asserts a speed.

Calls of a few microseconds whose time is **bimodal** (an XLA program on the CPU waits
for a worker thread that is sometimes awake and sometimes asleep) are timed call by call
instead (:func:`alternate_calls`): a, b, a, b ..., each call on its own clock, and a
round's figure the median of its calls. A timeit loop's mean counts how many slow calls
fell in that loop, which moves by a third between loops; the median of calls taken
side by side does not.

>>> from numerix.benchmarking import interleave, summary
>>> short, long = interleave([lambda: sum(range(10)), lambda: sum(range(1000))], 3)
>>> len(short), len(long), sorted(summary(short))
(3, 3, ['max_s', 'mean_s', 'median_s', 'min_s'])

This module imports nothing from numerix: it times whatever callables it is given.
"""

from __future__ import annotations

import gc
import statistics
import time
import timeit
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "alternate_calls", "calibrate", "format_duration", "interleave", "rounds", "spread", "summary",
]  # fmt: skip


def calibrate(timer: timeit.Timer, min_time: float) -> int:
    """Calls per loop so that one loop of ``timer`` takes at least ``min_time`` seconds
    (the idea of ``Timer.autorange``); 1 when ``min_time`` is 0 (one call per round, for
    candidates that take milliseconds). Calibrating runs the candidate: it warms it up."""
    number = 1
    while True:
        t = timer.timeit(number)
        if t >= min_time:
            return number
        number = max(number * 2, int(number * min_time / max(t, 1e-9) * 1.1))


def interleave(
    candidates: Sequence[Callable[[], Any]],
    rounds: int,
    *,
    min_time: float = 0.0,
    warmup: int = 0,
    on_error: Callable[[int, Exception], None] | None = None,
    on_call: Callable[[int, int], None] | None = None,
) -> list[list[float]]:
    """Seconds per call of each candidate, one list per candidate with one figure per
    round: ``warmup`` rounds first (not kept), then ``rounds`` rounds, every candidate
    timed once per round, in turn.

    :param min_time: seconds a candidate's loop lasts at least (its calls per loop are
        calibrated once, before the first round).
    :param on_error: called with ``(index, exception)`` when a candidate raises; that
        candidate is dropped (its list left empty) and the others go on. Without it, the
        exception propagates.
    :param on_call: called with ``(round, index)`` after each candidate's turn (a
        progress bar's tick), dropped candidates included.
    """
    timers = [timeit.Timer(c) for c in candidates]
    numbers: list[int] = []
    alive = [True] * len(timers)
    times: list[list[float]] = [[] for _ in timers]

    def drop(i: int, e: Exception) -> None:
        if on_error is None:
            raise e
        alive[i] = False
        times[i].clear()
        on_error(i, e)

    for i, t in enumerate(timers):
        try:
            numbers.append(calibrate(t, min_time) if min_time > 0 else 1)
        except Exception as e:
            numbers.append(1)
            drop(i, e)
    for r in range(warmup + rounds):
        for i, t in enumerate(timers):
            if alive[i]:
                try:
                    seconds = t.timeit(numbers[i]) / numbers[i]
                except Exception as e:
                    drop(i, e)
                else:
                    if r >= warmup:
                        times[i].append(seconds)
            if on_call is not None:
                on_call(r, i)
    return times


def alternate_calls(
    candidates: Sequence[Callable[[], Any]], rounds: int, calls: int = 1000, *, warmup: int = 1
) -> list[list[float]]:
    """Seconds per call of each candidate, one list per candidate with one figure per
    round: in a round, ``calls`` calls of each, the candidates taking turns call by call
    (a, b, a, b ...), each call timed alone; the round's figure is the median of its
    calls, less the clock's own cost (the median of an empty reading, taken in the same
    round). ``warmup`` rounds first, not kept. The garbage collector is off inside a
    round, as in :func:`interleave`."""
    if calls < 1 or rounds < 1:
        raise ValueError(f"alternate_calls: rounds and calls must be >= 1, got {rounds}, {calls}")
    clock = time.perf_counter_ns
    times: list[list[float]] = [[] for _ in candidates]
    for r in range(warmup + rounds):
        per: list[list[int]] = [[] for _ in candidates]
        empty: list[int] = []
        was_on = gc.isenabled()
        gc.disable()
        try:
            for _ in range(calls):
                t0 = clock()
                t1 = clock()
                empty.append(t1 - t0)
                for c, ts in zip(candidates, per):
                    t0 = clock()
                    c()
                    t1 = clock()
                    ts.append(t1 - t0)
        finally:
            if was_on:
                gc.enable()
        if r >= warmup:
            floor = statistics.median(empty)
            for ts, out in zip(per, times):
                out.append(max(statistics.median(ts) - floor, 0.0) * 1e-9)
    return times


def rounds(
    fn_a: Callable[[], Any], fn_b: Callable[[], Any], n: int, min_time: float
) -> tuple[list[float], list[float]]:
    """Seconds per call of ``fn_a`` and ``fn_b`` in ``n`` interleaved rounds each."""
    ra, rb = interleave([fn_a, fn_b], n, min_time=min_time)
    return ra, rb


def summary(times: Sequence[float]) -> dict[str, float | None]:
    """``median_s``, ``min_s``, ``max_s`` and ``mean_s`` of one candidate's rounds
    (None each when it has none)."""
    if not times:
        return {"median_s": None, "mean_s": None, "min_s": None, "max_s": None}
    return {
        "median_s": statistics.median(times),
        "mean_s": statistics.fmean(times),
        "min_s": min(times),
        "max_s": max(times),
    }


def spread(ra: Sequence[float], rb: Sequence[float]) -> dict[str, float]:
    """A comparison's figures: each side's median and min–max over its rounds (seconds),
    the ratio and the difference of the medians (numerix first, the raw library second)."""
    ma, mb = statistics.median(ra), statistics.median(rb)
    return {"numerix_s": ma, "numerix_min_s": min(ra), "numerix_max_s": max(ra),
            "raw_s": mb, "raw_min_s": min(rb), "raw_max_s": max(rb),
            "ratio": ma / mb, "difference_s": ma - mb}  # fmt: skip


def format_duration(s: float) -> str:
    """``s`` seconds in the largest unit (s, ms, µs, ns) it is at least one of, to three
    significant figures: ``"4.2 ms"``, ``"250 ns"`` (``numerix.benchmark``'s tables,
    ``jit(compiler="auto")``'s).

    >>> format_duration(0.0042), format_duration(2.5e-7), format_duration(0.0)
    ('4.2 ms', '250 ns', '0 ns')
    """
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"
