"""jit's argument and result structures: those of Python's own containers (tuples,
lists, dicts with str keys, None) around tensors and numbers are read without optree,
any other tree through optree, with the same leaves, results and cache keys either
way."""

from __future__ import annotations

import subprocess
import sys
from collections import namedtuple

import numpy as np
import pytest

import numerix as nx
from numerix.defn.expr import PlainTree, unflatten
from numerix.defn.trace import flatten_args

Pair = namedtuple("Pair", "a b")


def _x() -> nx.Tensor:
    return nx.tensor(np.array([1.0, -2.0, 3.0], np.float32))


def _check(got: nx.Tensor, want: np.ndarray) -> None:
    assert type(got) is nx.Tensor and got.dtype is nx.float32 and got.shape == want.shape
    np.testing.assert_array_equal(got.to_numpy(), want)


def test_flat_arguments_are_a_plain_tree_others_an_optree_one() -> None:
    x = _x()
    leaves, tree = flatten_args((x, 2.0, True), {}, "jit")
    assert leaves[0] is x and leaves[1:] == [2.0, True] and tree == PlainTree("args", 3)
    assert unflatten(tree, leaves) == ((x, 2.0, True), {})
    for args, kwargs in (((x, Pair(x, x)), {}), ((x,), {"y": {1: np.ones(2), "a": x}})):
        leaves, tree = flatten_args(args, kwargs, "jit")
        assert type(tree) is not PlainTree and all(type(v) is nx.Tensor for v in leaves)
    assert PlainTree("tuple", 2) == PlainTree("tuple", 2) != PlainTree("args", 2)
    assert hash(PlainTree("leaf", 1)) == hash(PlainTree("leaf", 1))


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((1.0, [2.0, (3.0, None)]), {}),
        (({"b": 1.0, "a": [2.0, 3.0], "c": {"z": 4.0, "y": None}},), {}),
        ((1.0,), {"s": 2.0, "p": {"q": [3.0]}}),
        (([], (), {}), {}),
        ((np.ones(2, np.float32), [np.float32(3.0)]), {}),
    ],
    ids=["lists-tuples-none", "dicts", "keywords", "empty", "numpy"],
)
def test_built_in_containers_are_a_plain_tree_with_optree_s_leaf_order(
    args: tuple, kwargs: dict
) -> None:
    import optree

    leaves, tree = flatten_args(args, kwargs, "jit")
    assert type(tree) is PlainTree and tree.kind == "nested" and tree.n == len(leaves)
    want, _ = optree.tree_flatten((args, kwargs))
    assert len(leaves) == len(want)
    for got, w in zip(leaves, want):  # numpy values become tensors, in the same order
        assert (got.tolist() if type(got) is nx.Tensor else got) == (
            w.tolist() if isinstance(w, (np.ndarray, np.generic)) else w
        )
    back = unflatten(tree, leaves)
    assert optree.tree_structure(back) == optree.tree_structure((args, kwargs))
    if "b" in repr(args):  # a dict comes back in its own key order, not sorted
        assert list(back[0][0]) == ["b", "a", "c"]
    tree2 = flatten_args(args, kwargs, "jit")[1]
    assert tree2 == tree and hash(tree2) == hash(tree)  # a cache key
    other = flatten_args(({"b": 1.0, "a": [2.0]},), {}, "jit")[1]
    assert other != tree


@pytest.mark.parametrize("compiler", ["evaluator", None])
def test_results_come_back_in_the_structure_returned(compiler: str | None) -> None:
    x, want = _x(), np.float32([2.0, -4.0, 6.0])
    one = nx.jit(lambda v: v * 2.0, compiler=compiler)
    pair = nx.jit(lambda v, s: (v * 2.0, v + s), compiler=compiler)
    nested = nx.jit(lambda v: {"a": [v * 2.0], "b": Pair(v, 3)}, compiler=compiler)
    for _ in range(2):  # the first call compiles, the second runs the cached program
        _check(one(x), want)
        r = pair(x, 1.0)
        assert type(r) is tuple and len(r) == 2
        _check(r[0], want)
        _check(r[1], np.float32([2.0, -1.0, 4.0]))
        n = nested(x)
        assert set(n) == {"a", "b"} and type(n["a"]) is list and type(n["b"]) is Pair
        _check(n["a"][0], want)
        assert n["b"].b.dtype is nx.int64 and n["b"].b.item() == 3
    assert (one.trace_count, pair.trace_count, nested.trace_count) == (1, 1, 1)
    assert pair.cache_info().hits == 1 and pair.is_cached(x, 5.0)
    # keyword arguments go through optree and still find the program of their structure
    kw = nx.jit(lambda v, s=1.0: v * s, compiler=compiler)
    _check(kw(x, s=2.0), want)
    _check(kw(x, s=2.0), want)
    assert kw.trace_count == 1 and kw.cache_info().hits == 1


