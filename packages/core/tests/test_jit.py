"""The cached call of a jitted function (its fast path): what it serves, what it leaves
to the general path, and that a call it refuses raises what the general path raises."""

from __future__ import annotations

import numpy as np
import pytest

import numerix as nx


def test_a_cached_call_inside_a_trace_inlines() -> None:
    f = nx.jit(lambda v: nx.exp(v))
    w_np = np.linspace(-1, 1, 8, dtype=np.float32)
    w = nx.tensor(w_np)
    f(w)
    f(w)  # the cached call
    assert f.cache_info()[:2] == (1, 1)
    g = nx.jit(lambda v: f(w) + v)  # w is captured: f runs on it inside g's trace
    got = g(nx.tensor(1.0))
    np.testing.assert_allclose(got.to_numpy(), np.exp(w_np) + 1, rtol=1e-6)
    # inlined: f's Python ran on w (eagerly, w being concrete), its program did not
    assert f.cache_info()[:2] == (1, 1)
    assert "= exp [" in str(nx.trace(lambda v: f(v + w), nx.tensor(1.0)))  # traced: f's op


def test_the_cached_call_counts_hits_and_serves_one_and_several_arguments() -> None:
    one = nx.jit(lambda v: v * 2)
    two = nx.jit(lambda v, u: (v + u, v - u))
    x, y = nx.tensor([1, 2], dtype=nx.int32), nx.tensor([3, 4], dtype=nx.int32)
    for _ in range(3):
        r = one(x)
        s, d = two(x, y)
    assert r.tolist() == [2, 4] and r.dtype is nx.int32
    assert s.tolist() == [4, 6] and d.tolist() == [-2, -2]
    assert one.cache_info()[:2] == (2, 1) and two.cache_info()[:2] == (2, 1)
    # the same shapes with another dtype or tree are other programs
    assert one(x.astype(nx.int64)).dtype is nx.int64
    assert two(x, y.astype(nx.int64))[0].dtype is nx.int64
    assert one.trace_count == 2 and two.trace_count == 2


def test_the_cached_call_leaves_numbers_and_keywords_to_the_general_path() -> None:
    f = nx.jit(lambda v: v + 1)
    x = nx.tensor([1.0])
    f(x)
    assert f(2.0).tolist() == 3.0 and f(v=x).tolist() == [2.0]
    assert f(np.float32(2.0)).dtype is nx.float32  # not tensor-like: the general path


def test_a_deallocated_argument_of_a_cached_signature_is_refused_by_name() -> None:
    f = nx.jit(lambda v: v * 3)
    x, dead = nx.tensor([1.0, 2.0]), nx.tensor([1.0, 2.0])
    f(x)
    f(dead)  # cached for this signature
    nx.backend_deallocate(dead)
    with pytest.raises(nx.DeallocatedError, match="jit"):
        f(dead)
    assert f(x).tolist() == [3.0, 6.0]
