"""numerix-xla's kernels: indices, slice starts and scalars are runtime operands, so a new
index compiles nothing; the kernel cache is a bounded LRU that releases what it drops, and
its bound holds XLA's executables whatever shapes the eager ops meet."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
import weakref
from collections import OrderedDict

import jax
import numpy as np
import pytest

import numerix as nx
from numerix_xla import _kernels as xk

# (i, j) pairs, 50 of them all distinct (13 and 17 are coprime)
_PAIRS = [(n % 13, (7 * n) % 17) for n in range(50)]


@pytest.fixture
def compile_log(caplog):
    """JAX's compile log; ``compile_log()`` is the number of programs compiled so far."""
    with jax.log_compiles(True), caplog.at_level("WARNING", logger="jax"):
        yield lambda: sum(r.getMessage().startswith("Compiling") for r in caplog.records)


def _host(dtype: str, shape: tuple[int, ...] = (13, 17)) -> np.ndarray:
    return (np.arange(np.prod(shape)) % 120).reshape(shape).astype(dtype)


@pytest.mark.parametrize(
    "read",
    [
        pytest.param(lambda t, i, j: t[i, j], id="t[i, j]"),
        pytest.param(lambda t, i, j: t[-i - 1, j], id="t[-i - 1, j]"),
        pytest.param(lambda t, i, j: t[i], id="t[i]"),
        pytest.param(lambda t, i, j: t[i % 10 : i % 10 + 3, j], id="t[i:i+3, j]"),
        pytest.param(
            lambda t, i, j: t[i % 5 : i % 5 + 8 : 3, j % 5 : j % 5 + 9 : 4],
            id="t[i:i+8:3, j:j+9:4]",
        ),
        pytest.param(lambda t, i, j: t[i % 9 + 3 : i % 9 : -1], id="t[i+3:i:-1]"),
    ],
)
def test_fifty_new_indices_compile_nothing_after_the_first(compile_log, read):
    host = _host("float32")
    t = nx.tensor(host, backend="xla")
    first = None
    for i, j in _PAIRS:
        r = read(t, i, j)
        want = read(host, i, j)
        assert r.shape == want.shape and r.dtype is nx.float32 and r.backend is t.backend
        np.testing.assert_array_equal(r.to_numpy(), want)
        if first is None:
            first = compile_log()
    # the first index may compile the kernels of its output shape; 49 new ones compile nothing
    assert compile_log() == first, f"{compile_log() - first} compiles for 49 new indices"


def test_the_naive_loop_steps_compile_nothing_after_the_first(compile_log):
    # fast.ai's c[i, j] += a[i, k] * b[k, j], with numerix's immutable updates
    a_np, b_np = _host("float32", (13, 17)), _host("float32", (17, 13))
    a, b = nx.tensor(a_np, backend="xla"), nx.tensor(b_np, backend="xla")
    c = nx.zeros((13, 13), backend="xla")
    d = nx.zeros((13, 13), backend="xla")
    c_np = np.zeros((13, 13), np.float32)
    first = None
    for i, k in _PAIRS:
        j = (i + k) % 13
        c = nx.indexed_add(c, [[i, j]], a[i, k] * b[k, j])
        d = nx.put_slice(d, [i, j], nx.reshape(d[i, j] + a[i, k] * b[k, j], (1, 1)))
        c_np[i, j] += a_np[i, k] * b_np[k, j]
        if first is None:
            first = compile_log()
    assert compile_log() == first, f"{compile_log() - first} compiles for 49 new indices"
    for r in (c, d):
        assert r.dtype is nx.float32 and r.shape == (13, 13)
        np.testing.assert_array_equal(r.to_numpy(), c_np)


@pytest.mark.parametrize("dtype", [d.name for d in nx.dtypes.ALL_DTYPES])
def test_runtime_starts_read_what_numpy_reads(dtype):
    host = _host(nx.dtypes.as_dtype(dtype, "test").numpy_dtype, (4, 5))
    t = nx.tensor(host, backend="xla")
    for key in [(3, 4), (-1, 0), (slice(1, 3), 2), (slice(None, None, 2), slice(4, 0, -2)),
                (slice(2, 2), 1), (0, slice(5, None)), Ellipsis]:  # fmt: skip
        r, want = t[key], host[key]
        assert r.dtype.name == dtype and r.shape == want.shape
        np.testing.assert_array_equal(r.to_numpy(), want)
    z = nx.tensor(host[0, 0], backend="xla")  # 0-d: nothing to slice
    assert z[()].shape == () and z[()].to_numpy() == host[0, 0]


