"""The first op in a fresh process: ``import numerix`` and one ``numerix.add`` of two
f32[4] on the binary backend, against ``import numpy`` and one ``numpy.add``.

Each round starts one fresh interpreter per candidate, the candidates in turn
(interleaved), and each interpreter times its own import and op with
``time.perf_counter`` (the interpreter's start-up, the same for all, is left out).
Printed: the median and the spread (min–max over rounds) of each candidate, and the
ratio of the medians to numpy's; the modules a candidate loaded that it should not
(another backend's plugin, JAX, PyTorch, pluggy) are listed.

    python benchmarks/first_op.py                # 21 rounds
    python benchmarks/first_op.py --rounds 41 --json
    python benchmarks/first_op.py --baseline-src /path/to/other/checkout/packages

``--baseline-src`` adds a candidate: numerix imported from another checkout's
``packages`` folder (its ``*/src`` folders put first on ``PYTHONPATH``), to compare a
change with what came before it, in the same rounds.
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

NUMPY = """
import time
t0 = time.perf_counter()
import numpy as np
a = np.ones(4, np.float32)
np.add(a, a)
t1 = time.perf_counter()
print(t1 - t0)
"""

NUMERIX = """
import time, sys
t0 = time.perf_counter()
import numerix as nx
t1 = time.perf_counter()
a = nx.ones(4, dtype=nx.float32)
nx.add(a, a)
t2 = time.perf_counter()
print(t2 - t0, t1 - t0)
heavy = ("numerix_xla", "numerix_torch", "jax", "torch", "pluggy", "pydantic")
print(",".join(m for m in heavy if m in sys.modules))
"""


def _run(code: str, env: dict[str, str]) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    return out.stdout.splitlines()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=21)
    p.add_argument("--baseline-src", type=Path, default=None)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)

    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMERIX_")}
    candidates: dict[str, tuple[str, dict[str, str]]] = {
        "numpy": (NUMPY, env),
        "numerix": (NUMERIX, env),
    }
    if args.baseline_src is not None:
        srcs = sorted(str(d) for d in args.baseline_src.glob("*/src"))
        candidates["numerix (baseline)"] = (
            NUMERIX,
            {**env, "PYTHONPATH": os.pathsep.join(srcs)},
        )
    for code, e in candidates.values():  # warm the file-system cache and the .pyc files
        _run(code, e)
    first: dict[str, list[float]] = {k: [] for k in candidates}
    imports: dict[str, list[float]] = {k: [] for k in candidates if k != "numpy"}
    loaded: dict[str, str] = {}
    for _ in range(args.rounds):
        for name, (code, e) in candidates.items():
            lines = _run(code, e)
            vals = lines[0].split()
            first[name].append(float(vals[0]))
            if name != "numpy":
                imports[name].append(float(vals[1]))
                loaded[name] = lines[1] if len(lines) > 1 else ""
    base = statistics.median(first["numpy"])
    rows: list[dict[str, Any]] = []
    for name, ts in first.items():
        rows.append(
            {
                "candidate": name,
                "first_op_median_s": statistics.median(ts),
                "first_op_min_s": min(ts),
                "first_op_max_s": max(ts),
                "ratio_to_numpy": statistics.median(ts) / base,
                "import_median_s": statistics.median(imports[name]) if name in imports else None,
                "import_min_s": min(imports[name]) if name in imports else None,
                "import_max_s": max(imports[name]) if name in imports else None,
                # the first op itself, once numerix is imported (finding and loading
                # the backend's plugin and module): each process's figure minus its import
                "op_median_s": statistics.median(a - b for a, b in zip(ts, imports[name]))
                if name in imports
                else None,
                "unexpected_modules": loaded.get(name, "").split(",") if loaded.get(name) else [],
            }
        )
    if args.json:
        print(json.dumps({"rounds": args.rounds, "rows": rows}, indent=2))
        return 0
    ms = 1e3
    print(f"first op in a fresh process, {args.rounds} interleaved rounds (ms)")
    for r in rows:
        line = (
            f"{r['candidate']:<20} import+op {r['first_op_median_s'] * ms:6.1f} "
            f"({r['first_op_min_s'] * ms:.1f}–{r['first_op_max_s'] * ms:.1f})  "
            f"{r['ratio_to_numpy']:.2f}x numpy"
        )
        if r["import_median_s"] is not None:
            line += (
                f"  import {r['import_median_s'] * ms:.1f} "
                f"({r['import_min_s'] * ms:.1f}–{r['import_max_s'] * ms:.1f})"
                f"  op {r['op_median_s'] * ms:.1f}"
            )
        if r["unexpected_modules"]:
            line += f"  loaded: {', '.join(r['unexpected_modules'])}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
