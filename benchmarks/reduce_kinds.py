"""The eager cost of ``numerix.sum`` and ``numerix.max`` on each backend, for two
source trees side by side (before and after a change to the reduction primitives).

    python benchmarks/reduce_kinds.py --before /tmp/old/packages            # vs this tree
    python benchmarks/reduce_kinds.py --before /tmp/old/packages --rounds 9 --backend torch

Each round runs one fresh process per tree, in alternating order (a, b, b, a, ...); a
process times ``nx.sum(x)`` and ``nx.max(x)`` on f32[4] and f32[1000] with timeit
(each loop long enough to measure, best of 5 loops) after checking the result against
numpy. A row gives the median per call over the rounds and the spread (min-max). The
trees are put first on ``sys.path`` (``PYTHONPATH``), so the installed editable packages
are shadowed by the tree measured. Nothing here is asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

PACKAGES = ("core", "backend-binary", "backend-xla", "backend-torch")
HERE = Path(__file__).resolve().parent.parent / "packages"

CHILD = r"""
import json, sys, timeit
import numpy as np
import numerix as nx

backend = sys.argv[1]
rows = {}
for n in (4, 1000):
    a = (np.arange(n) % 7).astype(np.float32)  # sums exactly in any order
    x = nx.tensor(a, backend=backend)
    for name, ref in (("sum", np.sum), ("max", np.max)):
        fn = getattr(nx, name)
        got = fn(x)
        assert got.dtype is nx.float32 and got.shape == ()
        assert got.to_numpy() == ref(a)
        if backend == "xla":
            call = lambda: fn(x).data.block_until_ready()
        else:
            call = lambda: fn(x)
        timer = timeit.Timer(call)
        number, _ = timer.autorange()
        best = min(timer.repeat(5, number)) / number
        rows[f"{name} f32[{n}]"] = best * 1e6
print(json.dumps(rows))
"""


def run(tree: Path, backend: str) -> dict[str, float]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(tree / p / "src") for p in PACKAGES)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, backend], env=env, capture_output=True, text=True
    )
    if out.returncode:
        raise SystemExit(f"{tree} on {backend} failed:\n{out.stderr}")
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, required=True, help="the packages/ of the old tree")
    ap.add_argument("--after", type=Path, default=HERE, help="the packages/ of the new tree")
    ap.add_argument("--backend", action="append", help="binary, xla, torch (default: all three)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    trees = {"before": args.before, "after": args.after}
    result: dict[str, dict[str, dict[str, list[float]]]] = {}
    for backend in args.backend or ["binary", "xla", "torch"]:
        samples: dict[str, dict[str, list[float]]] = {k: {} for k in trees}
        for r in range(args.rounds):
            order = list(trees) if r % 2 == 0 else list(reversed(trees))
            for side in order:
                for row, us in run(trees[side], backend).items():
                    samples[side].setdefault(row, []).append(us)
        result[backend] = samples
    if args.json:
        print(json.dumps(result, indent=1))
        return
    for backend, samples in result.items():
        print(f"\n{backend}: median us per call (min-max over {args.rounds} rounds)")
        for row in samples["before"]:
            cells = []
            for side in trees:
                v = samples[side][row]
                cells.append(f"{side} {statistics.median(v):7.2f} ({min(v):.2f}-{max(v):.2f})")
            print(f"  {row:<14} " + "   ".join(cells))


if __name__ == "__main__":
    main()
