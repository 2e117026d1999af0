"""numerix.vmap beside what it replaces (issue 30's targets), in one run.

    python benchmarks/vmap.py            # everything installed
    python benchmarks/vmap.py --quick    # a smoke test
    python benchmarks/vmap.py --json     # the same figures as JSON
    python benchmarks/vmap.py --only eager   # part b alone (binary, no JAX)
    python benchmarks/vmap.py --only grad    # part a's cached calls (first: its first calls)
    python benchmarks/vmap.py --only scan    # part d alone (its cached calls and first calls)
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/vmap.py   # steadier

a. per-example gradients of the 784 -> 128 -> 10 MLP (tanh, softmax cross-entropy,
   float32) on a batch of 64: ``nx.jit(nx.vmap(nx.grad(loss), in_axes=(None, 0, 0)),
   compiler="xla")`` on the xla backend beside ``jax.jit(jax.vmap(jax.grad(loss),
   in_axes=(None, 0, 0)))`` (target <= 1.15x); the largest absolute difference of the
   gradients (target <= 1e-6); and the first call of each (trace, batch, differentiate,
   compile, run) in fresh processes, the sides alternating.
b. eager ``nx.vmap`` on binary of a function of 30 nodes (its parameter, element-wise
   ops and six reductions over the features) over 1,000 examples of 32 features, beside the same
   function written batched by hand with numerix ops (``axis=-1, keepdims=True``;
   target <= 1.3x) and beside a Python loop calling it on each example (target: vmap
   >= 50x faster). Context rows: what tracing one example costs alone (eager ``vmap``
   traces on every call, as JAX's does: the function's Python runs each time);
   ``jit(vmap(f))`` with the evaluator, traced once per signature; and, where JAX is
   installed, JAX's own eager ``jax.vmap`` beside the same function batched by hand in
   JAX. The vmap figure depends on the allocator: the walk
   holds every node's batched value (128 KB each here) until the call ends, and glibc
   hands the freed top of its heap back to the system, so the next call faults its
   pages in again; ``MALLOC_TRIM_THRESHOLD_=268435456`` shows the call without that.
c. ``nx.jacrev`` of ``tanh(A @ x) * x`` (100 -> 100, float32) on xla, eager and under
   ``nx.jit(compiler="xla")``, beside ``jax.jacrev`` eager and under ``jax.jit``, with the
   largest absolute difference of the Jacobians (target <= 1e-6).
d. ``nx.scan`` of a 1,000-step RNN cell (``h = tanh(h @ Wh + x_t @ Wx + b)``, hidden 64,
   input 32, float32, ``ys`` the ``h`` of every step) under ``nx.jit(compiler="xla")`` on
   the xla backend beside ``jax.jit`` of ``jax.lax.scan`` (target <= 1.15x), with
   ``unroll=1`` and ``unroll=8``, and the largest absolute difference of the carries and
   ``ys``; a context row with the parameters passed as three tensors instead of one
   tuple (``jit``'s call path for flat tensor arguments); and the first call of each
   (trace, compile, run) in fresh processes, the sides alternating, at 10, 100, 1,000
   and 10,000 steps: numerix traces the cell once, so its first call should not grow
   with the length (the run itself is in it: about 0.4 ms per 1,000 steps).

Every result is checked against the other side before it is timed. Candidates run in
interleaved rounds (``numerix.benchmarking``), each a timeit loop of at least 50 ms,
except the jitted xla calls (parts a and d, and c's cached call), which take turns call
by call (``alternate_calls``, a round's figure the median of its calls); a row gives each
side's median and its min-max over the rounds, and the ratio of the medians (numerix
first). xla results are synchronised before the clock stops. The
figures are ratios taken in one run: compare them only within a run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np

import numerix as nx
from numerix import plugins

# the harness every benchmark shares (numerix.benchmarking)
from numerix.benchmarking import alternate_calls, interleave, rounds, spread

MIN_TIME = 0.05  # seconds per round and candidate
SIZES = (784, 128, 10)
BATCH = 64
EXAMPLES, FEATURES = 1000, 32
JAC_N = 100
RNN_STEPS, RNN_HIDDEN, RNN_INPUT = 1000, 64, 32
SCAN_LENGTHS = (10, 100, 1000, 10000)


def _row(name: str, other: str, ra: list[float], rb: list[float], target: str,
         **extra: Any) -> dict[str, Any]:  # fmt: skip
    return {"name": name, "other": other, "target": target, **spread(ra, rb), **extra}


def _max_diff(a: Any, b: Any) -> float:
    return float(np.max(np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, np.float64))))


# ---------------------------------------------------------------- a. per-example gradients
def mlp_data() -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """The MLP's parameters (He-scaled normal weights, zero biases), 64 inputs in [0, 1)
    and their one-hot labels (grad.py's data)."""
    rng = np.random.default_rng(0)
    n_in, hidden, n_out = SIZES
    params = [
        (rng.standard_normal((n_in, hidden)) * np.sqrt(2 / n_in)).astype(np.float32),
        np.zeros(hidden, np.float32),
        (rng.standard_normal((hidden, n_out)) * np.sqrt(2 / hidden)).astype(np.float32),
        np.zeros(n_out, np.float32),
    ]
    x = rng.random((BATCH, n_in), dtype=np.float32)
    y = np.eye(n_out, dtype=np.float32)[rng.integers(0, n_out, BATCH)]
    return params, x, y


def nx_loss(params: list[Any], x: Any, y: Any) -> Any:
    """One example's loss: ``x`` f32[784], ``y`` a one-hot f32[10]."""
    w1, b1, w2, b2 = params
    h = nx.tanh(nx.dot(x, w1) + b1)
    return -nx.sum(y * nx.log_softmax(nx.dot(h, w2) + b2, axis=-1))


def jax_loss(params: list[Any], x: Any, y: Any) -> Any:
    import jax
    import jax.numpy as jnp

    w1, b1, w2, b2 = params
    h = jnp.tanh(x @ w1 + b1)
    return -jnp.sum(y * jax.nn.log_softmax(h @ w2 + b2, axis=-1))


def bench_per_example(repeat: int, calls: int = 20) -> list[dict[str, Any]]:
    """Cached calls, the sides taking turns call by call (``alternate_calls``), a round's
    figure the median of its ``calls`` calls of each: a call writes 26 MB of gradients
    into fresh pages (the first-touch page faults are most of it, on both sides), and on
    a shared machine a timeit loop of two or three such calls swings by 3x between rounds."""
    import jax
    import jax.numpy as jnp

    params, x, y = mlp_data()
    ps = [nx.tensor(p, backend="xla") for p in params]
    tx, ty = nx.tensor(x, backend="xla"), nx.tensor(y, backend="xla")
    jp, jx, jy = [jnp.asarray(p) for p in params], jnp.asarray(x), jnp.asarray(y)
    ours = nx.jit(nx.vmap(nx.grad(nx_loss), in_axes=(None, 0, 0)), compiler="xla")
    raw = jax.jit(jax.vmap(jax.grad(jax_loss), in_axes=(None, 0, 0)))
    got, want = ours(ps, tx, ty), raw(jp, jx, jy)
    diff = 0.0
    for g, w, p in zip(got, want, params):
        assert g.shape == (BATCH, *p.shape) and g.dtype == nx.float32, g.describe()
        diff = max(diff, _max_diff(g.to_numpy(), w))

    def nx_call() -> Any:
        return [g.data.block_until_ready() for g in ours(ps, tx, ty)]

    def jax_call() -> Any:
        return jax.block_until_ready(raw(jp, jx, jy))

    ra, rb = alternate_calls([nx_call, jax_call], repeat, calls)
    return [_row("a. per-example grads, MLP 784-128-10 x 64, xla compiler, cached call",
                 "jax.jit(jax.vmap(jax.grad))", ra, rb, "<= 1.15x",
                 max_abs_diff=diff, diff_target=1e-6)]  # fmt: skip


_FIRST_CALL = """
import sys, time, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, BENCH)
import jax
import numerix as nx
import vmap as b

side = sys.argv[1]
params, x, y = b.mlp_data()
# each side's arguments as numerix's xla backend makes them: jax.device_put, which
# compiles nothing (jax.numpy.asarray would set up XLA's compiler on one side only)
if side == "numerix":
    args = [[nx.tensor(p, backend="xla") for p in params], nx.tensor(x, backend="xla"),
            nx.tensor(y, backend="xla")]
    for a in [*args[0], *args[1:]]:
        a.data.block_until_ready()
else:
    args = [[jax.device_put(p) for p in params], jax.device_put(x), jax.device_put(y)]
    jax.block_until_ready(args)
t = time.perf_counter()
if side == "numerix":
    f = nx.jit(nx.vmap(nx.grad(b.nx_loss), in_axes=(None, 0, 0)), compiler="xla")
    [g.data.block_until_ready() for g in f(*args)]
else:
    f = jax.jit(jax.vmap(jax.grad(b.jax_loss), in_axes=(None, 0, 0)))
    jax.block_until_ready(f(*args))
print(time.perf_counter() - t)
"""


def bench_first_call(runs: int) -> list[dict[str, Any]]:
    """Part a's first call, each sample a fresh process, the sides alternating; the clock
    runs from making the jitted function to its first result. Modules are read from
    cached bytecode, as an installed package's are (a private ``PYTHONPYCACHEPREFIX``,
    filled by one unmeasured run per side), as in ``compilers.py``."""
    bench = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "first_call.py")  # a file: the xla plugin loads from __main__
        with open(script, "w") as fh:
            fh.write(f"BENCH = {bench!r}\n" + _FIRST_CALL)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")

        def run(side: str) -> float:
            out = subprocess.run([sys.executable, "-W", "ignore", script, side],
                                 capture_output=True, text=True, check=True, env=env)  # fmt: skip
            return float(out.stdout.strip().splitlines()[-1])

        times: dict[str, list[float]] = {"numerix": [], "jax": []}
        for side in times:
            run(side)  # the bytecode cache filled
        for _ in range(runs):
            for side in times:
                times[side].append(run(side))
    return [_row("a. per-example grads, first call in a fresh process (trace + compile)",
                 "jax.jit(jax.vmap(jax.grad))", times["numerix"], times["jax"],
                 "-")]  # fmt: skip


