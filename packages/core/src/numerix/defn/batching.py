"""Vectorising a function over a batch axis (``jax.vmap``, ``Nx.vectorize``), as a
transform of the traced graph.

:func:`vmap` traces the function on one example (the mapped axes removed), then walks
the graph's nodes in order with the values of the whole batch: a node none of whose
inputs carries the batch runs as it was traced; any other node runs its primitive's
batching rule (``Primitive.batch``, declared beside the primitive in
``numerix/primitives/``), which calls ordinary primitives on the batch (the batch as
axis 0) once. Eagerly each node is one call on the whole batch; inside ``jit`` (or
``grad``, or another ``vmap``) the nodes are recorded into the enclosing trace, so the
compiler sees one graph. No backend or compiler implements anything for it.

Special nodes: a ``cond`` whose predicate carries the batch runs both branches and
selects per example (as JAX); otherwise it stays a ``cond`` of batched branches. A
``while`` finds which parts of its state carry the batch (a fixed point over its body);
a batched predicate loops while any example's holds, each example keeping its state
once its own predicate is false. A ``block`` runs its batching rule, else its core
version, batched primitive by primitive. A ``hook`` sees the batched value.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numerix.ops as ops
from numerix._dispatch import block_out
from numerix._meeting import meeting_backend
from numerix._tensor import Tensor
from numerix.configuration import get_default_backend
from numerix.defn import autodiff
from numerix.defn.control import _while_loop, cond, hook
from numerix.defn.expr import (
    BLOCK,
    COND,
    CONSTANT,
    ELEM,
    HOOK,
    PARAMETER,
    TENSOR,
    WHILE,
    ExprBackend,
    Graph,
    Node,
    _host,
    unflatten,
)
from numerix.defn.graph import last_reads
from numerix.defn.trace import NUMBER_DTYPES, active_trace, flatten, leaf_spec, trace_flat
from numerix.errors import ArgumentError, AxisError, NumerixError, ShapeError
from numerix.ops._core import new_out, run_block, scalar, unify
from numerix.primitives import _batch
from numerix.primitives._registry import BLOCKS, REGISTRY, Block, Loops

__all__ = ["vmap", "BatchingError"]

#: A value of the walk: ``(tensor, batched)``, or for a node with several values
#: ``(list of tensors, list of batched)``.
BVal = tuple[Any, Any]


class BatchingError(NumerixError, NotImplementedError):
    """A primitive without a batching rule, or a construct :func:`vmap` cannot batch."""


# ---------------------------------------------------------------- which values carry the batch


def _flags(g: Graph, args: Sequence[bool], outer: dict[int, bool]) -> dict[int, Any]:
    """Which nodes of ``g`` carry the batch, given its arguments' and its free values'
    (``outer``, by node id): what :func:`_walk` will find, without computing."""
    fl: dict[int, Any] = {}
    for p, b in zip(g.parameters[: g.n_args], args):
        fl[p.id] = b
    for p, f in zip(g.parameters[g.n_args :], g.free):
        fl[p.id] = outer[f.id]
    for n in g.nodes:
        if n.id in fl:
            continue
        if n.op in (CONSTANT, TENSOR):
            fl[n.id] = False
        elif n.op == ELEM:
            src = fl[n.inputs[0].id]
            fl[n.id] = src[n.params["index"]]
        elif n.op == WHILE:
            carries, _ = _while_flags(n, [fl[i.id] for i in n.inputs], fl)
            fl[n.id] = carries
        else:
            any_b = any(fl[i.id] for i in n.inputs if isinstance(i, Node))
            fl[n.id] = [any_b] * len(n.types) if n.types is not None else any_b
    return fl


def _while_flags(n: Node, ins: Sequence[bool], env: dict[int, bool]) -> tuple[list[bool], bool]:
    """The carries of ``while`` node ``n`` that carry the batch (a fixed point: a carry
    the body makes batched is batched from the start) and whether its predicate does
    (then every carry does: each example stops on its own)."""
    cg, bg = n.subgraphs
    carries = list(ins[: cg.n_args])
    while True:
        fl = _flags(bg, carries, env)
        new = [c or fl[o.id] for c, o in zip(carries, bg.outputs)]
        if new == carries:
            break
        carries = new
    pred = bool(_flags(cg, carries, env)[cg.outputs[0].id])
    if pred:
        carries = [True] * len(carries)
    return carries, pred


# ---------------------------------------------------------------- the walk


def _host_value(t: Tensor) -> Tensor:
    """A constant's value as a host tensor the ops take (constants live on the
    tracer's literal backend, which computes nothing)."""
    if t.backend.name == "literal":
        return new_out(t.shape, t.dtype, _host(), t.data)
    return t


