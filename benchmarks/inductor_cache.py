"""The torch compiler's ``mode="inductor"`` against its replay mode, on the seeds' MLP
training (784-128-10, ``value_and_grad`` and an SGD update, batch 64, f32, 200 steps):
a fresh process with an empty cache, a second process with ``[compile] cache_dir``
warm (inductor's FX graph cache and kernels there), and the replay mode.

Each round starts one fresh interpreter per candidate, in turn (interleaved), with
Python's bytecode cached; each times, after its imports and the data's creation, the
first call (tracing and compiling) and the 200 steps. Printed: medians and spreads
(min–max) of the training time (first call included) and of the steady step, and the
ratios to the replay mode's.

    python benchmarks/inductor_cache.py           # 5 rounds
    python benchmarks/inductor_cache.py --rounds 3 --json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from typing import Any

TRAIN = """
import time, numpy as np
import numerix as nx
rng = np.random.default_rng(0)
def t(*s):
    return nx.tensor((rng.standard_normal(s) * 0.05).astype(np.float32), backend="torch")
params = {{"w1": t(784, 128), "b1": t(128), "w2": t(128, 10), "b2": t(10)}}
xs = nx.tensor(rng.random((64, 784), dtype=np.float32), backend="torch")
ys = nx.tensor(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)], backend="torch")
def loss(p, x, y):
    h = nx.tanh(nx.dot(x, p["w1"]) + p["b1"])
    return -nx.mean(nx.sum(nx.log_softmax(nx.dot(h, p["w2"]) + p["b2"], axis=-1) * y, axis=-1))
def step(p, x, y):
    v, g = nx.value_and_grad(loss)(p, x, y)
    return v, {{k: p[k] - 0.1 * g[k] for k in p}}
t0 = time.perf_counter()
f = nx.jit(step, compiler="torch", mode={mode!r})
v, params = f(params, xs, ys)
v.item()
t1 = time.perf_counter()
for _ in range(199):
    v, params = f(params, xs, ys)
v.item()
t2 = time.perf_counter()
print(t2 - t0, (t2 - t1) / 199)
"""


def _run(code: str, env: dict[str, str]) -> tuple[float, float]:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    total, step = out.stdout.strip().splitlines()[-1].split()
    return float(total), float(step)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)

    tmp = tempfile.mkdtemp(prefix="numerix-inductor-bench-")
    env = {
        **{k: v for k, v in os.environ.items()
           if not k.startswith(("NUMERIX_", "TORCHINDUCTOR_"))},
        "PYTHONPYCACHEPREFIX": f"{tmp}/pycache",
    }  # fmt: skip
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    warm = {**env, "NUMERIX_COMPILE__CACHE_DIR": f"{tmp}/warm"}
    _run(TRAIN.format(mode="inductor"), warm)  # fills the warm cache (and the bytecode)
    _run(TRAIN.format(mode="replay"), env)
    names = ("replay", "inductor, empty cache", "inductor, second process")
    results: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
    for r in range(args.rounds):
        cold_dir = f"{tmp}/cold{r}"
        cold = {**env, "NUMERIX_COMPILE__CACHE_DIR": cold_dir}
        results["replay"].append(_run(TRAIN.format(mode="replay"), env))
        results["inductor, empty cache"].append(_run(TRAIN.format(mode="inductor"), cold))
        results["inductor, second process"].append(_run(TRAIN.format(mode="inductor"), warm))
        shutil.rmtree(cold_dir, ignore_errors=True)
    base_total = statistics.median(t for t, _ in results["replay"])
    base_step = statistics.median(s for _, s in results["replay"])
    rows: list[dict[str, Any]] = []
    for name, runs in results.items():
        totals, steps = [t for t, _ in runs], [s for _, s in runs]
        rows.append(
            {
                "candidate": name,
                "train_median_s": statistics.median(totals),
                "train_min_s": min(totals),
                "train_max_s": max(totals),
                "train_vs_replay": statistics.median(totals) / base_total,
                "step_median_us": statistics.median(steps) * 1e6,
                "step_min_us": min(steps) * 1e6,
                "step_max_us": max(steps) * 1e6,
                "step_vs_replay": statistics.median(steps) / base_step,
            }
        )
    if args.json:
        print(json.dumps({"rounds": args.rounds, "rows": rows}, indent=2))
        return 0
    print(f"MLP training, 200 steps, torch compiler, {args.rounds} interleaved rounds")
    for r in rows:
        print(
            f"  {r['candidate']:<26} train {r['train_median_s']:6.2f} s "
            f"({r['train_min_s']:.2f}–{r['train_max_s']:.2f}) {r['train_vs_replay']:5.2f}×  "
            f"step {r['step_median_us']:5.0f} µs ({r['step_min_us']:.0f}–{r['step_max_us']:.0f}) "
            f"{r['step_vs_replay']:4.2f}×"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
