"""Data-parallel training steps over 1, 2 and 4 simulated host devices: weak and strong
scaling of the seeds' MLP step (784-128-10, tanh, log-softmax; ``value_and_grad`` and an
SGD update, the xla compiler) with the batch split over the devices and the parameters
replicated (``numerix.jit(step, in_shardings=...)``).

- strong scaling: one global batch (``--batch``, default 256) split over N devices;
- weak scaling: ``--batch / 4`` rows per device, so the global batch grows with N.

The process starts JAX with ``XLA_FLAGS=--xla_force_host_platform_device_count=4``
(re-executing itself when the flag is missing). Each round times ``--steps`` steps of
every configuration in turn (interleaved); printed: the median time per step over the
rounds and its spread (min–max), the speed-up over one device (strong) and the
efficiency (weak: one device's time over N devices').

Simulated devices share this machine's cores: on 2 cores, 4 devices cannot run 4 times
as fast. The table measures what the program costs over N devices (the split, the
all-reduce of the gradients), not what N accelerators would give.

    python benchmarks/scaling.py            # 7 rounds
    python benchmarks/scaling.py --rounds 11 --json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any

FLAG = "--xla_force_host_platform_device_count=4"


def main(argv: list[str] | None = None) -> int:
    if FLAG not in os.environ.get("XLA_FLAGS", ""):
        env = {**os.environ, "XLA_FLAGS": f"{os.environ.get('XLA_FLAGS', '')} {FLAG}".strip()}
        os.execve(sys.executable, [sys.executable, __file__, *(argv or sys.argv[1:])], env)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)

    import numpy as np

    import numerix as nx

    rng = np.random.default_rng(0)
    p0 = {
        "w1": (rng.standard_normal((784, 128)) * 0.05).astype(np.float32),
        "b1": np.zeros(128, np.float32),
        "w2": (rng.standard_normal((128, 10)) * 0.05).astype(np.float32),
        "b2": np.zeros(10, np.float32),
    }

    def loss(params: Any, x: Any, y: Any) -> Any:
        h = nx.tanh(nx.dot(x, params["w1"]) + params["b1"])
        logp = nx.log_softmax(nx.dot(h, params["w2"]) + params["b2"], axis=-1)
        return -nx.mean(nx.sum(logp * y, axis=-1))

    def step(params: Any, x: Any, y: Any) -> Any:
        value, grads = nx.value_and_grad(loss)(params, x, y)
        return value, {k: params[k] - 0.1 * grads[k] for k in params}

    configs: dict[str, Any] = {}
    for kind in ("strong", "weak"):
        for n in (1, 2, 4):
            rows = args.batch if kind == "strong" else args.batch // 4 * n
            xs = rng.random((rows, 784), dtype=np.float32)
            ys = np.eye(10, dtype=np.float32)[rng.integers(0, 10, rows)]
            batch, rep = nx.sharding(n, axis=0), nx.sharding(n)
            params = nx.device_put({k: nx.tensor(v) for k, v in p0.items()}, rep)
            x, y = nx.device_put((nx.tensor(xs), nx.tensor(ys)), batch)
            f = nx.jit(step, compiler="xla")
            f(params, x, y)[0].item()  # compiled before timing
            configs[f"{kind} {n}"] = (f, params, x, y, rows)

    times: dict[str, list[float]] = {k: [] for k in configs}
    for _ in range(args.rounds):
        for name, (f, params, x, y, _) in configs.items():
            t0 = time.perf_counter()
            for _ in range(args.steps):
                value, params = f(params, x, y)
            value.item()
            times[name].append((time.perf_counter() - t0) / args.steps)
            configs[name] = (f, params, x, y, configs[name][4])

    rows_out = []
    for name, ts in times.items():
        kind, n = name.split()
        base = statistics.median(times[f"{kind} 1"])
        med = statistics.median(ts)
        rows_out.append(
            {
                "scaling": kind,
                "devices": int(n),
                "global_batch": configs[name][4],
                "median_ms": med * 1e3,
                "min_ms": min(ts) * 1e3,
                "max_ms": max(ts) * 1e3,
                # strong: speed-up over one device; weak: one device's time over N's
                "vs_one_device": base / med,
            }
        )
    if args.json:
        print(json.dumps({"rounds": args.rounds, "steps": args.steps, "rows": rows_out}, indent=2))
        return 0
    print(f"data-parallel MLP step, {args.rounds} interleaved rounds of {args.steps} steps (ms)")
    for r in rows_out:
        label = "speed-up" if r["scaling"] == "strong" else "efficiency"
        print(
            f"  {r['scaling']:<6} {r['devices']} device(s), batch {r['global_batch']:>4}: "
            f"{r['median_ms']:7.2f}  ({r['min_ms']:.2f}–{r['max_ms']:.2f})  "
            f"{label} {r['vs_one_device']:.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