def test_eye_diagonals_share_one_kernel(compile_log):
    nx.eye(6, 7, k=0, backend="xla")
    first = compile_log()
    for k in [-7, -3, -1, 1, 2, 6, 9]:
        r = nx.eye(6, 7, k=k, backend="xla")
        np.testing.assert_array_equal(r.to_numpy(), np.eye(6, 7, k=k, dtype=np.float32))
        assert r.dtype is nx.float32
    assert compile_log() == first


@pytest.fixture
def kernels(monkeypatch):
    """``kernels(size)``: the kernel cache bound set to ``size`` for the test, and the list
    of the kernels built from then on, ``(key, weak reference)`` each (a creation kernel's
    key is its ``jitted`` key, ``("full", shape, device)``)."""
    built = []
    real = xk._build

    def recording(build, *params):
        fn = real(build, *params)
        built.append((build.key if type(build) is xk._Keyed else (build, *params), weakref.ref(fn)))
        return fn

    old = xk.CACHE_SIZE
    monkeypatch.setattr(xk, "_build", recording)

    def shrink(size):
        xk.set_cache_size(size)  # the new cache wraps the recording builder
        return built

    yield shrink
    monkeypatch.undo()
    xk.set_cache_size(old)


def _alive(built):
    gc.collect()
    return [key for key, ref in built if ref() is not None]


def test_the_kernel_cache_is_a_bounded_lru_that_releases_what_it_drops(kernels):
    built = kernels(4)
    for n in range(1, 11):  # one creation kernel per shape
        t = nx.full((n, 3), 2.5, backend="xla")
        np.testing.assert_array_equal(t.to_numpy(), np.full((n, 3), 2.5, np.float32))
        assert xk.cache_info().currsize <= 4
    assert [k[1] for k, _ in built] == [(n, 3) for n in range(1, 11)]  # each built once
    # released with their executables: nothing keeps an evicted kernel alive
    assert [k[1] for k in _alive(built)] == [(n, 3) for n in (7, 8, 9, 10)]
    # a hit moves a kernel to the recent end; the least recent one goes first
    nx.full((7, 3), 1.0, backend="xla")
    nx.full((11, 3), 1.0, backend="xla")
    assert len(built) == 11  # the hit built nothing
    assert [k[1] for k in _alive(built)] == [(n, 3) for n in (7, 9, 10, 11)]
    nx.clear_caches()
    assert xk.cache_info().currsize == 0
    assert _alive(built) == []


@pytest.mark.parametrize(
    "op",
    [
        pytest.param(lambda x: nx.exp(x), id="unary"),
        pytest.param(lambda x: x * x, id="binary"),
        pytest.param(lambda x: nx.where(x > 1.0, x, 0.0), id="select"),
    ],
)
def test_element_wise_kernels_per_shape_stay_within_the_bound(kernels, op):
    # a module-level jitted function kept one executable per shape it ever met
    built = kernels(3)
    for n in range(1, 9):
        host = np.linspace(0.0, 2.0, n, dtype=np.float32)
        x = nx.tensor(host, backend="xla")
        r = op(x)
        np.testing.assert_allclose(r.to_numpy(), op(nx.tensor(host, backend="binary")).to_numpy(),
                                   rtol=1e-6)  # fmt: skip
        assert r.dtype is nx.float32 and r.shape == (n,)
        assert xk.cache_info().currsize <= 3
    assert len(built) >= 8  # one kernel (or more) per shape
    assert len(_alive(built)) <= 3
    assert _alive(built) == [k for k, _ in built[-len(_alive(built)) :]]  # the most recent


def test_the_bound_is_a_setting():
    with pytest.raises(nx.ConfigError, match="kernel_cache_size"):
        with nx.config(backends={"xla": {"kernel_cache_size": 0}}):
            pass
    with nx.config(backends={"xla": {"kernel_cache_size": 64}}) as s:
        assert s.backends.xla.kernel_cache_size == 64


