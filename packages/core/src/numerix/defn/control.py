"""Control flow and runtime hooks that work eagerly and inside a trace.

Eagerly they are plain Python; inside ``numerix.jit``/``defn`` they record ``cond``,
``while`` and ``hook`` nodes whose subgraphs every compiler runs at execution time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from numerix import dtypes
from numerix._tensor import Tensor
from numerix.defn.expr import COND, HOOK, WHILE, ExprBackend, Graph, format_type
from numerix.defn.trace import active_trace, flatten, leaf_spec, trace_flat
from numerix.errors import ShapeError, TracingError
from numerix.ops._core import cast
from numerix.ops.creation import tensor, zeros
from numerix.ops.elementwise import not_equal
from numerix.ops.indexing import dynamic_slice, put_slice
from numerix.ops.shape import concatenate, reshape, stack

__all__ = ["cond", "while_loop", "fori_loop", "scan", "print_value", "hook"]


def _check_pred(op: str, pred: Any) -> None:
    if type(pred) is Tensor and pred.shape != ():
        raise ShapeError(
            f"{op}: the predicate must be a 0-d tensor or a Python bool, got {pred.describe()}; "
            f"reduce it first, e.g. numerix.all(p) or numerix.any(p)"
        )


def _as_pred(op: str, p: Any) -> Any:
    """A predicate as a 0-d bool tensor (non-bool tensors compare with 0)."""
    _check_pred(op, p)
    if type(p) is Tensor and p.dtype is not dtypes.bool_:
        return not_equal(p, 0)
    return p


def _operands(be: ExprBackend, leaves: list[Any], op: str) -> tuple[list[Any], list[Tensor]]:
    """The specs of the leaves and the leaves as tensors of ``be`` (numbers become
    constants of their default dtype)."""
    specs = [leaf_spec(x, op) for x in leaves]
    ts = []
    for x, (_, d) in zip(leaves, specs):
        if type(x) is not Tensor:
            x = tensor(x, dtype=d, backend="binary")
        ts.append(be.capture(x))
    return specs, ts


def _types(g: Graph) -> str:
    import optree

    shown = optree.tree_unflatten(g.out_tree, [format_type(o.shape, o.dtype) for o in g.outputs])
    return repr(shown).replace("'", "")


def _out_types(g: Graph) -> tuple[tuple[tuple[int, ...], dtypes.DType], ...]:
    return tuple((o.shape, o.dtype) for o in g.outputs)  # type: ignore[misc]


def _same(a: Graph, b: Graph) -> bool:
    return a.out_tree == b.out_tree and [(o.shape, o.dtype) for o in a.outputs] == [
        (o.shape, o.dtype) for o in b.outputs
    ]


def cond(
    pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any], *operands: Any
) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``, also on traced values
    (``jax.lax.cond``; Nx's ``if`` in defn).

    Eagerly, or when ``pred`` is known while tracing, this is a Python ``if``. With a
    traced ``pred`` both branches are traced and recorded in a ``cond`` node; they must
    return the same tree of tensors with the same shapes and dtypes.

    :param pred: a Python bool or a 0-d tensor (non-zero is true).
    :param operands: tensors, numbers, or tuples/lists/dicts of them, passed to the branch.

    >>> import numerix as nx
    >>> nx.cond(nx.tensor(True), lambda x: x + 1, lambda x: x - 1, nx.tensor(1)).item()
    2

    The predicate must be 0-d:

    >>> nx.cond(nx.tensor([True, False]), abs, abs, 1)
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: cond: the predicate must be a 0-d tensor or a Python bool, ...
    """
    _check_pred("cond", pred)
    if not (type(pred) is Tensor and pred.backend.is_tracing):
        return true_fn(*operands) if pred else false_fn(*operands)
    be = active_trace() or pred.backend
    assert isinstance(be, ExprBackend)
    pred = _as_pred("cond", pred)
    leaves, tree = flatten((operands, {}), "cond")
    specs, ts = _operands(be, leaves, "cond")
    tg = trace_flat(true_fn, specs, tree, parent=be, op="cond")
    fg = trace_flat(false_fn, specs, tree, parent=be, op="cond")
    if not _same(tg, fg):
        raise TracingError(
            f"cond: the branches return different types: true_fn returns {_types(tg)} and "
            f"false_fn returns {_types(fg)}; both must return the same tree of tensors with "
            f"the same shapes and dtypes (cast with astype, broadcast with broadcast_to)"
        )
    types = _out_types(tg)
    node = be.node(
        COND, [pred, *ts], {}, types=types, subgraphs=(tg, fg), extra_inputs=tg.free + fg.free
    )
    import optree

    return optree.tree_unflatten(tg.out_tree, be.elems(node))


