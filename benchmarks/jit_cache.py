"""The cached call of a jitted function, and what the bounded cache costs on it.

    python benchmarks/jit_cache.py                    # 15 rounds
    python benchmarks/jit_cache.py --baseline-src /path/to/other/checkout/packages

A cached call of ``numerix.jit(softmax)`` on a binary f32[4] (the evaluator, the
default compiler), as ``benchmarks/compilers.py`` times it: µs per call, the median of
timeit repeats in one process. Each round starts one fresh interpreter per candidate,
the candidates in turn (interleaved); printed: the median and the spread (min–max over
rounds) of the per-process figures.

``--memory-shapes N`` measures memory instead: the growth of the process's resident
set (after a garbage collection and glibc's ``malloc_trim``: freed memory given back;
Linux) once one jitted function met N shapes on the
xla compiler (each shape one program), once per candidate.

``--baseline-src`` adds a candidate importing numerix from another checkout's
``packages`` folder (its ``*/src`` folders first on ``PYTHONPATH``): a change beside what
came before it, in the same rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

CHILD = """
import timeit, statistics
import numpy as np
import numerix as nx

def softmax(x):
    e = nx.exp(x - nx.max(x, axis=-1, keepdims=True))
    return e / nx.sum(e, axis=-1, keepdims=True)

f = nx.jit(softmax)
x = nx.tensor(np.array([1.0, 2.0, 3.0, 4.0], np.float32))
want = np.exp(np.asarray(x) - 4.0); want /= want.sum()
np.testing.assert_allclose(np.asarray(f(x)), want, rtol=1e-6)
t = timeit.Timer(lambda: f(x))
n = max(1, int(0.05 / min(t.repeat(3, 100)) * 100))
print(statistics.median(t.repeat(7, n)) / n)
"""

MEMORY = """
import ctypes, gc, resource, sys, warnings
warnings.simplefilter("ignore")
import numerix as nx

def rss():
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)  # memory freed, given back to the system
    return int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize()

f = nx.jit(lambda x: nx.exp(x) * 2 + 1, compiler="xla")
f(nx.zeros(1, backend="xla"))
start = rss()
for n in range(2, int(sys.argv[1]) + 2):
    f(nx.zeros(n, backend="xla"))
print(rss() - start)
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--baseline-src", type=Path, default=None)
    p.add_argument("--json", action="store_true")
    p.add_argument("--memory-shapes", type=int, default=0)
    args = p.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMERIX_")}
    candidates = {"numerix": env}
    if args.baseline_src is not None:
        srcs = sorted(str(d) for d in args.baseline_src.glob("*/src"))
        candidates["numerix (baseline)"] = {**env, "PYTHONPATH": os.pathsep.join(srcs)}
    if args.memory_shapes:
        print(f"resident set growth after {args.memory_shapes} shapes on the xla compiler")
        for name, e in candidates.items():
            out = subprocess.run(
                [sys.executable, "-c", MEMORY, str(args.memory_shapes)],
                capture_output=True,
                text=True,
                env=e,
                check=True,
            )
            print(f"{name:<20} {int(out.stdout.split()[-1]) / 2**20:8.1f} MiB")
        return 0
    times: dict[str, list[float]] = {k: [] for k in candidates}
    for _ in range(args.rounds):
        for name, e in candidates.items():
            out = subprocess.run(
                [sys.executable, "-c", CHILD], capture_output=True, text=True, env=e, check=True
            )
            times[name].append(float(out.stdout.split()[-1]))
    rows: list[dict[str, Any]] = [
        {
            "candidate": k,
            "cached_call_median_s": statistics.median(v),
            "cached_call_min_s": min(v),
            "cached_call_max_s": max(v),
        }
        for k, v in times.items()
    ]
    if args.json:
        print(json.dumps({"rounds": args.rounds, "rows": rows}, indent=2))
        return 0
    print(f"jit(softmax) cached call, binary f32[4], {args.rounds} interleaved rounds (us)")
    for r in rows:
        print(
            f"{r['candidate']:<20} {r['cached_call_median_s'] * 1e6:7.2f} "
            f"({r['cached_call_min_s'] * 1e6:.2f}–{r['cached_call_max_s'] * 1e6:.2f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
