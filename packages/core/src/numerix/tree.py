"""Tree utilities (``jax.tree``): the nested tuples, lists, dicts and named tuples of
tensors that :func:`numerix.grad`, :func:`numerix.jit` and :func:`numerix.vmap` accept
as arguments and results, with the same reading of them: ``None`` is an empty subtree,
every other object that is not a container (a tensor, a number, an array) is a leaf,
and dict keys are visited in sorted order.

    >>> import numerix as nx
    >>> params = {"w": nx.ones((2, 2)), "b": nx.zeros(2)}
    >>> nx.tree.map(lambda t: t * 0.5, params)["w"].tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    >>> [t.shape for t in nx.tree.leaves(params)]
    [(2,), (2, 2)]
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import optree

__all__ = ["map", "leaves", "structure", "flatten", "unflatten", "reduce", "all", "Structure"]

#: A tree's structure (what :func:`structure` and :func:`flatten` return).
Structure = optree.PyTreeSpec

_builtin_all = all


def map(
    fn: Callable[..., Any], tree: Any, *rest: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """A tree of ``tree``'s structure holding ``fn(leaf, *same_leaf_of_each_rest)``
    (``jax.tree.map``); ``rest`` are trees with ``tree``'s structure (or with it as a
    prefix).

    >>> import numerix as nx
    >>> nx.tree.map(lambda a, b: a + b, (1, [2, 3]), (10, [20, 30]))
    (11, [22, 33])
    """
    return optree.tree_map(fn, tree, *rest, is_leaf=is_leaf)


def leaves(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree``, in order (``jax.tree.leaves``).

    >>> import numerix as nx
    >>> nx.tree.leaves({"b": 2, "a": (1, None)})
    [1, 2]
    """
    return optree.tree_leaves(tree, is_leaf=is_leaf)


def structure(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> Structure:
    """``tree``'s structure without its leaves (``jax.tree.structure``)."""
    return optree.tree_structure(tree, is_leaf=is_leaf)


def flatten(
    tree: Any, *, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], Structure]:
    """``(leaves, structure)`` (``jax.tree.flatten``); :func:`unflatten` rebuilds the tree.

    >>> import numerix as nx
    >>> leaves, s = nx.tree.flatten([1, (2, 3)])
    >>> nx.tree.unflatten(s, [x * 10 for x in leaves])
    [10, (20, 30)]
    """
    return optree.tree_flatten(tree, is_leaf=is_leaf)


def unflatten(structure: Structure, leaves: Sequence[Any]) -> Any:
    """The tree of ``structure`` holding ``leaves`` (``jax.tree.unflatten``); their
    number must be the structure's."""
    if not isinstance(structure, optree.PyTreeSpec):
        raise TypeError(
            f"tree.unflatten: structure must be what numerix.tree.structure or flatten "
            f"returns, got {type(structure).__name__}"
        )
    leaves = list(leaves)
    if len(leaves) != structure.num_leaves:
        raise ValueError(
            f"tree.unflatten: the structure has {structure.num_leaves} leaves, got {len(leaves)}"
        )
    return optree.tree_unflatten(structure, leaves)


def reduce(
    fn: Callable[[Any, Any], Any],
    tree: Any,
    *initial: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """``fn`` folded over the leaves (``jax.tree.reduce``), from ``initial`` if given.

    >>> import numerix as nx
    >>> nx.tree.reduce(lambda a, b: a + b, {"a": 1, "b": (2, 3)})
    6
    """
    return functools.reduce(fn, leaves(tree, is_leaf=is_leaf), *initial)


def all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every leaf is truthy (``jax.tree.all``); True for an empty tree."""
    return _builtin_all(leaves(tree, is_leaf=is_leaf))