def while_loop(cond_fn: Callable[[Any], Any], body_fn: Callable[[Any], Any], init: Any) -> Any:
    """Repeat ``state = body_fn(state)`` while ``cond_fn(state)``, from ``init``
    (``jax.lax.while_loop``; Nx's ``while``).

    Eagerly a Python loop; inside a trace one ``while`` node whose condition and body
    are traced once. ``body_fn`` must return the same tree of tensors, shapes and dtypes
    as ``init`` (Python numbers in ``init`` are 0-d tensors of the default dtype).

    >>> import numerix as nx
    >>> nx.while_loop(lambda s: s[0] < 5, lambda s: (s[0] + 1, s[1] * 2), (0, 1))
    (5, 32)

    The condition must be 0-d:

    >>> nx.while_loop(lambda s: s > 0, lambda s: s - 1, nx.tensor([1, 2]))
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: while_loop: the predicate must be a 0-d tensor or a Python bool, ...
    """
    return _while_loop(cond_fn, body_fn, init, {})


def _while_loop(
    cond_fn: Callable[[Any], Any], body_fn: Callable[[Any], Any], init: Any, params: dict[str, Any]
) -> Any:
    """:func:`while_loop`, recording ``params`` on the ``while`` node (fori_loop's static
    ``trip_count``, which grad reads)."""
    be = active_trace()
    if be is None:
        state = init
        while True:
            p = cond_fn(state)
            _check_pred("while_loop", p)
            if not p:
                return state
            state = body_fn(state)
    import optree

    leaves, tree = flatten(init, "while_loop")
    specs, ts = _operands(be, leaves, "while_loop")

    def c(*xs: Any) -> Any:
        return _as_pred("while_loop", cond_fn(optree.tree_unflatten(tree, list(xs))))

    def b(*xs: Any) -> Any:
        return body_fn(optree.tree_unflatten(tree, list(xs)))

    cg = trace_flat(c, specs, None, parent=be, op="while_loop")
    if len(cg.outputs) != 1 or cg.outputs[0].dtype is not dtypes.bool_:
        raise TracingError(
            f"while_loop: cond_fn must return one 0-d bool tensor, it returns {_types(cg)}"
        )
    bg = trace_flat(b, specs, None, parent=be, op="while_loop")
    types = _out_types(bg)
    if bg.out_tree != tree or list(types) != specs:
        shown = optree.tree_unflatten(tree, [format_type(s, d) for s, d in specs])
        raise TracingError(
            f"while_loop: body_fn returns {_types(bg)} but the loop state (init) is "
            f"{repr(shown).replace(chr(39), '')}; the body must return the same tree of "
            f"tensors with the same shapes and dtypes (cast with astype)"
        )
    node = be.node(
        WHILE, ts, params, types=types, subgraphs=(cg, bg), extra_inputs=cg.free + bg.free
    )
    return optree.tree_unflatten(tree, be.elems(node))