# ---------------------------------------------------------------- b. eager vmap on binary
def features(x: Any, axis: int | None = None) -> Any:
    """Standardise, squash and softmax-weight a vector of features: element-wise ops and
    six reductions (30 nodes traced, the parameter included). With ``axis``, the same on a batch by hand: the
    reductions over ``axis``, kept for broadcasting."""
    kw: dict[str, Any] = {} if axis is None else {"axis": axis, "keepdims": True}
    m = nx.mean(x, **kw)
    c = x - m
    s = nx.sqrt(nx.mean(c * c, **kw) + 1e-5)
    z = c / s
    h = nx.tanh(z) * 0.5 + z
    e = nx.exp(h - nx.max(h, **kw))
    p = e / nx.sum(e, **kw)
    r = nx.maximum(z, 0.0) * p + nx.abs(x) * 0.1
    return r - nx.min(r, **kw)


def jax_features(x: Any, axis: int | None = None) -> Any:
    """:func:`features` in JAX."""
    import jax.numpy as jnp

    kw: dict[str, Any] = {} if axis is None else {"axis": axis, "keepdims": True}
    m = jnp.mean(x, **kw)
    c = x - m
    s = jnp.sqrt(jnp.mean(c * c, **kw) + 1e-5)
    z = c / s
    h = jnp.tanh(z) * 0.5 + z
    e = jnp.exp(h - jnp.max(h, **kw))
    p = e / jnp.sum(e, **kw)
    r = jnp.maximum(z, 0.0) * p + jnp.abs(x) * 0.1
    return r - jnp.min(r, **kw)


