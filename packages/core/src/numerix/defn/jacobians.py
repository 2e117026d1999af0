"""Jacobians and Hessians (``jax.jacrev``, ``jax.jacfwd``, ``jax.hessian``), built on
:func:`~numerix.vmap` over the rows (``vjp``) or columns (``jvp``) of the identity:
one batched pass, never a Python loop over the output or input elements.

A Jacobian has, for each output leaf and each differentiated input leaf, the shape
``out.shape + in.shape``, arranged as JAX arranges it: the output's tree, each leaf
replaced by the differentiated arguments' tree (a tuple of them when ``argnums`` is a
tuple).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numerix.ops as ops
from numerix._tensor import Tensor
from numerix.defn.autodiff import _argnums, _diff_leaves, jvp, vjp
from numerix.defn.batching import vmap
from numerix.errors import ArgumentError

__all__ = ["jacrev", "jacfwd", "hessian"]


def _basis(shape: tuple[int, ...], dtype: Any, backend: Any) -> Tensor:
    """The identity's rows as ``(size, *shape)``: one unit tensor of ``shape`` per row."""
    n = 1
    for d in shape:
        n *= d
    return ops.reshape(ops.eye(n, dtype=dtype, backend=backend), (n, *shape))


def _split(args: tuple[Any, ...], argnums: Any, op: str) -> tuple[tuple[int, ...], bool]:
    nums = _argnums(argnums, op)
    for a in nums:
        if not -len(args) <= a < len(args):
            raise ArgumentError(
                f"{op}: argnums {argnums!r} names argument {a}, but the function was called "
                f"with {len(args)} positional argument(s)"
            )
    return tuple(a % len(args) for a in nums), type(argnums) is int


def _bound(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
           nums: tuple[int, ...]) -> Callable[..., Any]:  # fmt: skip
    """``fn`` of the differentiated arguments only, the others fixed."""

    def of_diff(*diff: Any) -> Any:
        rebuilt = list(args)
        for a, d in zip(nums, diff):
            rebuilt[a] = d
        return fn(*rebuilt, **kwargs)

    return of_diff


def _leaf_tensor(x: Any) -> Tensor:
    return x if type(x) is Tensor else ops.asarray(x)


def jacrev(
    fn: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """The Jacobian of ``fn`` by reverse mode (``jax.jacrev``): one ``vjp`` pullback,
    batched with :func:`~numerix.vmap` over the rows of the identity of the output's
    size. Cheaper than :func:`jacfwd` when the output is smaller than the input.

    >>> import numerix as nx
    >>> nx.jacrev(lambda x: x * x)(nx.tensor([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]

    With ``has_aux``, ``fn`` returns ``(output, aux)`` and the call ``(jacobian, aux)``.
    """
    return _jac(fn, argnums, has_aux, "jacrev", _rev)


def jacfwd(
    fn: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """The Jacobian of ``fn`` by forward mode (``jax.jacfwd``): one ``jvp`` batched with
    :func:`~numerix.vmap` over the columns of the identity of the input's size. Cheaper
    than :func:`jacrev` when the input is smaller than the output.

    >>> import numerix as nx
    >>> nx.jacfwd(lambda x: nx.sum(x * x))(nx.tensor([1.0, 2.0])).tolist()
    [2.0, 4.0]
    """
    return _jac(fn, argnums, has_aux, "jacfwd", _fwd)


def hessian(fn: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """The Hessian of a scalar function (``jax.hessian``): ``jacfwd(jacrev(fn))``, of
    shape ``in.shape + in.shape`` for one input.

    >>> import numerix as nx
    >>> nx.hessian(lambda x: nx.sum(x**3))(nx.tensor([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    return jacfwd(jacrev(fn, argnums), argnums)


def _jac(fn: Callable[..., Any], argnums: Any, has_aux: bool, op: str,
         how: Callable[..., Any]) -> Callable[..., Any]:  # fmt: skip
    if not callable(fn):
        raise TypeError(f"{op}: fn must be callable, got {type(fn).__name__}")
    _argnums(argnums, op)

    @functools.wraps(fn)
    def jacobian(*args: Any, **kwargs: Any) -> Any:
        nums, single = _split(args, argnums, op)
        for a in nums:
            _diff_leaves(args[a], op, f"argument {a}")
        diff = tuple(args[a] for a in nums)
        return how(_bound(fn, args, kwargs, nums), diff, single, has_aux, op)

    return jacobian


def _rev(f: Callable[..., Any], diff: tuple[Any, ...], single: bool, has_aux: bool,
         op: str) -> Any:  # fmt: skip
    import optree

    res = vjp(f, *diff, has_aux=has_aux)
    out, pullback = res[0], res[1]
    out_leaves, out_tree = optree.tree_flatten(out)
    blocks = []
    for i, o in enumerate(out_leaves):
        o = _leaf_tensor(o)

        def pull(c: Tensor, i: int = i) -> Any:
            cts = [c if j == i else ops.zeros_like(x) for j, x in enumerate(out_leaves)]
            return pullback(optree.tree_unflatten(out_tree, cts))

        rows = vmap(pull)(_basis(o.shape, o.dtype, o.backend))
        shaped = optree.tree_map(lambda r, o=o: ops.reshape(r, o.shape + r.shape[1:]), rows)
        blocks.append(shaped[0] if single else shaped)
    jac = optree.tree_unflatten(out_tree, blocks)
    return (jac, res[2]) if has_aux else jac


def _fwd(f: Callable[..., Any], diff: tuple[Any, ...], single: bool, has_aux: bool,
         op: str) -> Any:  # fmt: skip
    import optree

    leaves: list[Any]
    leaves, in_tree = optree.tree_flatten(diff)  # type: ignore[arg-type]
    leaves = [_leaf_tensor(x) for x in leaves]
    aux = None
    main = f
    if has_aux:
        aux = f(*diff)
        if not isinstance(aux, (tuple, list)) or len(aux) != 2:
            raise ArgumentError(
                f"{op}: with has_aux=True the function must return a pair (output, aux)"
            )
        aux = aux[1]

        def main(*xs: Any) -> Any:
            return f(*xs)[0]

    columns: list[Any] = []
    out_tree: Any = None
    for k, x in enumerate(leaves):

        def push(t: Tensor, k: int = k) -> Any:
            ts = [t if j == k else ops.zeros_like(y) for j, y in enumerate(leaves)]
            return jvp(main, diff, optree.tree_unflatten(in_tree, ts))[1]

        cols = vmap(push)(_basis(x.shape, x.dtype, x.backend))
        col_leaves, out_tree = optree.tree_flatten(cols)
        # each column is (in.size, *out.shape): out's axes first, then in's
        columns.append([
            ops.reshape(ops.moveaxis(c, 0, -1), c.shape[1:] + x.shape) for c in col_leaves
        ])  # fmt: skip
    blocks = []
    for i in range(len(columns[0]) if columns else 0):
        per_input = optree.tree_unflatten(in_tree, [columns[k][i] for k in range(len(leaves))])
        blocks.append(per_input[0] if single else per_input)
    jac = optree.tree_unflatten(out_tree, blocks)
    return (jac, aux) if has_aux else jac