def fori_loop(lower: Any, upper: Any, body_fn: Callable[[Any, Any], Any], init: Any) -> Any:
    """``state = body_fn(i, state)`` for ``i`` from ``lower`` to ``upper - 1``
    (``jax.lax.fori_loop``); ``i`` is an int64 0-d tensor, eagerly and traced.

    Inside a trace this is a :func:`while_loop` over ``(i, state)``; ``lower`` and
    ``upper`` may be traced. With Python int bounds the loop's trip count is known when
    tracing, and :func:`numerix.grad` differentiates through it.

    >>> import numerix as nx
    >>> nx.fori_loop(0, 4, lambda i, acc: acc + i, nx.tensor(0)).item()
    6

    Bounds must be integers:

    >>> nx.fori_loop(0.5, 2, lambda i, s: s, 0)
    Traceback (most recent call last):
    ...
    TypeError: fori_loop: lower and upper must be ints or integer 0-d tensors, got float 0.5
    """
    for v in (lower, upper):
        ok = type(v) is int or (type(v) is Tensor and v.shape == () and v.dtype.kind in "iu")
        if not ok:
            shown = v.describe() if type(v) is Tensor else f"{type(v).__name__} {v!r}"
            raise TypeError(
                f"fori_loop: lower and upper must be ints or integer 0-d tensors, got {shown}"
            )
    if active_trace() is None:
        state = init
        for k in range(int(lower), int(upper)):
            state = body_fn(tensor(k), state)
        return state
    lo = cast(lower, dtypes.int64) if type(lower) is Tensor else tensor(lower)
    hi = cast(upper, dtypes.int64) if type(upper) is Tensor else tensor(upper)
    # Python int bounds: the trip count is known, and grad can differentiate the loop
    static = type(lower) is int and type(upper) is int
    params = {"trip_count": max(0, upper - lower)} if static else {}
    _, out = _while_loop(
        lambda s: s[0] < hi, lambda s: (s[0] + 1, body_fn(s[0], s[1])), (lo, init), params
    )
    return out


def scan(
    f: Callable[[Any, Any], tuple[Any, Any]],
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int = 1,
) -> tuple[Any, Any]:
    """Run ``carry, y = f(carry, x)`` over the leading axis of ``xs`` and stack the ``y``s
    (``jax.lax.scan``): returns ``(final carry, ys)``.

    Inside a trace this is one loop (a ``fori_loop`` of ``length`` steps reading ``x``
    with ``dynamic_slice`` and writing ``y`` with ``put_slice``), whatever the length:
    ``f`` is traced once. Its trip count is static, so :func:`numerix.grad`
    differentiates it without unrolling it (a reverse loop over a tape of the carries).
    Eagerly it is a Python loop.

    :param init: the initial carry: a tree of tensors and numbers; ``f`` must return a
        carry of the same tree, shapes and dtypes.
    :param xs: a tree of tensors sharing their leading dimension, or None (``f`` then
        receives ``None``, and ``length`` is required).
    :param length: the number of steps (checked against ``xs``).
    :param reverse: scan from the last element to the first (``ys`` stays in ``xs``'s
        order).
    :param unroll: how many steps one iteration of the loop runs (a positive int, or
        True for all of them): fewer, longer iterations for the compiler to fuse.

    >>> import numerix as nx
    >>> total, running = nx.scan(lambda c, x: (c + x, c + x), 0.0, nx.tensor([1.0, 2.0, 3.0]))
    >>> total.item(), running.tolist()
    (6.0, [1.0, 3.0, 6.0])
    """
    import optree

    x_leaves, x_tree = optree.tree_flatten(xs)
    for x in x_leaves:
        if type(x) is not Tensor or x.ndim == 0:
            shown = x.describe() if type(x) is Tensor else f"a {type(x).__name__} ({x!r:.40})"
            raise ShapeError(
                f"scan: every leaf of xs must be a tensor with a leading axis to scan over, "
                f"got {shown}"
            )
    sizes = sorted({x.shape[0] for x in x_leaves})
    if len(sizes) > 1:
        shown = ", ".join(x.describe() for x in x_leaves)
        raise ShapeError(
            f"scan: the leaves of xs differ in leading dimension ({shown}); they must share it"
        )
    if length is not None and (type(length) is not int or length < 0):
        raise ShapeError(f"scan: length must be a non-negative int, got {length!r}")
    if sizes and length is not None and length != sizes[0]:
        raise ShapeError(f"scan: length={length} but xs has a leading dimension of {sizes[0]}")
    if not sizes and length is None:
        raise ShapeError("scan: xs has no leaves, so the number of steps is unknown; pass length=N")
    n = sizes[0] if sizes else length
    assert n is not None
    if unroll is True:
        unroll = max(n, 1)
    if type(unroll) is not int or unroll < 1:
        raise ShapeError(f"scan: unroll must be a positive int (or True), got {unroll!r}")

    if active_trace() is None:  # eagerly: a Python loop
        carry, ys = init, []
        for k in range(n):
            i = n - 1 - k if reverse else k
            x = optree.tree_unflatten(x_tree, [x[i] for x in x_leaves]) if x_leaves else None
            carry, y = f(carry, x)
            ys.append(y)
        if reverse:
            ys.reverse()
        if n:
            leaves = [optree.tree_leaves(y) for y in ys]
            y_tree = optree.tree_structure(ys[0])
            stacked = [stack([ls[j] for ls in leaves]) for j in range(len(leaves[0]))]
            return carry, optree.tree_unflatten(y_tree, stacked)
        _, _, y_specs, y_tree = _step_types(f, init, x_leaves, x_tree)
        return carry, optree.tree_unflatten(y_tree, [zeros((0, *s), dtype=d) for s, d in y_specs])
    return _scan_traced(f, init, x_leaves, x_tree, n, reverse, unroll)