def bench_eager_jax(repeat: int) -> list[dict[str, Any]]:
    """Context for part b: JAX's own eager ``vmap`` of the same function beside the same
    written batched by hand in JAX (each op dispatched eagerly on either side)."""
    import jax
    import jax.numpy as jnp

    data = np.random.default_rng(0).standard_normal((EXAMPLES, FEATURES)).astype(np.float32)
    xs = jnp.asarray(data)
    vf = jax.vmap(jax_features)

    def by_vmap() -> Any:
        return vf(xs).block_until_ready()

    def by_hand() -> Any:
        return jax_features(xs, axis=-1).block_until_ready()

    np.testing.assert_allclose(np.asarray(by_vmap()), np.asarray(by_hand()), rtol=1e-5,
                               atol=1e-5)  # fmt: skip
    t_vmap, t_hand = interleave([by_vmap, by_hand], repeat, min_time=MIN_TIME)
    return [_row("b.   context: jax.vmap eager (JAX, CPU)", "JAX batched by hand", t_vmap,
                 t_hand, "-")]  # fmt: skip


def bench_eager(repeat: int) -> list[dict[str, Any]]:
    data = np.random.default_rng(0).standard_normal((EXAMPLES, FEATURES)).astype(np.float32)
    xs = nx.tensor(data, backend="binary")
    vf = nx.vmap(features)

    def by_vmap() -> Any:
        return vf(xs)

    def by_hand() -> Any:
        return features(xs, axis=-1)

    def by_loop() -> Any:
        return [features(xs[i]) for i in range(EXAMPLES)]

    template = nx.template((FEATURES,), nx.float32)

    def trace_one() -> Any:
        return nx.trace(features, template)

    jf = nx.jit(nx.vmap(features), compiler="evaluator")

    def by_jit() -> Any:
        return jf(xs)

    got, hand = by_vmap(), by_hand()
    np.testing.assert_allclose(by_jit().to_numpy(), hand.to_numpy(), rtol=1e-6, atol=1e-6)
    assert got.shape == (EXAMPLES, FEATURES) and got.dtype == nx.float32, got.describe()
    loop = np.stack([r.to_numpy() for r in by_loop()])
    np.testing.assert_allclose(got.to_numpy(), hand.to_numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got.to_numpy(), loop, rtol=1e-5, atol=1e-6)
    nodes = len(nx.trace(features, template).nodes)
    t_vmap, t_hand, t_loop, t_trace, t_jit = interleave(
        [by_vmap, by_hand, by_loop, trace_one, by_jit], repeat, min_time=MIN_TIME
    )
    shape = f"f32[{EXAMPLES}][{FEATURES}], {nodes} nodes"
    return [
        _row(f"b. eager vmap on binary, {shape}", "batched by hand (axis=-1)", t_vmap,
             t_hand, "<= 1.3x"),
        _row(f"b. eager vmap on binary, {shape}", "Python loop over the examples", t_vmap,
             t_loop, "<= 0.02x (>= 50x faster)"),
        _row("b.   of which: tracing one example (numerix.trace)", "the eager vmap call",
             t_trace, t_vmap, "-"),
        _row("b.   jit(vmap(f)), evaluator: traced once per signature", "batched by hand "
             "(axis=-1)", t_jit, t_hand, "-"),
    ]  # fmt: skip