_NO_OPTREE = """
import sys
import numerix as nx
f = nx.jit(lambda x, s: (nx.abs(x) * s, x + 1.0))
a, b = f(nx.tensor([0.0, -1.5]), 2.0)
print(a.tolist(), b.tolist(), "optree" in sys.modules)
g = nx.jit(lambda d: {"y": [d["x"] * 2]})
print(g({"x": nx.tensor([1, 2])})["y"][0].tolist(), "optree" in sys.modules)
from collections import namedtuple
P = namedtuple("P", "a b")
h = nx.jit(lambda p: p.a + p.b)
print(h(P(nx.tensor([1, 2]), 1)).tolist(), "optree" in sys.modules)
"""


def test_a_jit_of_built_in_containers_loads_no_optree_a_namedtuple_does() -> None:
    r = subprocess.run([sys.executable, "-W", "ignore", "-c", _NO_OPTREE],
                       capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "[0.0, 3.0] [1.0, -0.5] False",
        "[2, 4] False",
        "[2, 3] True",
    ]


@pytest.mark.parametrize("compiler", [None, "evaluator"])
def test_containers_of_tensors_replay_the_program_the_full_key_found(compiler: str | None) -> None:
    # a list, tuple or dict of tensors as an argument is keyed without flattening once
    # the full key has found its program; the results are those of the general path
    rng = np.random.default_rng(0)
    w, b, v, u = (rng.standard_normal(3).astype(np.float32) for _ in range(4))
    f = nx.jit(lambda p, x, d: ({"z": p[0] * x, "a": d["w"] + p[1]}, [x]), compiler=compiler)
    p, x = [nx.tensor(w), nx.tensor(b)], nx.tensor(v)
    d = {"w": nx.tensor(u), "b": nx.tensor(b)}
    for _ in range(3):
        out, rest = f(p, x, d)
        assert list(out) == ["z", "a"] and type(rest) is list and len(rest) == 1
        _check(out["z"], w * v)
        _check(out["a"], u + b)
        _check(rest[0], v)
    assert f.trace_count == 1 and f.cache_info().hits == 2
    # the argument dict in another key order: the same program, and its leaves by key
    out, _ = f(p, x, {"b": nx.tensor(v), "w": nx.tensor(w)})
    _check(out["a"], w + b)
    assert f.trace_count == 1
    # a tuple where a list was, a new shape, a number among the tensors: other programs
    _check(f(tuple(p), x, d)[0]["z"], w * v)
    assert f.trace_count == 2
    long = [nx.tensor(np.ones(4, np.float32))] * 2
    _check(f(long, long[0], {"w": long[0], "b": long[0]})[0]["a"], np.full(4, 2, np.float32))
    assert f.trace_count == 3
    _check(f([nx.tensor(w), 2.0], x, d)[0]["a"], u + 2)
    assert f.trace_count == 4
    # a program the bound dropped is compiled again, not replayed from the plain key
    with nx.config(defn={"cache_size": 1}):
        g = nx.jit(lambda p: p[0] + p[1], compiler=compiler)
        small = [nx.tensor(w[:2]), nx.tensor(b[:2])]
        for args in (p, small, p):
            g(args)
            g(args)
        assert g.trace_count == 3 and g.cache_info().evictions == 2
        _check(g(p), w + b)


def test_rebuilding_a_nested_structure_keeps_each_dicts_own_key_order() -> None:
    tree = {"b": [1, (2, None, {3: 4, 1: 5})], "a": {"y": 6, "x": ()}}
    leaves, plain = flatten_args((tree,), {}, "jit")
    assert type(plain) is PlainTree and plain.kind == "nested"
    got = unflatten(plain, leaves)[0][0]
    assert got == tree and list(got) == ["b", "a"] and list(got["a"]) == ["y", "x"]
    assert list(got["b"][1][2]) == [3, 1]
    many = {"k": list(range(300)), "j": [None, (1.5,)]}  # past the written expression's limit
    leaves, plain = flatten_args((many,), {}, "jit")
    got = unflatten(plain, leaves)[0][0]
    assert got == many and list(got) == ["k", "j"]