def _env_flags(env: dict[int, BVal]) -> dict[int, Any]:
    return {k: v[1] for k, v in env.items()}


class _Walk:
    """One walk of a graph with batched values (see the module)."""

    def __init__(self, target: Any, n: int) -> None:
        self.target = target  # where primitives without tensor inputs create their output
        self.n = n  # the batch size

    def run(self, g: Graph, args: Sequence[BVal], outer: dict[int, BVal]) -> list[BVal]:
        env: dict[int, BVal] = {}
        for p, v in zip(g.parameters[: g.n_args], args):
            env[p.id] = v
        for p, f in zip(g.parameters[g.n_args :], g.free):
            env[p.id] = outer[f.id]
        # each value is dropped after its last use (a subgraph's free values are inputs
        # of its cond or while node): eagerly, a batch's intermediates do not pile up
        last = last_reads(g)
        for o in g.outputs:
            last[o.id] = len(g.nodes)
        for k, node in enumerate(g.nodes):
            if node.id not in env:
                env[node.id] = self.node(node, env)
            for i in node.inputs:
                if isinstance(i, Node) and last.get(i.id) == k:
                    env.pop(i.id, None)
        return [env[o.id] for o in g.outputs]

    def node(self, n: Node, env: dict[int, BVal]) -> BVal:
        op = n.op
        if op == CONSTANT:
            return _host_value(n.value), False
        if op == TENSOR:
            return n.value, False
        if op == PARAMETER:  # pragma: no cover - every parameter has its value on entry
            raise AssertionError("a parameter without a value")
        ins: list[Any] = [env[i.id] if isinstance(i, Node) else (i, False) for i in n.inputs]
        if op == ELEM:
            vals, flags = ins[0]
            i = n.params["index"]
            return vals[i], flags[i]
        if op == HOOK:
            v, b = ins[0]
            return hook(v, n.value), b
        if op == COND:
            return self.cond(n, ins, env)
        if op == WHILE:
            return self.while_(n, ins, env)
        if op == BLOCK:
            return self.block(n, ins, env)
        return self.primitive(n, ins)

    # ------------------------------------------------------------ primitives
    def primitive(self, n: Node, ins: list[BVal]) -> BVal:
        prim = REGISTRY[n.op]
        params = dict(n.params)
        for k in prim.out_params:  # the rules-only parameters, which the node keeps as its type
            params[k] = n.shape if k == "shape" else n.dtype
        vals = [v for v, _ in ins]
        flags = [b for _, b in ins]
        if not any(flags):
            if not any(type(v) is Tensor for v in vals):
                return prim.bind(*vals, backend=self.target, **params), False
            return prim.bind(*vals, **params), False
        rule = prim.batch
        if rule is None:
            raise BatchingError(
                f"vmap: the primitive {n.op!r} has no batching rule (node {n.type_str()}); "
                f"declare one beside it with numerix.primitives.batch_rule({n.op!r})"
            )
        if isinstance(rule, Loops):
            return _batch.loop(ops, prim.bind, vals, flags, **params), True
        return rule(ops, prim.bind, vals, flags, **params), True

    # ------------------------------------------------------------ blocks
    def block(self, n: Node, ins: list[BVal], env: dict[int, BVal]) -> BVal:
        block: Block = n.value
        vals = [v for v, _ in ins]
        flags = [b for _, b in ins]
        multi = n.types is not None
        batched = any(flags)
        if block.name not in BLOCKS or block.shape_rule is None:
            return self.marker(n, block, ins)
        rule = block.batch
        if batched and rule is not None and not isinstance(rule, Loops):

            def call(*xs: Any, **params: Any) -> Any:
                _, ts = unify(block.name, *xs)
                out = _block_out(block, ts, params)
                return run_block(block, out, n.fallback_fn, *ts, **params)

            out = rule(ops, call, vals, flags, **n.params)
        elif not batched:
            _, ts = unify(block.name, *vals)
            out = run_block(block, _block_out(block, ts, n.params), n.fallback_fn, *ts,
                            **n.params)  # fmt: skip
        else:  # no rule: the core version, batched primitive by primitive
            outs = self.run(n.fallback, ins, {})
            out = tuple(v for v, _ in outs) if multi else outs[0][0]
        if multi:
            return list(out), [batched] * len(out)
        return out, batched

    def marker(self, n: Node, block: Block, ins: list[BVal]) -> BVal:
        """A block of the differentiation transforms (an input mark, stop_grad, a custom
        derivative): the same mark on the batched value, or its core version."""
        batched = any(b for _, b in ins)
        vals = [v for v, _ in ins]
        rule = block.batch
        if rule is not None and not isinstance(rule, Loops) and n.types is None:
            # a block of one output of its input's type whose rules hold for any shape
            # (relu, the stability shift): the same block on the batch

            def call(*xs: Any, **params: Any) -> Any:
                x = xs[0]
                out = new_out(x.shape, x.dtype, x.backend)
                return run_block(block, out, n.fallback_fn, *xs, **params)

            if not batched:
                return call(*vals, **n.params), False
            return rule(ops, call, vals, [b for _, b in ins], **n.params), True
        if block.name == "grad_input":
            return vals[0], batched
        if block.name == "stop_grad":
            return autodiff.stop_grad(vals[0]), batched
        if block.name == "checkpoint" and active_trace() is not None:
            # the same checkpoint, of the batched function
            flags = [b for _, b in ins]

            def batched_fn(*xs: Any) -> tuple[Any, ...]:
                outs = self.run(n.fallback, list(zip(xs, flags)), {})
                return tuple(self.lift(v, b) if batched else v for v, b in outs)

            res = autodiff.checkpoint(batched_fn)(*vals)
            if n.types is not None:
                return list(res), [batched] * len(res)
            return res[0], batched
        if active_trace() is not None and batched:
            raise BatchingError(
                f"vmap: {block.name} inside a traced vmap (under jit, grad or another vmap) "
                f"is not batched yet: its derivative rule is written for one example; call "
                f"vmap eagerly around it, or apply the custom rule outside the vmap"
            )
        outs = self.run(n.fallback, ins, {})
        if n.types is not None:
            return [v for v, _ in outs], [b for _, b in outs]
        return outs[0]

    # ------------------------------------------------------------ control flow
    def cond(self, n: Node, ins: list[BVal], env: dict[int, BVal]) -> BVal:
        tg, fg = n.subgraphs
        pred, pred_b = ins[0]
        operands = ins[1 : 1 + tg.n_args]
        batched = any(b for _, b in ins)

        def branch(g: Graph) -> Callable[..., Any]:
            flags = [b for _, b in operands]

            def run(*xs: Any) -> tuple[Any, ...]:
                outs = self.run(g, list(zip(xs, flags)), env)
                return tuple(self.lift(v, b) if batched else v for v, b in outs)

            return run

        if not pred_b:
            outs = cond(pred, branch(tg), branch(fg), *[v for v, _ in operands])
            return list(outs), [batched] * len(outs)
        t = branch(tg)(*[v for v, _ in operands])
        f = branch(fg)(*[v for v, _ in operands])
        picked = []
        for a, b in zip(t, f):
            p = ops.reshape(pred, (self.n,) + (1,) * (a.ndim - 1))
            picked.append(ops.where(p, a, b))
        return picked, [True] * len(picked)

    def while_(self, n: Node, ins: list[BVal], env: dict[int, BVal]) -> BVal:
        cg, bg = n.subgraphs
        carries, pred_b = _while_flags(n, [b for _, b in ins], _env_flags(env))
        init = [self.lift(v, b) if c else v for (v, b), c in zip(ins[: cg.n_args], carries)]

        def state(xs: Sequence[Any]) -> list[BVal]:
            return list(zip(xs, carries))

        def predicate(xs: Sequence[Any]) -> Any:
            p, b = self.run(cg, state(xs), env)[0]
            return ops.any(p) if b else p

        def body(xs: Sequence[Any]) -> list[Any]:
            outs = self.run(bg, state(xs), env)
            new = [self.lift(v, b) if c else v for (v, b), c in zip(outs, carries)]
            if pred_b:  # an example whose predicate is false keeps its state
                p, _ = self.run(cg, state(xs), env)[0]
                new = [
                    ops.where(ops.reshape(p, (self.n,) + (1,) * (a.ndim - 1)), a, old)
                    for a, old in zip(new, xs)
                ]
            return new

        params = {} if pred_b else dict(n.params)
        outs = _while_loop(predicate, body, init, params)
        return list(outs), carries

    def lift(self, v: Any, b: bool) -> Any:
        return v if b else ops.broadcast_to(v, (self.n, *v.shape))