# ---------------------------------------------------------------- c. jacrev
def bench_jacrev(repeat: int, calls: int = 2000) -> list[dict[str, Any]]:
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    a_np = (rng.standard_normal((JAC_N, JAC_N)) / np.sqrt(JAC_N)).astype(np.float32)
    x_np = rng.standard_normal(JAC_N).astype(np.float32)
    a, x = nx.tensor(a_np, backend="xla"), nx.tensor(x_np, backend="xla")
    ja, jx = jnp.asarray(a_np), jnp.asarray(x_np)

    def nx_f(v: Any) -> Any:
        return nx.tanh(nx.dot(a, v)) * v

    def jax_f(v: Any) -> Any:
        return jnp.tanh(ja @ v) * v

    nx_eager, nx_jit = nx.jacrev(nx_f), nx.jit(nx.jacrev(nx_f), compiler="xla")
    jax_eager, jax_jit = jax.jacrev(jax_f), jax.jit(jax.jacrev(jax_f))
    want = np.asarray(jax_jit(jx))
    rows = []
    for label, ours, theirs, other in (
        ("eager", nx_eager, jax_eager, "jax.jacrev eager"),
        ("xla compiler, cached call", nx_jit, jax_jit, "jax.jit(jax.jacrev)"),
    ):
        got = ours(x)
        assert got.shape == (JAC_N, JAC_N) and got.dtype == nx.float32, got.describe()
        diff = max(_max_diff(got.to_numpy(), want), _max_diff(got.to_numpy(), theirs(jx)))

        def ours_call(ours: Callable[[Any], Any] = ours) -> Any:
            return ours(x).data.block_until_ready()

        def theirs_call(theirs: Callable[[Any], Any] = theirs) -> Any:
            return theirs(jx).block_until_ready()

        if ours is nx_eager:
            ra, rb = rounds(ours_call, theirs_call, repeat, MIN_TIME)
        else:  # a cached call of tens of µs is bimodal on XLA's CPU client: call by call
            ra, rb = alternate_calls([ours_call, theirs_call], repeat, calls)
        rows.append(_row(f"c. jacrev of tanh(A @ x) * x, {JAC_N} -> {JAC_N}, xla, {label}",
                         other, ra, rb, "-", max_abs_diff=diff, diff_target=1e-6))  # fmt: skip
    return rows


