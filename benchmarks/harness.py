"""The overhead of ``numerix.benchmark`` per timed call: a no-op job's median call time
against a raw ``timeit`` loop of the same no-op (the best of its repeats), interleaved
over rounds. Printed: both per call (ns), and the difference (the harness's own cost:
two clock readings and the walk of the returned value). Target: ≤ 1 µs.

    python benchmarks/harness.py            # 7 rounds
    python benchmarks/harness.py --rounds 11
"""

from __future__ import annotations

import argparse
import statistics
import timeit

import numerix as nx


def noop() -> None:
    return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=7)
    args = p.parse_args(argv)
    raw, harness = [], []
    for _ in range(args.rounds):
        raw.append(min(timeit.repeat(noop, number=100_000, repeat=3)) / 100_000)
        r = nx.benchmark({"noop": noop}, time=0.3, warmup=0.05, memory=False)
        harness.append(r.scenarios[0]["median_s"])
    ns = 1e9
    print(f"no-op per call, {args.rounds} interleaved rounds (ns): median (min–max)")
    print(f"  raw timeit loop     {statistics.median(raw) * ns:6.0f} "
          f"({min(raw) * ns:.0f}–{max(raw) * ns:.0f})")  # fmt: skip
    print(f"  numerix.benchmark   {statistics.median(harness) * ns:6.0f} "
          f"({min(harness) * ns:.0f}–{max(harness) * ns:.0f})")  # fmt: skip
    print(
        f"  overhead per call   {(statistics.median(harness) - statistics.median(raw)) * ns:6.0f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