def _block_out(block: Block, ts: Sequence[Tensor], params: dict[str, Any]) -> Any:
    return block_out(block, *ts, **params)


# ---------------------------------------------------------------- vmap


def _check_axis_spec(spec: Any, what: str) -> None:
    import optree

    for a in optree.tree_leaves(spec, none_is_leaf=True):
        if a is not None and type(a) is not int:
            raise ArgumentError(
                f"vmap: {what} holds {a!r}; each entry is an int (the axis to map over) or "
                f"None (not mapped)"
            )


def _leaf_axes(
    in_axes: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[list[Any], list[str]]:
    """One axis (an int or None) and one name per leaf of ``(args, kwargs)``, in the
    order of :func:`~numerix.defn.trace.flatten`: ``in_axes`` broadcast over each
    positional argument, 0 for keyword arguments."""
    import optree

    if isinstance(in_axes, (tuple, list)):
        if len(in_axes) != len(args):
            raise ArgumentError(
                f"vmap: in_axes has {len(in_axes)} entries for {len(args)} positional "
                f"argument(s); give one per positional argument (an int, None, or a tree "
                f"matching the argument), or one int or None for all"
            )
        specs = list(in_axes)
    elif in_axes is None or type(in_axes) is int:
        specs = [in_axes] * len(args)
    else:
        raise ArgumentError(
            f"vmap: in_axes must be an int, None, or a tuple/list with one entry per "
            f"positional argument, got {type(in_axes).__name__} {in_axes!r:.60}"
        )
    axes: list[Any] = []
    names: list[str] = []
    # None in an argument is an empty subtree (as flatten has it); in in_axes, a leaf
    for i, (spec, arg) in enumerate(zip(specs, args)):
        try:
            ax = optree.broadcast_prefix(spec, arg, none_is_leaf=True)
        except ValueError as e:
            raise ArgumentError(
                f"vmap: in_axes[{i}] ({spec!r:.60}) does not match the structure of argument "
                f"{i}: {e}"
            ) from None
        leaves = optree.tree_leaves(arg, none_is_leaf=True)
        paths = optree.tree_paths(arg, none_is_leaf=True)
        for a, x, p in zip(ax, leaves, paths):
            if x is not None:
                axes.append(a)
                names.append(f"argument {i}{_path(p)}")
    for p in optree.tree_paths(kwargs):  # type: ignore[arg-type]
        axes.append(0)
        names.append(f"keyword argument {p[0]!r}{_path(p[1:])}")
    return axes, names


def _path(p: Sequence[Any]) -> str:
    return "".join(f"[{k!r}]" for k in p)


def _describe(x: Any) -> str:
    return x.describe() if type(x) is Tensor else f"the Python {type(x).__name__} {x!r:.40}"


def vmap(
    fn: Callable[..., Any],
    in_axes: Any = 0,
    out_axes: Any = 0,
    *,
    axis_size: int | None = None,
) -> Callable[..., Any]:
    """``fn`` vectorised over a batch axis of its arguments (``jax.vmap``,
    ``Nx.vectorize``): ``vmap(f)(xs)`` equals stacking ``f(x)`` for each ``x`` along
    ``xs``'s axis 0, computed as one call per operation on the whole batch.

    :param in_axes: per positional argument, the axis it is mapped over: an int, None
        (not mapped: every example sees it whole), or a tree matching the argument; one
        int or None for all. Keyword arguments are mapped over axis 0.
    :param out_axes: where the batch goes in each output: an int, None (the output
        must not depend on the batch) or a tree matching the outputs.
    :param axis_size: the batch size, needed only when no argument is mapped.

    It composes with :func:`numerix.jit`, :func:`numerix.grad` and itself, either way
    round, and batches :func:`numerix.cond` and the loops (see :mod:`numerix.defn.batching`).

    >>> import numerix as nx
    >>> x = nx.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> nx.vmap(lambda row: nx.sum(row * row))(x).tolist()
    [5.0, 25.0, 61.0]
    >>> nx.vmap(nx.dot, in_axes=(0, None))(x, nx.tensor([1.0, -1.0])).tolist()
    [-1.0, -1.0, -1.0]

    The mapped axes must agree in size:

    >>> nx.vmap(nx.add)(nx.zeros(3), nx.zeros(4))
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: vmap: the mapped axes differ in size: argument 0 ...
    """
    if not callable(fn):
        raise TypeError(f"vmap: fn must be callable, got {type(fn).__name__}")
    _check_axis_spec(in_axes, "in_axes")
    _check_axis_spec(out_axes, "out_axes")
    if axis_size is not None and (type(axis_size) is not int or axis_size < 0):
        raise ArgumentError(f"vmap: axis_size must be a non-negative int, got {axis_size!r}")

    @functools.wraps(fn)
    def vmapped(*args: Any, **kwargs: Any) -> Any:
        return _vmap_call(fn, in_axes, out_axes, axis_size, args, kwargs)

    return vmapped


def _vmap_call(
    fn: Callable[..., Any],
    in_axes: Any,
    out_axes: Any,
    axis_size: int | None,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    axes, names = _leaf_axes(in_axes, args, kwargs)
    leaves, tree = flatten((args, kwargs), "vmap")
    sizes: list[tuple[str, Any, int, int]] = []
    moved: list[Any] = []
    specs = []
    for x, a, name in zip(leaves, axes, names):
        shape, dtype = leaf_spec(x, "vmap")
        if a is None:
            specs.append((shape, dtype))
            moved.append(x)
            continue
        if type(x) is not Tensor:
            raise ArgumentError(
                f"vmap: {name} is {_describe(x)}, which has no axis {a} to map over; pass "
                f"in_axes=None for it, or a tensor"
            )
        if not -x.ndim <= a < x.ndim:
            raise AxisError(
                f"vmap: in_axes gives axis {a} for {name}, {x.describe()}, which has "
                f"{x.ndim} dimension(s); valid axes are {-x.ndim}..{x.ndim - 1}"
                if x.ndim
                else f"vmap: in_axes gives axis {a} for {name}, {x.describe()}, a 0-d tensor "
                f"with no axis to map over; pass in_axes=None for it"
            )
        a %= x.ndim
        sizes.append((name, x, a, x.shape[a]))
        specs.append((shape[:a] + shape[a + 1 :], dtype))
        moved.append(_batch.to_front(ops, x, a))
    if len({s for *_, s in sizes}) > 1:
        shown = "; ".join(f"{name} ({x.describe()}) axis {a} has {s}" for name, x, a, s in sizes)
        raise ShapeError(
            f"vmap: the mapped axes differ in size: {shown}; map over axes of one size (or "
            f"pass in_axes=None for an argument every example shares)"
        )
    if sizes:
        n = sizes[0][3]
        if axis_size is not None and axis_size != n:
            raise ShapeError(
                f"vmap: axis_size={axis_size} but the mapped axes have size {n} "
                f"({sizes[0][0]}, {sizes[0][1].describe()})"
            )
    elif axis_size is None:
        raise ArgumentError(
            "vmap: no argument is mapped (every in_axes is None), so the batch size is "
            "unknown; pass axis_size=N"
        )
    else:
        n = axis_size
    parent = active_trace()
    g = trace_flat(fn, specs, tree, parent=parent, op="vmap")
    tensors = [x for x in moved if type(x) is Tensor]
    target: Any = parent or meeting_backend("vmap", tensors) or get_default_backend()
    values: list[BVal] = []
    for x, a in zip(moved, axes):
        if type(x) is not Tensor:  # a Python number: a 0-d tensor of its default dtype
            x = scalar(x, NUMBER_DTYPES[type(x)], _host())
        values.append((x, a is not None))
    outer: dict[int, BVal] = {}
    if g.free:
        assert isinstance(parent, ExprBackend)
        outer = {f.id: (parent.wrap(f), False) for f in g.free}
    outs = _Walk(target, n).run(g, values, outer)
    return _place_outputs(g, outs, out_axes, n)


def _place_outputs(g: Graph, outs: list[BVal], out_axes: Any, n: int) -> Any:
    import optree

    try:
        axes = optree.broadcast_prefix(out_axes, unflatten(g.out_tree, list(range(len(outs)))),
                                       none_is_leaf=True)  # fmt: skip
    except ValueError as e:
        raise ArgumentError(
            f"vmap: out_axes ({out_axes!r:.60}) does not match the structure of the outputs: {e}"
        ) from None
    placed = []
    for i, ((v, b), a) in enumerate(zip(outs, axes)):
        if a is None:
            if b:
                raise ArgumentError(
                    f"vmap: out_axes gives None for output {i} ({g.outputs[i].type_str()} per "
                    f"example), but it depends on the mapped arguments; give it an axis"
                )
            placed.append(v)
            continue
        if not b:
            v = ops.broadcast_to(v, (n, *v.shape))
        if not -v.ndim <= a < v.ndim:
            raise AxisError(
                f"vmap: out_axes gives axis {a} for output {i}, which has {v.ndim - 1} "
                f"dimension(s) per example; valid axes are {-v.ndim}..{v.ndim - 1}"
            )
        a %= v.ndim
        placed.append(v if a == 0 else ops.moveaxis(v, 0, a))
    return unflatten(g.out_tree, placed)