# ---------------------------------------------------------------- d. scan
def rnn_data(steps: int = RNN_STEPS) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """``steps`` inputs of 32 normal features, a zero initial state of 64 and the cell's
    parameters (``Wh`` 64 x 64 and ``Wx`` 32 x 64 normal, scaled by 1/sqrt(fan-in), so
    the state stays away from tanh's flat ends; ``b`` small and non-zero)."""
    rng = np.random.default_rng(0)
    params = [  # drawn first: the same at every length
        (rng.standard_normal((RNN_HIDDEN, RNN_HIDDEN)) / np.sqrt(RNN_HIDDEN)).astype(np.float32),
        (rng.standard_normal((RNN_INPUT, RNN_HIDDEN)) / np.sqrt(RNN_INPUT)).astype(np.float32),
        (rng.standard_normal(RNN_HIDDEN) * 0.1).astype(np.float32),
    ]
    xs = rng.standard_normal((steps, RNN_INPUT)).astype(np.float32)
    return xs, np.zeros(RNN_HIDDEN, np.float32), params


def nx_rnn(xs: Any, h0: Any, params: Any, unroll: int = 1) -> Any:
    """The RNN over ``xs`` with ``numerix.scan``: ``(last h, every step's h)``."""
    wh, wx, b = params

    def cell(h: Any, x: Any) -> tuple[Any, Any]:
        h = nx.tanh(nx.dot(h, wh) + nx.dot(x, wx) + b)
        return h, h

    return nx.scan(cell, h0, xs, unroll=unroll)


def jax_rnn(xs: Any, h0: Any, params: Any, unroll: int = 1) -> Any:
    import jax
    import jax.numpy as jnp

    wh, wx, b = params

    def cell(h: Any, x: Any) -> tuple[Any, Any]:
        h = jnp.tanh(h @ wh + x @ wx + b)
        return h, h

    return jax.lax.scan(cell, h0, xs, unroll=unroll)


#: numerix's scan counts its steps in int64, which needs JAX's process-wide 64-bit mode:
#: allowed here without the warning (the JAX side traced in this process runs in it too)
X64 = {"backends": {"xla": {"x64": True}}}


