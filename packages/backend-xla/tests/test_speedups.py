"""The compiled fast path on xla: its shortcut past the kernel (``XlaBackend.fast_kernel``,
the jitted function itself) gives what the Python path gives, bit for bit, with the same
errors; the shortcuts keep their executables within the kernel cache's bound.

XLA compiles a program per (op, dtype, shape): the checks run over a few dtypes (a float,
a low-precision float, an integer, bool) and the shapes that cover the edges (0-d, empty,
a vector; the checker's matrix products and reshapes bring matrices). JAX's 64-bit mode is process-wide: its case runs in a fresh
interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.ops import _fast
from numerix.testing import speedups
from numerix.testing.oracle import check
from numerix_xla import _kernels as xk
from numerix_xla import backend as xb

pytestmark = pytest.mark.skipif(
    _fast.SPEEDUPS is None, reason="runs where the compiled module serves (built, not turned off)"
)

_KINDS = (dtypes.float32, dtypes.float16, dtypes.int32, dtypes.bool_)
_SHAPES = ((), (0,), (3,))  # matrices: matmul's and reshape's own operands
_PJIT = type(jax.jit(lambda a: a))


@pytest.fixture(autouse=True)
def _shortcuts_asked():
    """The kit's plugin turns the rule check on, under which no shortcut is asked: off
    for each test here, the memo dropped on either side."""
    with speedups.shortcuts_asked():
        yield


def _backend():
    return nx.tensor(np.zeros(1, np.float32), backend="xla").backend


@pytest.fixture
def bound(monkeypatch):
    """``bound(size)``: the kernel cache's bound (which the shortcuts share) for the test;
    the shortcuts and the fast path's memo start empty and are dropped after."""
    old = xk.CACHE_SIZE

    def set_bound(size):
        xk.set_cache_size(size)
        xb.XlaBackend.clear_caches()
        _fast.SPEEDUPS.clear()

    yield set_bound
    xk.set_cache_size(old)
    xb.XlaBackend.clear_caches()
    _fast.SPEEDUPS.clear()


def test_every_fast_op_agrees_with_the_python_path_and_takes_the_shortcut(bound):
    # a bound above what the check traces (about 600 signatures): a retirement drops the
    # memo, and the check reads the memo at its end
    bound(4096)
    b = _backend()
    speedups.check_backend(b, kinds=_KINDS, shapes=_SHAPES)
    got = speedups.shortcuts(b)
    for want in [("add", "float32", "tt"), ("multiply", "float32", "ts"),
                 ("subtract", "float32", "st"), ("exp", "float32", "u"),
                 ("exp", "float16", "u"), ("equal", "int32", "tt"),
                 ("matmul", "float32", "mm"), ("reshape", "float32", "rs")]:  # fmt: skip
        assert want in got, want
    assert not [s for s in got if s[2] == "sl"]  # a Python slice: the kernel path's
    # the shortcut is the jitted function, with no Python frame around it
    for op, form in [("add", "tt"), ("exp", "u"), ("dot", "mm"), ("reshape", "rs")]:
        f, t = b.fast_kernel(op, form, dtypes.float32)
        assert type(f) is _PJIT, (op, form, type(f))
        assert t is type(b.put(np.zeros(2, np.float32)))


def test_the_checker_sees_a_wrong_shortcut(bound, monkeypatch):
    bound(4096)
    real = xb._shortcut_body

    def swapped(kernel, op, form, dtype):  # subtract's operands the wrong way round
        body = real(kernel, op, form, dtype)
        if op == "subtract" and form == "tt":
            return lambda p, q: body(q, p)
        return body

    monkeypatch.setattr(xb, "_shortcut_body", swapped)
    with pytest.raises(AssertionError, match="subtract"):
        speedups.check_backend(_backend(), kinds=(dtypes.float32,), shapes=((3,),))


def test_a_shortcut_keeps_the_device_and_a_python_float_weak():
    x = nx.tensor(np.array([1.5, -2.0, 3.0], np.float16), backend="xla")
    r = x * 1.0001  # float16 stays float16
    check(r, np.array([1.5, -2.0, 3.0], np.float16) * np.float16(1.0001), nx.float16)
    assert r.backend is x.backend
    assert r.data.devices() == {x.backend.jax_device}
    assert ("multiply", "float16", "ts") in speedups.shortcuts(x.backend)


def test_the_shortcuts_executables_stay_within_the_bound(bound):
    # one jitted function serves every shape: it would keep an executable per shape
    bound(4)
    b = _backend()
    first = None
    for n in range(1, 11):
        host = np.linspace(0.0, 2.0, n, dtype=np.float32)
        check(nx.exp(nx.tensor(host, backend="xla")), np.exp(host), nx.float32)
        if first is None:
            first = b.fast_kernel("exp", "u", dtypes.float32)[0]
            assert first._cache_size() == 1
        assert sum(xb._TRACED.values()) <= 4
    nx.exp(nx.tensor(host, backend="xla"))  # a retirement drops the memo: asked again
    assert ("exp", "float32", "u") in speedups.shortcuts(b)  # still served by a shortcut
    now = b.fast_kernel("exp", "u", dtypes.float32)[0]
    assert now is not first and now._cache_size() <= 4
    assert first._cache_size() == 0  # retired, its executables released


_X64_OFF = textwrap.dedent(
    """
    import json
    import jax
    import numpy as np
    import numerix as nx
    from numerix.testing import speedups

    x = nx.tensor(np.array([1.5, 2.25], np.float64), backend="xla")
    r = {"on": str((x + x).dtype), "short": [list(s) for s in speedups.shortcuts(x.backend)]}
    jax.config.update("jax_enable_x64", False)  # turned off under a memoised shortcut
    fast, slow = speedups._outcome(nx.add, x, x), speedups._outcome(nx.add.__wrapped__, x, x)
    speedups.same_outcome("add after x64 off", fast, slow)
    r["off"] = [type(fast).__name__, str(fast)[:200]]
    print(json.dumps(r))
    """
)


def test_64_bit_mode_turned_off_under_a_memoised_shortcut_gives_the_python_paths_outcome():
    # same_outcome in the child: the same error, or the same tensor bit for bit
    env = {"NUMERIX_BACKENDS__XLA__X64": "1", "PATH": ""}
    out = subprocess.run([sys.executable, "-c", _X64_OFF], capture_output=True, text=True,
                         env=env, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["on"] == "float64"
    assert ["add", "float64", "tt"] in r["short"]
    assert r["off"][0] in ("Tensor", "UnsupportedDTypeError"), r["off"]


def test_slices_with_bounds_past_int64_clamp_as_numpy_does_on_xla() -> None:
    # the Python path gave the slice kernel a stride past int64: jaxlib's TypeError
    speedups.check_huge_slices(_backend(), (dtypes.float32, dtypes.int32, dtypes.bool_))
