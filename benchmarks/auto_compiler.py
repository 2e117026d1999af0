"""``jit(fn, compiler="auto")``: does it pick the fastest compiler, and what does its
search cost?

Functions: the seeds' softmax of an f32[256][256] ("Compiler or Backend?") and the
seeds' MLP predict (784-128-10, tanh then log-softmax, batch 64, f32, parameters as
arguments). Per backend with more than one compiler serving it (xla: evaluator, xla;
torch: evaluator, torch), each round starts fresh interpreters, in turn:

- ``auto``: ``numerix.jit(fn, compiler="auto")`` and its first call, which traces,
  compiles every candidate, times them and keeps the fastest; it prints the choice and
  the first call's time (the search included);
- ``one compile``: ``numerix.jit(fn, compiler=C)`` and its first call, for each
  candidate C (trace, compile, first run): the cost auto's search is compared with;
- ``truth``: every candidate jitted in one process and timed with ``numerix.benchmark``
  (interleaved turns, 1 s each): which compiler is really the fastest at steady state.

The search alone is ``f.explain(*args).search_s`` (the candidates' compilations, first
calls and rounds, without the trace and the process's one discovery of the installed
compilers, which any listing of them pays once).

Printed per function and backend: how many of the rounds' searches chose the truth's
fastest or one within 5 % of it (each round's own truth; two compilers level at steady
state are both the fastest), and how many chose the very fastest, the search's first call as a median and spread, and
its ratio to the winner's one compile (median over rounds).

    python benchmarks/auto_compiler.py             # 10 rounds
    python benchmarks/auto_compiler.py --rounds 3 --json
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
import json, time, numpy as np, numerix as nx
backend = {backend!r}
rng = np.random.default_rng(0)
def t(*shape):
    return nx.tensor(rng.standard_normal(shape).astype(np.float32) * 0.05, backend=backend)
def softmax(x):
    e = nx.exp(x - nx.max(x, axis=-1, keepdims=True))
    return e / nx.sum(e, axis=-1, keepdims=True)
def predict(params, x):
    h = nx.tanh(nx.dot(x, params["w1"]) + params["b1"])
    return nx.log_softmax(nx.dot(h, params["w2"]) + params["b2"], axis=-1)
if {function!r} == "softmax":
    fn, args = softmax, (t(256, 256),)
else:
    params = {{"w1": t(784, 128), "b1": t(128), "w2": t(128, 10), "b2": t(10)}}
    fn, args = predict, (params, t(64, 784))
"""

AUTO = (
    SETUP
    + """
f = nx.jit(fn, compiler="auto")
t0 = time.perf_counter()
f(*args).numpy()
took = time.perf_counter() - t0
choice = f.explain(*args)
print(json.dumps({{"choice": choice.compiler, "first_call_s": took, "search_s": choice.search_s}}))
"""
)

ONE = (
    SETUP
    + """
f = nx.jit(fn, compiler={compiler!r})
t0 = time.perf_counter()
f(*args).numpy()
print(json.dumps({{"first_call_s": time.perf_counter() - t0}}))
"""
)

TRUTH = (
    SETUP
    + """
from numerix.defn.compilers import compilers_serving
names = compilers_serving(nx.get_backend(backend))
# a job takes the input (the arguments' tuple) as its one argument
r = nx.benchmark({{n: (lambda a, f=nx.jit(fn, compiler=n): f(*a)) for n in names}},
                 {{"args": args}}, time=1.0, warmup=0.2, memory=False)
print(json.dumps({{s["job"]: s["median_s"] for s in r.scenarios}}))
"""
)


def _run(code: str, cache: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = cache
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600
    )
    if out.returncode != 0:
        raise SystemExit(f"a benchmark process failed:\n{out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    import numerix as nx
    from numerix.defn.compilers import compilers_serving

    cases = []
    for backend in ("xla", "torch"):
        try:
            names = compilers_serving(nx.get_backend(backend))
        except nx.NumerixError:
            continue
        for function in ("softmax", "predict"):
            cases.append((backend, function, names))
    report = []
    with tempfile.TemporaryDirectory() as cache:
        for backend, function, names in cases:
            fmt = {"backend": backend, "function": function}
            _run(AUTO.format(**fmt), cache)  # the bytecode cache filled
            rows: list[dict[str, Any]] = []
            for _ in range(args.rounds):
                auto = _run(AUTO.format(**fmt), cache)
                ones = {
                    n: _run(ONE.format(compiler=n, **fmt), cache)["first_call_s"] for n in names
                }
                truth = _run(TRUTH.format(**fmt), cache)
                rows.append({"auto": auto, "one": ones, "truth": truth})
            # right: the choice is the truth's fastest, or within 5 % of it (two compilers
            # level at steady state: either is the fastest)
            right = sum(
                r["truth"][r["auto"]["choice"]] <= 1.05 * min(r["truth"].values()) for r in rows
            )
            exact = sum(r["auto"]["choice"] == min(r["truth"], key=r["truth"].get) for r in rows)
            search = [r["auto"]["first_call_s"] for r in rows]
            ratio = [r["auto"]["first_call_s"] / r["one"][r["auto"]["choice"]] for r in rows]
            # the search alone (Choice.search_s: compilations, first calls, rounds), without
            # the trace and the process's one discovery of the installed compilers
            alone = [r["auto"]["search_s"] / r["one"][r["auto"]["choice"]] for r in rows]
            entry = {
                "backend": backend,
                "function": function,
                "right": right,
                "exact": exact,
                "rounds": len(rows),
                "auto_first_call_s": statistics.median(search),
                "auto_first_call_spread_s": (min(search), max(search)),
                "ratio_to_one_compile": statistics.median(ratio),
                "ratio_spread": (min(ratio), max(ratio)),
                "search_ratio": statistics.median(alone),
                "search_ratio_spread": (min(alone), max(alone)),
                "one_compile_s": {n: statistics.median(r["one"][n] for r in rows) for n in names},
                "steady_median_s": {
                    n: statistics.median(r["truth"][n] for r in rows) for n in names
                },
                "choices": [r["auto"]["choice"] for r in rows],
            }
            report.append(entry)
            if not args.json:
                one = ", ".join(f"{n} {v * 1e3:.1f} ms" for n, v in entry["one_compile_s"].items())
                steady = ", ".join(
                    f"{n} {v * 1e6:.1f} µs" for n, v in entry["steady_median_s"].items()
                )
                print(
                    f"{function:8s} on {backend:5s}: fastest (within 5 %) chosen in {right}/{len(rows)} "
                    f"(the very fastest in {exact}); "
                    f"auto's first call {entry['auto_first_call_s'] * 1e3:.1f} ms "
                    f"({min(search) * 1e3:.1f}–{max(search) * 1e3:.1f}), "
                    f"{entry['ratio_to_one_compile']:.2f}× the winner's one compile "
                    f"({min(ratio):.2f}–{max(ratio):.2f}); the search alone "
                    f"{entry['search_ratio']:.2f}× ({min(alone):.2f}–{max(alone):.2f}); "
                    f"one compile: {one}; steady: {steady}",
                    flush=True,
                )
    if args.json:
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