def bench_scan(repeat: int, calls: int = 200) -> list[dict[str, Any]]:
    """Cached calls, the sides taking turns call by call (``alternate_calls``): a call of
    a few hundred µs on XLA's CPU client is bimodal (about 50 µs apart), as part a's."""
    import jax
    import jax.numpy as jnp

    xs, h0, params = rnn_data()
    tx, th = nx.tensor(xs, backend="xla"), nx.tensor(h0, backend="xla")
    tp = tuple(nx.tensor(p, backend="xla") for p in params)
    jx, jh, jp = jnp.asarray(xs), jnp.asarray(h0), tuple(jnp.asarray(p) for p in params)
    rows = []
    for unroll in (1, 8):
        ours = nx.jit(lambda xs, h0, params, u=unroll: nx_rnn(xs, h0, params, u), compiler="xla")
        flat = nx.jit(lambda xs, h0, wh, wx, b, u=unroll: nx_rnn(xs, h0, (wh, wx, b), u),
                      compiler="xla")  # fmt: skip
        raw = jax.jit(lambda xs, h0, params, u=unroll: jax_rnn(xs, h0, params, u))
        with nx.config(**X64):
            got, got_flat = ours(tx, th, tp), flat(tx, th, *tp)
        want = raw(jx, jh, jp)
        diff = 0.0
        for g, w, shape in zip(got, want, [(RNN_HIDDEN,), (RNN_STEPS, RNN_HIDDEN)]):
            assert g.shape == shape and g.dtype == nx.float32, g.describe()
            diff = max(diff, _max_diff(g.to_numpy(), w))
        for g, w in zip(got_flat, want):
            np.testing.assert_array_equal(g.to_numpy(), np.asarray(w))

        def nx_call(ours: Callable[..., Any] = ours) -> Any:
            return [t.data.block_until_ready() for t in ours(tx, th, tp)]

        def flat_call(flat: Callable[..., Any] = flat) -> Any:
            return [t.data.block_until_ready() for t in flat(tx, th, *tp)]

        def jax_call(raw: Callable[..., Any] = raw) -> Any:
            return jax.block_until_ready(raw(jx, jh, jp))

        ra, rf, rb = alternate_calls([nx_call, flat_call, jax_call], repeat, calls)
        name = f"d. scan, RNN {RNN_STEPS:,} steps, hidden {RNN_HIDDEN}, unroll={unroll}"
        rows += [
            _row(f"{name}, xla compiler, cached call", "jax.jit(jax.lax.scan)", ra, rb,
                 "<= 1.15x" if unroll == 1 else "-", max_abs_diff=diff, diff_target=1e-6),
            _row(f"d.   the same, the parameters as three tensors (unroll={unroll})",
                 "jax.jit(jax.lax.scan)", rf, rb, "-"),
        ]  # fmt: skip
    return rows


_SCAN_FIRST_CALL = """
import sys, time, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, BENCH)
import jax
import numerix as nx
import vmap as b

side, steps = sys.argv[1], int(sys.argv[2])
xs, h0, params = b.rnn_data(steps)
# each side's arguments as numerix's xla backend makes them (see _FIRST_CALL)
if side == "numerix":
    args = [nx.tensor(xs, backend="xla"), nx.tensor(h0, backend="xla"),
            tuple(nx.tensor(p, backend="xla") for p in params)]
    for a in [*args[:2], *args[2]]:
        a.data.block_until_ready()
else:
    args = [jax.device_put(xs), jax.device_put(h0), tuple(jax.device_put(p) for p in params)]
    jax.block_until_ready(args)
t = time.perf_counter()
if side == "numerix":
    with nx.config(**b.X64):
        f = nx.jit(b.nx_rnn, compiler="xla")
        [o.data.block_until_ready() for o in f(*args)]
else:
    f = jax.jit(b.jax_rnn)
    jax.block_until_ready(f(*args))
print(time.perf_counter() - t)
"""