def _step_types(
    f: Callable[..., Any], init: Any, x_leaves: list[Any], x_tree: Any
) -> tuple[Any, list[Any], list[Any], Any]:
    """``f`` traced on one step, a carry of ``init``'s types and one ``x``, checked to
    return ``(carry, y)`` with the carry's types: the carry's tree and specs, the ``y``
    leaves' specs and tree."""
    import optree

    c_leaves, c_tree = flatten(init, "scan")
    c_specs = [leaf_spec(c, "scan") for c in c_leaves]
    nc = len(c_leaves)

    def one(*vals: Any) -> Any:
        carry = optree.tree_unflatten(c_tree, list(vals[:nc]))
        x = optree.tree_unflatten(x_tree, list(vals[nc:])) if x_leaves else None
        return f(carry, x)

    specs = c_specs + [(x.shape[1:], x.dtype) for x in x_leaves]
    g = trace_flat(one, specs, None, parent=active_trace(), op="scan")
    out = optree.tree_unflatten(g.out_tree, list(range(len(g.outputs))))
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TracingError(f"scan: f must return a pair (carry, y), it returns {_types(g)}")
    got_idx, got_tree = optree.tree_flatten(out[0])
    got = [(g.outputs[i].shape, g.outputs[i].dtype) for i in got_idx]
    if got_tree != c_tree or got != c_specs:
        want_s = optree.tree_unflatten(c_tree, [format_type(s, d) for s, d in c_specs])
        got_s = optree.tree_unflatten(got_tree, [format_type(s, d) for s, d in got])
        raise TracingError(
            f"scan: f returns a carry of {repr(got_s).replace(chr(39), '')} but init is "
            f"{repr(want_s).replace(chr(39), '')}; f must return the carry's tree, shapes and "
            f"dtypes (cast with astype)"
        )
    y_idx, y_tree = optree.tree_flatten(out[1])
    y_specs = [(g.outputs[i].shape, g.outputs[i].dtype) for i in y_idx]
    return c_tree, c_specs, y_specs, y_tree


