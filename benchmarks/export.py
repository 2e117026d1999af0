"""A new process's first call of a jitted function: traced and compiled, compiled with
the persistent cache warm, or loaded from ``numerix.export``'s bytes.

The functions are the seeds' MLP predict (784-128-10, tanh then log-softmax, batch 64,
f32; the parameters are arguments) and its training step (``value_and_grad`` of the
cross-entropy and an SGD update). Candidates, per function and per compiler that
exports (xla, torch):

- ``trace+compile``: ``numerix.jit(predict, compiler=C)`` and its first call;
- ``cache`` (xla): the same, with ``[compile] cache_dir`` pointing at a directory an
  earlier process filled (``NUMERIX_COMPILE__CACHE_DIR``);
- ``load_exported``: ``numerix.load_exported(path)`` of the program an earlier process
  exported, and its first call.

Each round starts one fresh interpreter per candidate, in turn (interleaved), with
Python's bytecode cached (as an installed numerix has it); each times its own work with ``time.perf_counter`` after its imports and the parameters'
creation (the same in all). Printed: the median and the spread (min–max) per
candidate, and each median's speed-up over trace+compile's.

    python benchmarks/export.py               # 9 rounds
    python benchmarks/export.py --rounds 15 --json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Any

SETUP = """
import time, numpy as np, numerix as nx
backend = {backend!r}
rng = np.random.default_rng(0)
def t(*shape):
    return nx.tensor(rng.standard_normal(shape).astype(np.float32) * 0.05, backend=backend)
params = {{"w1": t(784, 128), "b1": t(128), "w2": t(128, 10), "b2": t(10)}}
x = t(64, 784)
y = nx.tensor(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)], backend=backend)
def predict(params, x):
    h = nx.tanh(nx.dot(x, params["w1"]) + params["b1"])
    return nx.log_softmax(nx.dot(h, params["w2"]) + params["b2"], axis=-1)
def loss(params, x, y):
    return -nx.mean(nx.sum(predict(params, x) * y, axis=-1))
def step(params, x, y):
    value, grads = nx.value_and_grad(loss)(params, x, y)
    return value, {{k: params[k] - 0.1 * grads[k] for k in params}}
fn, args = {{"predict": (predict, (params, x)), "step": (step, (params, x, y))}}[{function!r}]
def done(out):
    (out[0] if isinstance(out, tuple) else out).numpy()
"""

COMPILE = (
    SETUP
    + """
t0 = time.perf_counter()
f = nx.jit(fn, compiler={compiler!r})
done(f(*args))
print(time.perf_counter() - t0)
"""
)

EXPORT = (
    SETUP
    + """
f = nx.jit(fn, compiler={compiler!r})
data = nx.export(f, *args)
open({path!r}, "wb").write(data)
print(len(data))
"""
)

LOAD = (
    SETUP
    + """
t0 = time.perf_counter()
g = nx.load_exported({path!r})
done(g(*args))
print(time.perf_counter() - t0)
"""
)

PAIRS = {"xla": "xla", "torch": "torch"}


def _run(code: str, env: dict[str, str]) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    return out.stdout.strip().splitlines()[-1]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--compilers", default="xla,torch")
    p.add_argument("--functions", default="predict,step")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)

    tmp = tempfile.mkdtemp(prefix="numerix-export-bench-")
    # bytecode cached (in a folder of its own), as an installed numerix has it: without
    # it every fresh process would compile numerix's sources again
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("NUMERIX_")},
        "PYTHONPYCACHEPREFIX": f"{tmp}/pycache",
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    candidates: dict[str, tuple[str, dict[str, str]]] = {}
    sizes: dict[str, int] = {}
    for function in args.functions.split(","):
        for compiler in args.compilers.split(","):
            backend = PAIRS[compiler]
            fmt = {"backend": backend, "compiler": compiler, "function": function,
                   "path": f"{tmp}/{function}-{compiler}.nxp"}  # fmt: skip
            who = f"{function} {compiler}"
            sizes[who] = int(_run(EXPORT.format(**fmt), env))
            candidates[f"{who}: trace+compile"] = (COMPILE.format(**fmt), env)
            if compiler == "xla":
                cached = {**env, "NUMERIX_COMPILE__CACHE_DIR": f"{tmp}/cache"}
                _run(COMPILE.format(**fmt), cached)  # fills the cache
                candidates[f"{who}: cache"] = (COMPILE.format(**fmt), cached)
            candidates[f"{who}: load_exported"] = (LOAD.format(**fmt), env)
    times: dict[str, list[float]] = {k: [] for k in candidates}
    for _ in range(args.rounds):
        for name, (code, e) in candidates.items():
            times[name].append(float(_run(code, e)))
    rows: list[dict[str, Any]] = []
    for name, ts in times.items():
        base = statistics.median(times[name.split(":")[0] + ": trace+compile"])
        rows.append(
            {
                "candidate": name,
                "median_s": statistics.median(ts),
                "min_s": min(ts),
                "max_s": max(ts),
                "speedup_over_trace_compile": base / statistics.median(ts),
            }
        )
    if args.json:
        print(json.dumps({"rounds": args.rounds, "bytes": sizes, "rows": rows}, indent=2))
        return 0
    print(f"first call in a fresh process, {args.rounds} interleaved rounds (ms)")
    for r in rows:
        print(
            f"  {r['candidate']:<34} {r['median_s'] * 1e3:8.1f}  "
            f"({r['min_s'] * 1e3:.1f}–{r['max_s'] * 1e3:.1f})  "
            f"{r['speedup_over_trace_compile']:5.1f}× faster than trace+compile"
        )
    print("  exported bytes: " + ", ".join(f"{k} {v:,}" for k, v in sizes.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