def bench_scan_first_call(runs: int) -> list[dict[str, Any]]:
    """Part d's first call at each length, each sample a fresh process, the sides
    alternating (as :func:`bench_first_call`): the clock runs from making the jitted
    function to its first result. The JAX side runs in JAX's default 32-bit mode (its
    loop counts in int32); numerix's turns the 64-bit mode on inside the clock."""
    bench = os.path.dirname(os.path.abspath(__file__))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "scan_first_call.py")
        with open(script, "w") as fh:
            fh.write(f"BENCH = {bench!r}\n" + _SCAN_FIRST_CALL)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")

        def run(side: str, steps: int) -> float:
            out = subprocess.run([sys.executable, "-W", "ignore", script, side, str(steps)],
                                 capture_output=True, text=True, check=True, env=env)  # fmt: skip
            return float(out.stdout.strip().splitlines()[-1])

        sides = ("numerix", "jax")
        for side in sides:
            run(side, SCAN_LENGTHS[0])  # the bytecode cache filled
        times: dict[tuple[str, int], list[float]] = {
            (s, n): [] for n in SCAN_LENGTHS for s in sides
        }
        for _ in range(runs):
            for n in SCAN_LENGTHS:
                for side in sides:
                    times[side, n].append(run(side, n))
        for n in SCAN_LENGTHS:
            rows.append(_row(f"d. scan, RNN {n:,} steps, first call in a fresh process",
                             "jax.jit(jax.lax.scan)", times["numerix", n], times["jax", n],
                             "flat in the length"))  # fmt: skip
    return rows


# ---------------------------------------------------------------- the table
def _print(rows: list[dict[str, Any]]) -> int:
    w = max(len(r["name"]) for r in rows)
    for r in rows:
        print(
            f"{r['name']:<{w}}  {r['numerix_s'] * 1e6:10.1f} us  vs {r['other']}: "
            f"{r['raw_s'] * 1e6:10.1f} us  ratio {r['ratio']:.3f}  (target {r['target']})"
        )
        print(
            f"{'':<{w}}  min-max {r['numerix_min_s'] * 1e6:.1f}-{r['numerix_max_s'] * 1e6:.1f}"
            f" us  vs {r['raw_min_s'] * 1e6:.1f}-{r['raw_max_s'] * 1e6:.1f} us"
            + (f"  ({1 / r['ratio']:.1f}x faster)" if r["ratio"] < 1 else "")
        )
        if "max_abs_diff" in r:
            print(f"{'':<{w}}  max abs difference {r['max_abs_diff']:.2e} "
                  f"(target <= {r['diff_target']:.0e})")  # fmt: skip
    return 0


def _json(rows: list[dict[str, Any]]) -> int:
    print(json.dumps(rows, indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--quick", action="store_true", help="3 short rounds, 2 first calls: a smoke test"
    )
    p.add_argument("--repeat", type=int, default=11, help="interleaved rounds per row")
    p.add_argument("--first-calls", type=int, default=7, help="fresh processes per side")
    p.add_argument(
        "--only", choices=("grad", "first", "eager", "jacrev", "scan"), help="one part alone"
    )
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = p.parse_args(argv)
    repeat = 3 if args.quick else args.repeat
    parts: dict[str, Callable[[], list[dict[str, Any]]]] = {
        "grad": lambda: bench_per_example(repeat, 5 if args.quick else 20),
        "first": lambda: bench_first_call(2 if args.quick else args.first_calls),
        "eager": lambda: bench_eager(repeat) + (bench_eager_jax(repeat) if _has_jax() else []),
        "jacrev": lambda: bench_jacrev(repeat, 200 if args.quick else 2000),
        "scan": lambda: (
            bench_scan(repeat, 20 if args.quick else 200)
            + bench_scan_first_call(2 if args.quick else args.first_calls)
        ),
    }
    if args.only:
        names = [args.only]
    elif "xla" in plugins.backend_entries():
        names = list(parts)
    else:
        print("(numerix-xla is not installed: parts a, c and d are left out)")
        names = ["eager"]
    rows = [row for name in names for row in parts[name]()]
    return (_json if args.json else _print)(rows)


def _has_jax() -> bool:
    import importlib.util

    return importlib.util.find_spec("jax") is not None


if __name__ == "__main__":
    sys.exit(main())