def _scan_traced(
    f: Callable[..., Any], init: Any, x_leaves: list[Any], x_tree: Any, n: int,
    reverse: bool, unroll: int,
) -> tuple[Any, Any]:  # fmt: skip
    """One loop over blocks of ``unroll`` steps: each iteration reads one block of each
    ``xs`` leaf (a ``dynamic_slice``), runs ``f`` on its rows in order (unrolled) and
    writes one block of each ``ys`` leaf (a ``put_slice``); the steps left over (``n %
    unroll``) run unrolled after the loop. In reverse the blocks cover the last rows,
    from the last block down, and the rows left over are the first ones."""
    import optree

    _, _, y_specs, y_tree = _step_types(f, init, x_leaves, x_tree)
    loops, rest = divmod(n, unroll)
    main = loops * unroll
    lo = rest if reverse else 0  # the first row the blocks cover

    def call(carry: Any, xs: list[Any]) -> tuple[Any, list[Any]]:
        x = optree.tree_unflatten(x_tree, xs) if x_leaves else None
        carry, y = f(carry, x)
        return carry, optree.tree_leaves(y)

    carry: Any = init
    main_ys: list[Any] = []
    if loops:
        blocks = [reshape(t[lo : lo + main], (loops, unroll, *t.shape[1:])) for t in x_leaves]
        ys0 = [zeros((loops, unroll, *s), dtype=d) for s, d in y_specs]

        def body(k: Any, state: tuple[Any, list[Any]]) -> tuple[Any, list[Any]]:
            carry, ys = state
            be = active_trace()  # the loop body's: xs are values of the enclosing trace
            assert be is not None
            at = (loops - 1 - k) if reverse else k
            here = [
                reshape(dynamic_slice(be.capture(b), [at] + [0] * (b.ndim - 1), (1, *b.shape[1:])),
                        b.shape[1:])
                for b in blocks
            ]  # fmt: skip
            rows: list[Any] = [None] * unroll
            for u in range(unroll - 1, -1, -1) if reverse else range(unroll):
                carry, rows[u] = call(carry, [h[u] for h in here])
            new = [
                put_slice(buf, [at] + [0] * (buf.ndim - 1), reshape(stack([r[j] for r in rows]),
                                                                    (1, *buf.shape[1:])))
                for j, buf in enumerate(ys)
            ]  # fmt: skip
            return carry, new

        carry, blocked = fori_loop(0, loops, body, (init, ys0))
        main_ys = [reshape(b, (main, *b.shape[2:])) for b in blocked]
    left = range(rest - 1, -1, -1) if reverse else range(main, n)
    rest_rows: dict[int, list[Any]] = {}
    for i in left:  # the steps left over, unrolled
        carry, rest_rows[i] = call(carry, [t[i] for t in x_leaves])
    ys = []
    for j, (s, d) in enumerate(y_specs):
        parts = [stack([rest_rows[i][j] for i in sorted(rest_rows)])] if rest_rows else []
        if loops:
            parts.insert(len(parts) if reverse else 0, main_ys[j])
        ys.append(parts[0] if len(parts) == 1 else concatenate(parts) if parts else
                  zeros((0, *s), dtype=d))  # fmt: skip
    return carry, optree.tree_unflatten(y_tree, ys)


def hook(t: Tensor, fn: Callable[[Tensor], Any]) -> Tensor:
    """Call ``fn(t)`` when ``t`` is computed and return ``t`` (``Nx.Defn.Kernel.hook``).

    Eagerly ``fn`` runs at once; inside a trace a ``hook`` node calls it with the
    concrete value each time the compiled program runs, on every compiler.

    >>> import numerix as nx
    >>> seen = []
    >>> f = nx.jit(lambda x: nx.hook(x * 2, lambda v: seen.append(v.tolist())) + 1)
    >>> f(nx.tensor([1, 2])).tolist(), seen
    ([3, 5], [[2, 4]])

    ``t`` must be a tensor:

    >>> nx.hook([1], print)
    Traceback (most recent call last):
    ...
    TypeError: hook: expected a Tensor, got list
    """
    if type(t) is not Tensor:
        raise TypeError(f"hook: expected a Tensor, got {type(t).__name__}")
    be = active_trace()
    if be is None:
        fn(t)
        return t
    return _hook(be, t, fn, {})


def _hook(
    be: ExprBackend, t: Tensor, fn: Callable[[Tensor], Any], params: dict[str, Any]
) -> Tensor:
    node = be.node(HOOK, [t], params, shape=t.shape, dtype=t.dtype, value=fn)
    return be.wrap(node)


def print_value(t: Tensor, label: str | None = None) -> Tensor:
    """Print ``t`` when it is computed and return it (``Nx.Defn.Kernel.print_value``).

    Eagerly it prints at once; inside a trace it prints each time the compiled program
    runs (a :func:`hook`).

    >>> import numerix as nx
    >>> _ = nx.print_value(nx.tensor([1, 2]), label="x")
    x: Tensor<s64[2] binary(cpu)>
      [1, 2]

    ``t`` must be a tensor:

    >>> nx.print_value(3)
    Traceback (most recent call last):
    ...
    TypeError: print_value: expected a Tensor, got int
    """
    if type(t) is not Tensor:
        raise TypeError(f"print_value: expected a Tensor, got {type(t).__name__}")

    def print_value(v: Tensor) -> None:
        print(f"{label}: {v!r}" if label is not None else repr(v))

    be = active_trace()
    if be is None:
        print_value(t)
        return t
    return _hook(be, t, print_value, {} if label is None else {"label": label})