def test_python_scalar_operands_share_one_device_constant_that_deallocate_keeps():
    # x * 1.0001 puts the 0-d constant on the device once per (device, dtype, value)
    x = nx.tensor(np.arange(4, dtype=np.float32), backend="xla")
    a = nx.full((), 1.0001, dtype=nx.float32, backend="xla")
    b = nx.full((), 1.0001, dtype=nx.float32, backend="xla")
    assert a.data is b.data and xk.is_constant(a.data)
    # 0.0 and -0.0, 1 and 1.0 and True are different constants
    z, nz = (nx.full((), v, dtype=nx.float32, backend="xla") for v in (0.0, -0.0))
    assert np.signbit(nz.to_numpy()) and not np.signbit(z.to_numpy())
    assert nx.full((), True, backend="xla").dtype == nx.bool_
    # deallocating one holder leaves the shared array to the others
    nx.backend_deallocate(a)
    assert b.item() == np.float32(1.0001)
    np.testing.assert_array_equal(
        (x * 1.0001).to_numpy(), np.arange(4, dtype=np.float32) * np.float32(1.0001)
    )
    with pytest.raises(nx.NumerixError, match="deallocated"):
        a + 1.0


def test_constants_are_kept_in_the_kernels_lru(monkeypatch):
    # the 0-d constants share the kernels' LRU: past the bound, the least recently used
    # one goes alone (and is no longer a shared constant), the others stay
    monkeypatch.setattr(xk, "CONSTANTS_SIZE", 2)
    monkeypatch.setattr(xk, "_CONSTANTS", OrderedDict())
    monkeypatch.setattr(xk, "_CONSTANT_IDS", {})
    a, b = (nx.full((), v, dtype=nx.float32, backend="xla") for v in (1.5, 2.5))
    assert nx.full((), 1.5, dtype=nx.float32, backend="xla").data is a.data  # a recent again
    c = nx.full((), 3.5, dtype=nx.float32, backend="xla")
    assert [k[-1] for k in xk._CONSTANTS] == [(float, 1.5), (float, 3.5)]
    assert xk.is_constant(a.data) and xk.is_constant(c.data) and not xk.is_constant(b.data)
    assert [t.item() for t in (a, b, c)] == [1.5, 2.5, 3.5]
    # a deleted constant is put again under its key, the deleted one forgotten
    a.data.delete()
    d = nx.full((), 1.5, dtype=nx.float32, backend="xla")
    assert d.data is not a.data and d.item() == 1.5
    assert xk.is_constant(d.data) and not xk.is_constant(a.data)
    assert len(xk._CONSTANT_IDS) == 2
    nx.clear_caches()
    assert not xk._CONSTANTS and not xk._CONSTANT_IDS


def _live_executables() -> int:
    """The executables alive on the xla backend's device (released ones are gone)."""
    gc.collect()
    return len(nx.get_backend("xla").jax_device.client.live_executables())


def _vector(n: int) -> nx.Tensor:
    return nx.tensor(np.linspace(0.5, 2.0, n, dtype=np.float32), backend="xla")


def _matrix(n: int) -> nx.Tensor:
    return nx.tensor(np.linspace(0.5, 2.0, 2 * n, dtype=np.float32).reshape(n, 2), backend="xla")


# every kernel family, each op fed one new shape per length n: (the op, numpy's of v, m, n)
_EAGER = {
    "sum": (lambda n: _vector(n).sum(), lambda v, m, n: v.sum()),
    "sum axis=0": (lambda n: nx.sum(_matrix(n), axis=0), lambda v, m, n: m.sum(axis=0)),
    "max axis=-1": (lambda n: nx.max(_matrix(n), axis=-1), lambda v, m, n: m.max(axis=-1)),
    "argmax": (lambda n: nx.argmax(_vector(n)), lambda v, m, n: np.argmax(v)),
    "exp": (lambda n: nx.exp(_vector(n)), lambda v, m, n: np.exp(v)),
    "x * x": (lambda n: _vector(n) * _vector(n), lambda v, m, n: v * v),
    "x * 1.5": (lambda n: _vector(n) * 1.5, lambda v, m, n: v * np.float32(1.5)),
    "where": (lambda n: nx.where(_vector(n) > 1.0, _vector(n), 0.0),
              lambda v, m, n: np.where(v > 1.0, v, np.float32(0.0))),
    "matmul": (lambda n: _matrix(n) @ nx.transpose(_matrix(n)), lambda v, m, n: m @ m.T),
    "reshape": (lambda n: nx.reshape(_vector(n), (1, n)), lambda v, m, n: v.reshape(1, n)),
    "transpose": (lambda n: nx.transpose(_matrix(n)), lambda v, m, n: m.T),
    "broadcast_to": (lambda n: nx.broadcast_to(_vector(n), (2, n)),
                     lambda v, m, n: np.broadcast_to(v, (2, n))),
    "concatenate": (lambda n: nx.concatenate([_vector(n), _vector(n)]),
                    lambda v, m, n: np.concatenate([v, v])),
    "x[1:]": (lambda n: _vector(n)[1:], lambda v, m, n: v[1:]),
    "x[1]": (lambda n: _matrix(n)[1], lambda v, m, n: m[1]),
    "flip": (lambda n: nx.flip(_vector(n)), lambda v, m, n: np.flip(v)),
    "take": (lambda n: nx.take(_matrix(n), nx.tensor([1, 0], backend="xla"), axis=0),
             lambda v, m, n: m[[1, 0]]),
    "astype": (lambda n: _vector(n).astype(nx.int32), lambda v, m, n: v.astype(np.int32)),
    "softmax": (lambda n: nx.softmax(_vector(n)),
                lambda v, m, n: np.exp(v - v.max()) / np.exp(v - v.max()).sum()),
    "sort": (lambda n: nx.sort(nx.flip(_vector(n))), lambda v, m, n: v),
    "cumsum": (lambda n: nx.cumsum(_vector(n)), lambda v, m, n: np.cumsum(v)),
    "pad": (lambda n: nx.pad(_vector(n), 1), lambda v, m, n: np.pad(v, 1)),
    "full": (lambda n: nx.full((n,), 2.5, backend="xla"), lambda v, m, n: np.full(n, np.float32(2.5))),
    "eye": (lambda n: nx.eye(n, backend="xla"), lambda v, m, n: np.eye(n, dtype=np.float32)),
}  # fmt: skip


@pytest.mark.parametrize("op", list(_EAGER))
def test_eager_ops_over_new_shapes_keep_at_most_the_bound_of_executables(kernels, op):
    # a kernel kept per (op, static parameters) held one executable per shape it met,
    # outside the bound: x.sum() over 2,000 lengths kept 2,000 (3 GB)
    run, ref = _EAGER[op]
    kernels(3)
    before = _live_executables()
    for n in range(2, 14):
        r = run(n)
        v = np.linspace(0.5, 2.0, n, dtype=np.float32)
        m = np.linspace(0.5, 2.0, 2 * n, dtype=np.float32).reshape(n, 2)
        want = np.asarray(ref(v, m, n))
        assert r.shape == want.shape and r.dtype.numpy_dtype == want.dtype, (r, want)
        np.testing.assert_allclose(r.to_numpy(), want, rtol=1e-6)
    run(2)  # an ask of the fast path's shortcuts releases those it retired
    # the kernels' LRU holds 3, the fast path's shortcuts trace 3 more at most
    assert _live_executables() - before <= 2 * 3
    assert xk.cache_info().currsize <= 3


def test_memory_over_120_new_shapes_stays_bounded_by_the_setting():
    # RSS in a process of its own: x.sum() over 300 lengths with kernel_cache_size = 8
    # grew by about 1.5 MB a length (450 MB) when the reduction kernel kept one
    # executable per shape; within the bound it stays near 8 executables' worth. 120
    # lengths (each compiles two kernels: 2 s of the suite per 20) are 15 times the bound
    script = textwrap.dedent("""
        import gc, json, os
        import numpy as np
        import numerix as nx

        def rss():
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

        def step(n):
            x = nx.tensor(np.ones(n, np.float32), backend="xla")
            r = x.sum()
            assert r.dtype is nx.float32 and r.shape == () and r.item() == n
            r = nx.max(x, axis=0, keepdims=True)
            assert r.dtype is nx.float32 and r.shape == (1,) and r.item() == 1.0

        for n in range(1, 21):  # warm: JAX's and numerix's first-call costs
            step(n)
        gc.collect()
        before = rss()
        for n in range(21, 141):
            step(n)
        gc.collect()
        client = nx.get_backend("xla").jax_device.client
        print(json.dumps({"growth": (rss() - before) / 2**20,
                          "live": len(client.live_executables())}))
    """)
    env = dict(os.environ, NUMERIX_BACKENDS__XLA__KERNEL_CACHE_SIZE="8")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    # the old kernels held 2 executables a length (240 here) and grew 1.5 MB a length;
    # now 8 kernels (and the fast path's shortcuts, 8 more at most) and their programs
    assert figures["live"] <= 2 * 8, figures
    assert figures["growth"] < 120, figures
