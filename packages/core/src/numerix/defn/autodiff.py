"""Automatic differentiation as a transform of the traced graph (``Nx.Defn.Grad``).

A transform runs the function on tensors of the active trace, each differentiated
leaf behind a new ``grad_input`` identity node (so a closed-over use of the same value
is told apart), and takes the nodes it recorded as a graph (:func:`_forward`). It then
walks them in reverse, calling each primitive's derivative rule (``Primitive.vjp``,
declared beside the primitive in ``numerix/primitives/``) with the public ops on the
forward values (:func:`_backprop`). The rules' ops are recorded in the same trace: the
backward pass is graph too, so every compiler runs it and grad of grad differentiates
it again. Subgraphs (a branch, a loop body, a block's core version) are recorded again
into the trace where their intermediate values are needed (:func:`_inline`).

Special nodes: constants and captured tensors get no cotangent; a ``block`` uses its
rule, else differentiates through its traced core version; a ``cond`` differentiates
both branches inside a new ``cond`` on the same predicate; a ``while`` from
:func:`~numerix.fori_loop` with Python int bounds (a static trip count) unrolls its
body in the backward pass (up to :data:`UNROLL` steps) or runs a reverse loop over a
tape of its states; any other ``while`` raises :class:`WhileLoopGradError`.
:func:`stop_grad`, :func:`custom_grad` and :func:`custom_vjp` record ``block`` nodes
whose core version is the identity or the function itself, so no backend or compiler
implements anything new for them.

Called eagerly, each transform runs under :func:`~numerix.jit` with the default
compiler: the function is traced and compiled on every call (it may close over new
values each time); wrap the transformed function in ``numerix.jit`` to trace once per
signature.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import numerix.ops as ops
from numerix._tensor import Tensor
from numerix.defn.control import cond, fori_loop
from numerix.defn.expr import (
    BLOCK,
    COND,
    CONSTANT,
    ELEM,
    HOOK,
    PARAMETER,
    SPECIAL,
    TENSOR,
    WHILE,
    ExprBackend,
    Graph,
    Node,
    _host,
    format_type,
    tree_flatten,
    tree_map,
    unflatten,
)
from numerix.defn.jit import jit
from numerix.defn.trace import (
    NUMBER_DTYPES,
    active_trace,
    flatten,
    flatten_plain,
    leaf_spec,
    trace_flat,
)
from numerix.errors import ArgumentError, DTypeError, NumerixError, ShapeError
from numerix.ops._core import new_out, scalar
from numerix.primitives._registry import NONDIFFERENTIABLE, REGISTRY, Block

__all__ = [
    "grad", "value_and_grad", "vjp", "jvp", "stop_grad", "custom_vjp", "custom_grad",
    "GradError", "NonDifferentiableDTypeError", "NonScalarOutputError", "NonTensorLeafError",
    "HasAuxError", "CotangentError", "CustomRuleError", "MissingRuleError",
    "WhileLoopGradError", "checkpoint",
]  # fmt: skip


# ---------------------------------------------------------------- errors


class GradError(NumerixError):
    """Base class of the errors of the differentiation transforms."""


class NonDifferentiableDTypeError(GradError, DTypeError):
    """Differentiating with respect to an integer or bool input, or an integer output."""


class NonScalarOutputError(GradError, ShapeError):
    """``grad`` of a function whose output is not one 0-d float tensor."""


class NonTensorLeafError(GradError, TypeError):
    """A leaf of a differentiated argument that is neither a tensor nor a Python float."""


class HasAuxError(GradError, TypeError):
    """``has_aux=True`` with a function that does not return an ``(output, aux)`` pair."""


class CotangentError(GradError, ShapeError):
    """A cotangent (for a ``vjp`` function) or tangent (for ``jvp``) whose structure,
    shape or dtype differs from what it pairs with."""


class CustomRuleError(GradError, ValueError):
    """A custom rule (:func:`custom_vjp`, :func:`custom_grad`) returning the wrong number,
    shapes or dtypes of cotangents."""


class MissingRuleError(GradError, NotImplementedError):
    """A primitive with no derivative rule on the path being differentiated."""


class WhileLoopGradError(GradError, ValueError):
    """A ``while_loop`` with a data-dependent trip count on the differentiated path."""


# ---------------------------------------------------------------- the transform


def _inexact(x: Node | Tensor) -> bool:
    return x.dtype is not None and x.dtype.kind in "fc"


def _real(x: Node | Tensor) -> bool:
    return x.dtype is not None and x.dtype.kind == "f"


def _active(op: str) -> ExprBackend:
    be = active_trace()
    assert be is not None, f"{op}: no active trace"
    return be


def _rebase(g: Graph, env: dict[int, Any]) -> Graph:
    """``g`` with its free values taken from ``env`` (the level it is inlined into)."""
    if not g.free:
        return g
    free = [env[f.id].data for f in g.free]
    return Graph(g.parameters, g.nodes, g.outputs, g.out_tree, free, g.n_args)


def _inline(be: ExprBackend, g: Graph, env: dict[int, Any]) -> None:
    """Record the nodes of ``g`` into ``be``; ``env`` maps node ids to tensors of ``be``
    (a list of them for a multi-valued node) and holds ``g``'s parameters on entry."""
    for n in g.nodes:
        if n.id in env:
            continue
        op = n.op
        if op == CONSTANT:
            env[n.id] = be.wrap(be.constant(n.value))
        elif op == TENSOR:
            env[n.id] = be.capture(n.value)
        elif op == ELEM:
            env[n.id] = env[n.inputs[0].id][n.params["index"]]
        elif op in SPECIAL:
            assert op != PARAMETER, "a parameter without a value"
            node = be.node(
                op,
                [env[i.id] for i in n.inputs],
                dict(n.params),
                shape=n.shape,
                dtype=n.dtype,
                types=n.types,
                value=n.value,
                subgraphs=tuple(_rebase(s, env) for s in n.subgraphs),
            )
            node.fallback_fn = n.fallback_fn
            node._fallback = n._fallback
            env[n.id] = be.elems(node) if n.types is not None else be.wrap(node)
        else:
            assert n.shape is not None and n.dtype is not None
            out = new_out(n.shape, n.dtype, be)
            ins = [env[i.id] if isinstance(i, Node) else i for i in n.inputs]
            be._record(op, out, *ins, **n.params)
            env[n.id] = out


def _here(be: ExprBackend, t: Any) -> Any:
    """``t`` as a tensor of ``be``: a value of an enclosing trace (a loop body reading
    the forward pass) becomes a free value of ``be``, so a rule's ops all meet in it."""
    return t if t.backend is be else be.capture(t)


def _accumulate(ct: dict[int, Any], node: Node, c: Any, who: str) -> None:
    if c is None or not _inexact(node):
        return
    if type(c) is not Tensor or c.shape != node.shape or c.dtype is not node.dtype:
        got = c.describe() if type(c) is Tensor else f"a {type(c).__name__}"
        raise GradError(
            f"grad: the derivative rule of {who} returned {got} for an input of type "
            f"{node.type_str()}; a rule returns one cotangent per input, of that input's "
            f"shape and dtype (sum broadcast axes away, cast with astype)"
        )
    old = ct.get(node.id)
    ct[node.id] = c if old is None else ops.add(old, c)


def _rule_results(res: Any, n_inputs: int, who: str) -> Sequence[Any]:
    if not isinstance(res, (tuple, list)) or len(res) != n_inputs:
        got = f"{len(res)} values" if isinstance(res, (tuple, list)) else type(res).__name__
        raise GradError(
            f"grad: the derivative rule of {who} returned {got}; it must return a tuple "
            f"with one cotangent (or None) per input, {n_inputs} here"
        )
    return res


def _backprop(be: ExprBackend, g: Graph, env: dict[int, Any], out_cts: Sequence[Any]) -> list[Any]:
    """The cotangents of ``g``'s parameters (None for zero) given those of its outputs,
    recorded into ``be``; ``env`` holds the forward values (:func:`_inline`)."""
    ct: dict[int, Any] = {}
    for o, c in zip(g.outputs, out_cts):
        _accumulate(ct, o, c, "the output")
    params = {p.id for p in g.parameters}
    for n in reversed(g.nodes):
        if n.id in params:
            continue
        c = ct.pop(n.id, None)
        if c is None:
            continue
        op = n.op
        if op in (CONSTANT, TENSOR, PARAMETER):  # a parameter: a value of an outer trace
            continue
        if op == ELEM:
            src = n.inputs[0]
            assert src.types is not None
            slots = ct.setdefault(src.id, [None] * len(src.types))
            i = n.params["index"]
            slots[i] = c if slots[i] is None else ops.add(slots[i], c)
        elif op == HOOK:
            _accumulate(ct, n.inputs[0], c, "hook")
        elif op == COND:
            _cond_vjp(be, n, env, ct, c)
        elif op == WHILE:
            _while_vjp(be, n, env, ct, c)
        elif op == BLOCK:
            _block_vjp(be, n, env, ct, c)
        else:
            rule = REGISTRY[op].vjp
            if rule is NONDIFFERENTIABLE:
                continue
            if rule is None:
                raise MissingRuleError(
                    f"grad: the primitive {op!r} has no derivative rule yet (node "
                    f"{n.type_str()}); wrap the computation in numerix.stop_grad if no "
                    f"derivative should flow through it, give it one with "
                    f"numerix.custom_vjp, or declare it beside the primitive with "
                    f"numerix.primitives.vjp_rule({op!r})"
                )
            ins = [_here(be, env[i.id]) if isinstance(i, Node) else i for i in n.inputs]
            out = _here(be, env[n.id])
            res = _rule_results(rule(ops, _here(be, c), out, *ins, **n.params), len(ins), op)
            for i, r in zip(n.inputs, res):
                if isinstance(i, Node):
                    _accumulate(ct, i, r, op)
    return [ct.get(p.id) for p in g.parameters]


def _block_vjp(be: ExprBackend, n: Node, env: dict[int, Any], ct: dict[int, Any], c: Any) -> None:
    block: Block = n.value
    rule = block.vjp
    if rule is NONDIFFERENTIABLE:
        return
    multi = n.types is not None
    ins = [_here(be, env[i.id]) for i in n.inputs]
    who = f"block {block.name}"
    if rule is not None:
        out = tuple(_here(be, x) for x in env[n.id]) if multi else env[n.id]
        cts = tuple(None if x is None else _here(be, x) for x in c) if multi else _here(be, c)
        res = rule(ops, cts, _here(be, out) if not multi else out, *ins, **n.params)
    else:  # through the core's version
        fb = n.fallback
        fenv = {p.id: t for p, t in zip(fb.parameters, ins)}
        _inline(be, fb, fenv)
        res = _backprop(be, fb, fenv, list(c) if multi else [c])
    for i, r in zip(n.inputs, _rule_results(res, len(ins), who)):
        _accumulate(ct, i, r, who)


def _cond_vjp(be: ExprBackend, n: Node, env: dict[int, Any], ct: dict[int, Any], c: Any) -> None:
    """A ``cond`` on the same predicate whose branches differentiate the forward ones."""
    assert n.types is not None
    tg, fg = n.subgraphs
    k = tg.n_args
    operands = n.inputs[1:]  # the explicit operands, then tg's free values, then fg's
    vals = [env[i.id] for i in operands]
    diff = [j for j, i in enumerate(operands) if _inexact(i)]
    live = [j for j, s in enumerate(c) if s is not None]
    if not diff or not live:
        return

    def branch(sg: Graph, lo: int) -> Callable[..., Any]:
        def differentiate(*xs: Any) -> tuple[Any, ...]:
            sbe = _active("cond")
            xv, cv = xs[: len(vals)], xs[len(vals) :]
            senv = {p.id: t for p, t in zip(sg.parameters, [*xv[:k], *xv[lo : lo + len(sg.free)]])}
            _inline(sbe, sg, senv)
            full: list[Any] = [None] * len(sg.outputs)
            for j, cj in zip(live, cv):
                full[j] = cj
            pc = _backprop(sbe, sg, senv, full)
            got: list[Any] = [None] * len(vals)
            got[:k] = pc[:k]
            got[lo : lo + len(sg.free)] = pc[k:]
            return tuple(ops.zeros_like(xv[j]) if got[j] is None else got[j] for j in diff)

        return differentiate

    res = cond(
        env[n.inputs[0].id],
        branch(tg, k),
        branch(fg, k + len(tg.free)),
        *vals,
        *[c[j] for j in live],
    )
    for j, r in zip(diff, res):
        _accumulate(ct, operands[j], r, "cond")


def _while_vjp(be: ExprBackend, n: Node, env: dict[int, Any], ct: dict[int, Any], c: Any) -> None:
    """A loop of static trip count, unrolled: the forward states recorded step by step,
    then the body differentiated from the last step to the first."""
    trips = n.params.get("trip_count")
    if trips is None:
        raise WhileLoopGradError(
            "grad: a while_loop whose trip count depends on the data cannot be "
            f"differentiated (loop state {n.type_str()}); use numerix.fori_loop(lower, "
            "upper, body_fn, init) with Python int bounds, whose trip count is known when "
            "tracing, or numerix.stop_grad the loop's inputs"
        )
    if trips > UNROLL:
        _loop_vjp(be, n, env, ct, c, trips)
        return
    cg, bg = n.subgraphs
    k = cg.n_args
    state = [env[i.id] for i in n.inputs[:k]]
    free_nodes = n.inputs[k + len(cg.free) :]
    free = [env[i.id] for i in free_nodes]
    steps = []
    for _ in range(trips):
        benv = {p.id: t for p, t in zip(bg.parameters, [*state, *free])}
        _inline(be, bg, benv)
        steps.append(benv)
        state = [benv[o.id] for o in bg.outputs]
    cs = list(c)
    free_ct: list[Any] = [None] * len(free)
    for benv in reversed(steps):
        pc = _backprop(be, bg, benv, cs)
        cs = pc[:k]
        for m, r in enumerate(pc[k:]):
            if r is not None:
                free_ct[m] = r if free_ct[m] is None else ops.add(free_ct[m], r)
    for i, r in zip(n.inputs[:k], cs):
        _accumulate(ct, i, r, "fori_loop")
    for i, r in zip(free_nodes, free_ct):
        _accumulate(ct, i, r, "fori_loop")


#: loops of at most this many steps are differentiated unrolled; longer ones by a
#: reverse loop over a tape of the states
UNROLL = 8


def _loop_vjp(
    be: ExprBackend, n: Node, env: dict[int, Any], ct: dict[int, Any], c: Any, trips: int
) -> None:
    """A loop of static trip count, differentiated by two loops: a forward one writing
    the state entering each step into a tape (one ``(trips, *shape)`` tensor per state
    value), then a reverse one differentiating the body at each taped state, from the
    last step to the first."""
    cg, bg = n.subgraphs
    k = cg.n_args
    init = [env[i.id] for i in n.inputs[:k]]
    free_nodes = n.inputs[k + len(cg.free) :]
    free = [env[i.id] for i in free_nodes]
    diff = [j for j in range(k) if _inexact(init[j])]
    free_diff = [m for m in range(len(free)) if _inexact(free[m])]

    def step_values(state: Sequence[Any]) -> dict[int, Any]:
        benv = {p.id: v for p, v in zip(bg.parameters, [*state, *free])}
        _inline(_active("fori_loop"), bg, benv)
        return benv

    def record(i: Any, carry: tuple[Any, ...]) -> tuple[Any, ...]:
        state, tapes = carry[:k], carry[k:]
        tapes = tuple(
            ops.put_slice(t, [i] + [0] * x.ndim, ops.reshape(x, (1, *x.shape)))
            for t, x in zip(tapes, state)
        )
        benv = step_values(state)
        return (*[benv[o.id] for o in bg.outputs], *tapes)

    empty = [ops.broadcast_to(ops.zeros_like(x), (trips, *x.shape)) for x in init]
    tapes = fori_loop(0, trips, record, (*init, *empty))[k:]

    def reverse(r: Any, carry: tuple[Any, ...]) -> tuple[Any, ...]:
        cts, fcts = carry[: len(diff)], carry[len(diff) :]
        i = trips - 1 - r
        here = _active("fori_loop")
        state = [
            ops.reshape(
                ops.dynamic_slice(here.capture(t), [i] + [0] * (t.ndim - 1), [1, *t.shape[1:]]),
                t.shape[1:],
            )
            for t in tapes
        ]
        benv = step_values(state)
        full: list[Any] = [None] * k
        for j, cj in zip(diff, cts):
            full[j] = cj
        pc = _backprop(_active("fori_loop"), bg, benv, full)
        new = [ops.zeros_like(state[j]) if pc[j] is None else pc[j] for j in diff]
        for f, m in zip(fcts, free_diff):
            r_m = pc[k + m]
            new.append(f if r_m is None else ops.add(f, r_m))
        return tuple(new)

    start = [ops.zeros_like(init[j]) if c[j] is None else c[j] for j in diff]
    start += [ops.zeros_like(free[m]) for m in free_diff]
    res = fori_loop(0, trips, reverse, tuple(start))
    for j, r in zip(diff, res[: len(diff)]):
        _accumulate(ct, n.inputs[j], r, "fori_loop")
    for m, r in zip(free_diff, res[len(diff) :]):
        _accumulate(ct, free_nodes[m], r, "fori_loop")


def _traced(be: ExprBackend, x: Any) -> Tensor:
    """A leaf (a tensor or a Python number) as a tensor of ``be``."""
    if type(x) is Tensor:
        return be.capture(x)
    return be.capture(scalar(x, NUMBER_DTYPES[type(x)], _host()))


class _Values(dict[int, Any]):
    """Node id -> its value in ``be``, made on first use (for the nodes of a window)."""

    def __init__(self, be: ExprBackend, nodes: dict[int, Node]) -> None:
        super().__init__()
        self.be = be
        self.nodes = nodes

    def __missing__(self, key: int) -> Any:
        n = self.nodes[key]
        v = self.be.elems(n) if n.types is not None else self.be.wrap(n)
        self[key] = v
        return v


@functools.lru_cache(maxsize=512)
def _identity_graph(specs: tuple[Any, ...], op: str) -> Graph:
    """The graph returning its first parameter (the core version of the marker blocks)."""

    def identity(x: Any, *rest: Any) -> Any:
        return x

    return trace_flat(identity, list(specs), None, op=op, plain=True)


def _mark(be: ExprBackend, block: Block, x: Tensor, *rest: Tensor) -> Tensor:
    """``x`` through a new identity ``block`` node of ``be``."""
    specs = tuple((t.shape, t.dtype) for t in (x, *rest))
    return _record_block(be, block, [x, *rest], _identity_graph(specs, block.name))[0]


def _grad_input_vjp(ops_: Any, cotangent: Tensor, out: Tensor, x: Tensor) -> tuple[Tensor]:
    return (cotangent,)


#: marks an input being differentiated; an enclosing grad differentiates through it
_GRAD_INPUT = Block(
    "grad_input",
    "grad",
    ("x",),
    (),
    "the identity; marks an input being differentiated",
    vjp=_grad_input_vjp,
)


def _forward(
    be: ExprBackend, fn: Callable[..., Any], leaves: Sequence[Any], op: str
) -> tuple[Graph, dict[int, Any]]:
    """``fn(*leaves)`` recorded into ``be``: the window of nodes it recorded as a graph
    whose parameters are the leaves (each behind a new ``grad_input`` node, so that a
    closed-over use of the same value is not differentiated), and their values."""
    start = len(be.nodes)
    xs = [_mark(be, _GRAD_INPUT, _traced(be, x)) for x in leaves]
    result = fn(*xs)
    out_leaves, out_tree = tree_flatten(result)
    outputs = [be.output_node(x) for x in out_leaves]
    window = be.nodes[start:]
    nodes: dict[int, Node] = {}
    for n in [*window, *outputs]:
        nodes[n.id] = n
        for i in n.inputs:
            if isinstance(i, Node):
                nodes[i.id] = i
    params = [x.data for x in xs]
    g = Graph(params, window, outputs, out_tree, [], len(params))
    return g, _Values(be, nodes)


# ---------------------------------------------------------------- arguments


def _path_text(path: Sequence[Any]) -> str:
    return "".join(f"[{p!r}]" for p in path)


def _diff_leaves(tree: Any, op: str, where: str) -> tuple[list[Any], Any]:
    """The leaves of a differentiated argument, checked: float or complex tensors and
    Python floats."""
    leaves, treedef = flatten_plain(tree, op)
    for k, x in enumerate(leaves):
        t = type(x)
        if t is float or t is complex or (t is Tensor and x.dtype.kind in "fc"):
            continue
        name = f"{where}{_leaf_path(tree, k)}"
        if t is Tensor:  # the float and complex ones were passed above
            raise NonDifferentiableDTypeError(
                f"{op}: {name} is {x.describe()}, an integer or bool tensor, which has no "
                f"derivative; differentiate with respect to a float tensor (x.astype("
                f"numerix.float32)), or pass it in an argument not in argnums"
            )
        if t is int or t is bool:
            raise NonDifferentiableDTypeError(
                f"{op}: {name} is the Python {t.__name__} {x!r}, which has no derivative; "
                f"pass a float ({float(x)!r}), or pass it in an argument not in argnums"
            )
        raise NonTensorLeafError(
            f"{op}: {name} is a {t.__name__} ({x!r:.60}); differentiated arguments are "
            f"float tensors or Python floats, in tuples, lists and dicts; pass other "
            f"values in an argument not in argnums, or close over them"
        )
    return leaves, treedef


def _leaf_path(tree: Any, k: int) -> str:
    """The path of leaf ``k`` of ``tree``, as ``[key][index]`` (for an error message)."""
    import optree

    return _path_text(optree.tree_paths(tree)[k])


def _argnums(argnums: Any, op: str) -> tuple[int, ...]:
    nums = (argnums,) if type(argnums) is int else argnums
    if not isinstance(nums, tuple) or not nums or not all(type(a) is int for a in nums):
        raise ArgumentError(
            f"{op}: argnums must be an int or a non-empty tuple of ints, got {argnums!r}"
        )
    return nums


def _is_data(tree: Any) -> bool:
    """Whether every leaf of ``tree`` is a tensor, a Python number or a numpy array."""
    return all(
        type(x) is Tensor or type(x) in NUMBER_DTYPES or isinstance(x, (np.ndarray, np.generic))
        for x in tree_flatten(tree)[0]
    )


def _eager(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """``fn(*args, **kwargs)`` traced and run with the default compiler on the arguments'
    backend. Keyword arguments, and positional ones holding other values than tensors
    and numbers (a mode string, a config object), are closed over: they stay Python
    values inside, as they would be in an eager call."""
    dynamic = [i for i, a in enumerate(args) if _is_data(a)]

    def run(*xs: Any) -> Any:
        full = list(args)
        for i, x in zip(dynamic, xs):
            full[i] = x
        return fn(*full, **kwargs)

    run.__name__ = getattr(fn, "__name__", "fn")
    return jit(run)(*[args[i] for i in dynamic])


def _split_aux(g: Graph, has_aux: bool, op: str) -> tuple[Any, Any]:
    """The output indices of the main result and of ``aux``."""
    idx = unflatten(g.out_tree, list(range(len(g.outputs))))
    if not has_aux:
        return idx, None
    if not isinstance(idx, (tuple, list)) or len(idx) != 2:
        shown = unflatten(g.out_tree, [o.type_str() for o in g.outputs])
        raise HasAuxError(
            f"{op}: with has_aux=True the function must return a pair (output, aux), it "
            f"returned {repr(shown).replace(chr(39), '')}; return (loss, aux), or drop has_aux"
        )
    return idx[0], idx[1]


# ---------------------------------------------------------------- grad


def _value_and_grad(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    nums: tuple[int, ...],
    single: bool,
    has_aux: bool,
    op: str,
) -> tuple[Any, Any, Any]:
    be = _active(op)
    leaves: list[Any] = []
    trees = []
    for a in nums:
        ls, tree = _diff_leaves(args[a], op, f"argument {a}")
        leaves += ls
        trees.append((tree, len(ls)))

    def flat_fn(*xs: Any) -> Any:
        rebuilt = list(args)
        pos = 0
        for a, (tree, count) in zip(nums, trees):
            rebuilt[a] = unflatten(tree, list(xs[pos : pos + count]))
            pos += count
        return fn(*rebuilt, **kwargs)

    g, env = _forward(be, flat_fn, leaves, op)
    main, aux_idx = _split_aux(g, has_aux, op)
    if type(main) is not int or g.outputs[main].shape != () or not _real(g.outputs[main]):
        shown = (
            g.outputs[main].type_str()
            if type(main) is int
            else repr(tree_map(lambda i: g.outputs[i].type_str(), main)).replace("'", "")
        )
        cls = NonScalarOutputError
        if type(main) is int and g.outputs[main].shape == ():
            cls = NonDifferentiableDTypeError  # type: ignore[assignment]
        raise cls(
            f"{op}: the function must return one 0-d float tensor (a loss), it returned "
            f"{shown}; reduce it (numerix.sum, numerix.mean), return (loss, aux) with "
            f"has_aux=True, or use numerix.vjp for a non-scalar output"
        )
    value = env[g.outputs[main].id]
    seed: list[Any] = [None] * len(g.outputs)
    seed[main] = ops.ones_like(value)
    pc = _backprop(be, g, env, seed)
    flat = [
        ops.zeros_like(env[p.id]) if c is None else c for p, c in zip(g.parameters[: g.n_args], pc)
    ]
    grads = []
    pos = 0
    for tree, count in trees:
        grads.append(unflatten(tree, flat[pos : pos + count]))
        pos += count
    aux = None
    if has_aux:
        aux = tree_map(lambda i: env[g.outputs[i].id], aux_idx)
    return value, (grads[0] if single else tuple(grads)), aux


def value_and_grad(
    fn: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """A function returning ``(fn(*args), gradient)``, or ``((output, aux), gradient)``
    with ``has_aux`` (``jax.value_and_grad``, ``Nx.Defn.value_and_grad``).

    :param fn: returns a 0-d float tensor (the value differentiated).
    :param argnums: the positional argument (an int) or arguments (a tuple) to
        differentiate with respect to; each a float tensor, a Python float, or a tuple,
        list or dict of them. The gradient has the structure of the argument (a tuple
        of them for a tuple ``argnums``).
    :param has_aux: ``fn`` returns ``(output, aux)``; ``aux`` is returned, not
        differentiated.

    Works eagerly (traced and run with the default compiler on the arguments'
    backend; wrap in :func:`numerix.jit` to trace once), inside ``jit``/``defn`` on
    every compiler, and composes with itself.

    >>> import numerix as nx
    >>> f = nx.value_and_grad(lambda w, x: nx.sum((w * x) ** 2))
    >>> value, g = f(nx.tensor([1.0, 2.0]), nx.tensor([3.0, 4.0]))
    >>> value.item(), g.tolist()
    (73.0, [18.0, 64.0])

    An integer argument has no derivative:

    >>> nx.grad(lambda n: n * 2.0)(nx.tensor(3))
    Traceback (most recent call last):
    ...
    numerix.defn.autodiff.NonDifferentiableDTypeError: grad: argument 0 is s64 ..., an integer or bool tensor, ...
    """
    nums = _argnums(argnums, "value_and_grad")
    single = type(argnums) is int

    @functools.wraps(fn)
    def value_and_grad_fn(*args: Any, **kwargs: Any) -> Any:
        op = "value_and_grad"
        if max(nums) >= len(args):
            raise ArgumentError(
                f"{op}: argnums {argnums!r} names a positional argument that was not "
                f"passed ({len(args)} given)"
            )
        if active_trace() is None:
            for a in nums:
                _diff_leaves(args[a], op, f"argument {a}")
            return _eager(value_and_grad_fn, args, kwargs)
        value, g, aux = _value_and_grad(fn, args, kwargs, nums, single, has_aux, op)
        return ((value, aux), g) if has_aux else (value, g)

    return value_and_grad_fn


def grad(
    fn: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """The gradient of ``fn`` with respect to argument(s) ``argnums`` (``jax.grad``,
    ``Nx.Defn.grad``), as a function of the same arguments; with ``has_aux`` it returns
    ``(gradient, aux)``. See :func:`value_and_grad` for the arguments.

    >>> import numerix as nx
    >>> [round(v, 4) for v in nx.grad(lambda x: nx.sum(nx.exp(x)))(nx.tensor([0.0, 1.0])).tolist()]
    [1.0, 2.7183]
    >>> nx.grad(nx.grad(lambda x: x**3))(2.0).item()
    12.0

    The output must be one 0-d float tensor:

    >>> nx.grad(lambda x: x * 2)(nx.tensor([1.0, 2.0]))
    Traceback (most recent call last):
    ...
    numerix.defn.autodiff.NonScalarOutputError: grad: the function must return one 0-d float tensor (a loss), it returned f32[2]; ...
    """
    vg = value_and_grad(fn, argnums, has_aux)
    nums, single = _argnums(argnums, "grad"), type(argnums) is int

    @functools.wraps(fn)
    def grad_fn(*args: Any, **kwargs: Any) -> Any:
        op = "grad"
        if max(nums) >= len(args):
            return vg(*args, **kwargs)  # its error
        if active_trace() is None:
            for a in nums:
                _diff_leaves(args[a], op, f"argument {a}")
            return _eager(grad_fn, args, kwargs)
        _, g, aux = _value_and_grad(fn, args, kwargs, nums, single, has_aux, op)
        return (g, aux) if has_aux else g

    return grad_fn


# ---------------------------------------------------------------- vjp and jvp


def _check_like(got: Any, want: Sequence[Any], tree: Any, op: str, what: str) -> list[Any]:
    """The leaves of ``got``, which must have structure ``tree`` and the shapes and
    dtypes of ``want`` (tensors or nodes)."""
    leaves, gtree = flatten_plain(got, op)
    shown_want = repr(unflatten(tree, [_type_of(x) for x in want])).replace("'", "")
    if gtree != tree:
        shown_got = repr(unflatten(gtree, [_leaf_type(x) for x in leaves])).replace("'", "")
        raise CotangentError(
            f"{op}: the {what} has structure {shown_got}, expected {shown_want}; pass one "
            f"tensor per output, in the same tuple/list/dict structure"
        )
    out = []
    for x, w in zip(leaves, want):
        if type(x) in (float, complex) and w.shape == () and w.dtype.kind in "fc":
            x = scalar(x, w.dtype, _host())  # a Python number for a 0-d leaf, as in JAX
        if type(x) is not Tensor or x.shape != w.shape or x.dtype is not w.dtype:
            got_t = x.describe() if type(x) is Tensor else f"{type(x).__name__} {x!r:.40}"
            raise CotangentError(
                f"{op}: a {what} leaf is {got_t} where {_type_of(w)} is expected (the whole "
                f"{what} should be {shown_want}); give each leaf its primal's shape and "
                f"dtype (astype, broadcast_to)"
            )
        out.append(x)
    return out


def _type_of(x: Any) -> str:
    return x.type_str() if isinstance(x, Node) else format_type(x.shape, x.dtype)


def _leaf_type(x: Any) -> str:
    return format_type(x.shape, x.dtype) if type(x) is Tensor else f"{type(x).__name__} {x!r:.20}"


def vjp(fn: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(fn(*primals), vjp_fn)``: ``vjp_fn(cotangent)`` returns the cotangent of each
    primal, a tuple (``jax.vjp``); with ``has_aux``, ``(output, vjp_fn, aux)``.

    ``cotangent`` has the structure, shapes and dtypes of the output. Eagerly the output
    is computed at once and ``vjp_fn`` traces and runs the backward pass on each call;
    inside a trace both are recorded in it.

    >>> import numerix as nx
    >>> out, f_vjp = nx.vjp(lambda x: x * x, nx.tensor([1.0, 2.0]))
    >>> out.tolist(), f_vjp(nx.tensor([1.0, 10.0]))[0].tolist()
    ([1.0, 4.0], [2.0, 40.0])

    The cotangent must match the output:

    >>> f_vjp(nx.tensor([1.0, 2.0, 3.0]))
    Traceback (most recent call last):
    ...
    numerix.defn.autodiff.CotangentError: vjp: a cotangent leaf is f32[3] ... where f32[2] is expected...
    """
    op = "vjp"
    for i, p in enumerate(primals):
        _diff_leaves(p, op, f"primal {i}")
    be = active_trace()
    if be is None:

        def forward(*ps: Any) -> Any:
            r = vjp(fn, *ps, has_aux=has_aux)  # no backward pass until vjp_fn is called
            return (r[0], r[2]) if has_aux else r[0]

        result = _eager(forward, primals, {})

        def backward(ps: Any, ct: Any) -> Any:
            return vjp(fn, *ps, has_aux=has_aux)[1](ct)

        bwd = jit(backward)
        out_leaves, out_tree = tree_flatten(result[0] if has_aux else result)

        def eager_vjp_fn(ct: Any) -> Any:
            _check_like(ct, out_leaves, out_tree, op, "cotangent")
            return bwd(primals, ct)

        if has_aux:
            return result[0], eager_vjp_fn, result[1]
        return result, eager_vjp_fn
    leaves, tree = flatten_plain(primals, op)
    g, env = _forward(be, lambda *xs: fn(*unflatten(tree, list(xs))), leaves, op)
    main, aux_idx = _split_aux(g, has_aux, op)
    main_leaves, main_tree = tree_flatten(main)
    out = unflatten(main_tree, [env[g.outputs[i].id] for i in main_leaves])

    def vjp_fn(cotangent: Any) -> tuple[Any, ...]:
        cb = active_trace()
        if cb is None:
            raise GradError(
                "vjp: the function vjp returned inside numerix.jit/defn was called after "
                "that trace finished; call it inside the same traced function"
            )
        cts = _check_like(
            cotangent, [g.outputs[i] for i in main_leaves], main_tree, op, "cotangent"
        )
        full: list[Any] = [None] * len(g.outputs)
        for i, c in zip(main_leaves, cts):
            full[i] = c
        pc = _backprop(cb, g, env, full)
        flat = [
            ops.zeros_like(env[p.id]) if c is None else c
            for p, c in zip(g.parameters[: g.n_args], pc)
        ]
        return tuple(unflatten(tree, flat))

    if has_aux:
        return out, vjp_fn, tree_map(lambda i: env[g.outputs[i].id], aux_idx)
    return out, vjp_fn


def jvp(fn: Callable[..., Any], primals: Any, tangents: Any) -> tuple[Any, Any]:
    """``(fn(*primals), J @ tangents)``: forward mode (``jax.jvp``).

    ``primals`` and ``tangents`` are tuples (or lists) of the arguments, tangents with
    the primals' structure, shapes and dtypes. Derived from the reverse-mode rules: the
    backward pass is linear in the output cotangent ``u``, so ``J @ v`` is the gradient
    with respect to ``u`` of ``<vjp(u), v>`` (one rule per primitive serves both modes;
    the cost is about two backward passes).

    >>> import numerix as nx
    >>> out, t = nx.jvp(
    ...     lambda x: nx.sin(x) * 2.0, (nx.tensor([0.0, 1.0]),), (nx.tensor([1.0, 1.0]),)
    ... )
    >>> [round(v, 5) for v in t.tolist()]
    [2.0, 1.0806]

    Tangents must match the primals:

    >>> nx.jvp(lambda x: x, (nx.tensor([1.0]),), (nx.tensor([1.0, 2.0]),))
    Traceback (most recent call last):
    ...
    numerix.defn.autodiff.CotangentError: jvp: a tangent leaf is f32[2] ... where f32[1] is expected ...
    """
    op = "jvp"
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise ArgumentError(
            f"{op}: primals and tangents must be tuples (or lists) of the arguments, got "
            f"{type(primals).__name__} and {type(tangents).__name__}; write jvp(f, (x,), (v,))"
        )
    primals, tangents = tuple(primals), tuple(tangents)
    for i, p in enumerate(primals):
        _diff_leaves(p, op, f"primal {i}")
    leaves, tree = flatten_plain(primals, op)
    tleaves = _check_like(tangents, [_as_typed(x) for x in leaves], tree, op, "tangent")
    be = active_trace()
    if be is None:

        def run(ps: Any, ts: Any) -> Any:
            return jvp(fn, ps, ts)

        return _eager(run, (primals, tangents), {})  # type: ignore[no-any-return, unused-ignore]
    g, env = _forward(be, lambda *xs: fn(*unflatten(tree, list(xs))), leaves, op)
    outs = [env[o.id] for o in g.outputs]
    live = [j for j, o in enumerate(g.outputs) if _inexact(o)]
    tv = [_traced(be, t) for t in tleaves]

    def pairing(*us: Any) -> Any:
        full: list[Any] = [None] * len(outs)
        for j, u in zip(live, us):
            full[j] = u
        pc = _backprop(_active(op), g, env, full)
        total: Any = None
        for c, t in zip(pc, tv):
            if c is not None:
                term = ops.sum(c * t)
                total = term if total is None else total + term
        return ops.zeros((), outs[live[0]].dtype) if total is None else total

    tangent_out = [ops.zeros_like(o) for o in outs]
    if live:
        lg, lenv = _forward(be, pairing, [ops.zeros_like(outs[j]) for j in live], op)
        seed = ops.ones_like(lenv[lg.outputs[0].id])
        pc = _backprop(be, lg, lenv, [seed])
        for j, c in zip(live, pc):
            if c is not None:
                tangent_out[j] = c
    return (
        unflatten(g.out_tree, outs),
        unflatten(g.out_tree, tangent_out),
    )


def _as_typed(x: Any) -> Any:
    """A leaf's (shape, dtype) as an object with those attributes."""
    if type(x) is Tensor:
        return x
    shape, dtype = leaf_spec(x, "jvp")
    return _Typed(shape, dtype)


class _Typed:
    __slots__ = ("dtype", "shape")

    def __init__(self, shape: tuple[int, ...], dtype: Any) -> None:
        self.shape, self.dtype = shape, dtype


# ---------------------------------------------------------------- stop_grad and custom rules


def _record_block(
    be: ExprBackend, block: Block, inputs: Sequence[Tensor], fallback: Graph
) -> list[Tensor]:
    """A ``block`` node of ``block`` (not registered: no backend implements it) whose
    core version is ``fallback``, a graph of the inputs; its outputs as tensors."""
    outs = fallback.outputs
    if len(outs) == 1:
        node = be.node(BLOCK, inputs, {}, shape=outs[0].shape, dtype=outs[0].dtype, value=block)
        node._fallback = fallback
        return [be.wrap(node)]
    types = tuple((o.shape, o.dtype) for o in outs)
    node = be.node(BLOCK, inputs, {}, types=types, value=block)  # type: ignore[arg-type]
    node._fallback = fallback
    return be.elems(node)


def _closed(g: Graph) -> Graph:
    """``g`` with its free values as ordinary parameters (a block's core version takes
    every input as an argument)."""
    return Graph(g.parameters, g.nodes, g.outputs, g.out_tree, [], len(g.parameters))


_STOP_GRAD = Block(
    "stop_grad",
    "grad",
    ("x",),
    (),
    "the identity; no derivative flows through",
    vjp=NONDIFFERENTIABLE,
)


def stop_grad(t: Any) -> Any:
    """``t`` unchanged, with no derivative flowing through it (``jax.lax.stop_gradient``,
    ``Nx.Defn.Kernel.stop_grad``); ``t`` may be a tuple, list or dict of tensors.

    >>> import numerix as nx
    >>> nx.grad(lambda x: x * nx.stop_grad(x))(3.0).item()
    3.0

    Leaves must be tensors or numbers:

    >>> nx.stop_grad("x")
    Traceback (most recent call last):
    ...
    numerix.defn.autodiff.NonTensorLeafError: stop_grad: a leaf is a str ('x'); ...
    """
    import optree

    leaves, tree = flatten(t, "stop_grad")
    for x in leaves:
        if type(x) is not Tensor and type(x) not in NUMBER_DTYPES:
            raise NonTensorLeafError(
                f"stop_grad: a leaf is a {type(x).__name__} ({x!r:.60}); pass tensors, "
                f"numbers, or tuples/lists/dicts of them"
            )
    be = active_trace()
    if be is None:
        return t
    out = []
    for x in leaves:
        if type(x) is not Tensor or not x.backend.is_tracing or not _inexact(x):
            out.append(x)  # a constant to grad already
            continue
        out.append(_mark(be, _STOP_GRAD, x))
    return optree.tree_unflatten(tree, out)


def custom_grad(t: Tensor, inputs: Sequence[Tensor], fn: Callable[[Tensor], Any]) -> Tensor:
    """``t``, whose derivative with respect to ``inputs`` is given by ``fn``
    (``Nx.Defn.Kernel.custom_grad``): ``fn(g)`` receives the cotangent of ``t`` and
    returns one cotangent per input (a list or tuple, ``None`` for zero). No derivative
    flows through the computation of ``t`` itself.

    >>> import numerix as nx
    >>> def clipped_sin(x):
    ...     y = nx.sin(x)
    ...     return nx.custom_grad(y, [x], lambda g: [nx.clip(g * nx.cos(x), -0.5, 0.5)])
    >>> nx.grad(lambda x: nx.sum(clipped_sin(x)))(nx.tensor([0.0, 3.0])).tolist()
    [0.5, -0.5]

    ``fn`` must return one cotangent per input:

    >>> nx.grad(lambda x: nx.custom_grad(x * 2.0, [x], lambda g: [g, g]))(1.0)
    Traceback (most recent call last):
    ...
    numerix.defn.autodiff.CustomRuleError: custom_grad: fn returned 2 cotangents for 1 input(s); ...
    """
    if type(t) is not Tensor:
        raise NonTensorLeafError(f"custom_grad: t must be a tensor, got {type(t).__name__}")
    if not isinstance(inputs, (list, tuple)) or not all(type(x) is Tensor for x in inputs):
        raise NonTensorLeafError(
            f"custom_grad: inputs must be a list of tensors, got {inputs!r:.80}"
        )
    be = active_trace()
    if be is None:
        return t
    xs = list(inputs)

    def custom_grad_vjp(ops_: Any, cotangent: Tensor, out: Tensor, t_: Tensor, *ins: Any) -> Any:
        # Trap: fn closes over ``inputs``. Inside a cond or loop body differentiated later,
        # they belong to a finished trace: fn sees their values in this one meanwhile.
        saved = [(x.backend, x.data) for x in xs]
        try:
            for x, y in zip(xs, ins):
                if isinstance(x.backend, ExprBackend) and not x.backend.active:
                    x.backend, x.data = y.backend, y.data
            got = fn(cotangent)
        finally:
            for x, (b, d) in zip(xs, saved):
                x.backend, x.data = b, d
        return (None, *_check_custom(got, list(ins), "custom_grad", "fn"))

    block = Block("custom_grad", "grad", ("t", "*inputs"), (), "a custom derivative",
                  vjp=custom_grad_vjp)  # fmt: skip
    return _mark(be, block, t, *xs)


def _check_custom(got: Any, primals: list[Any], op: str, who: str) -> list[Any]:
    """``got`` as one cotangent per primal leaf (None for zero), checked against them."""
    if not isinstance(got, (tuple, list)) or len(got) != len(primals):
        n = f"{len(got)} cotangents" if isinstance(got, (tuple, list)) else type(got).__name__
        raise CustomRuleError(
            f"{op}: {who} returned {n} for {len(primals)} input(s); return a tuple or list "
            f"with one cotangent (or None) per input"
        )
    out: list[Any] = []
    for i, (c, x) in enumerate(zip(got, primals)):
        if c is None or not _inexact(x):
            out.append(None)
            continue
        if type(c) is not Tensor or c.shape != x.shape:
            shown = c.describe() if type(c) is Tensor else type(c).__name__
            raise CustomRuleError(
                f"{op}: {who} returned {shown} as the cotangent of input {i}, which is "
                f"{_type_of(x)}; return one of that shape (sum broadcast axes away)"
            )
        out.append(c if c.dtype is x.dtype else ops.astype(c, x.dtype))
    return out


class custom_vjp:
    """A function with its own derivative rule (``jax.custom_vjp``).

    Decorate the function, then give the rule with :meth:`defvjp`: ``fwd(*args)``
    returns ``(output, residuals)`` and ``bwd(residuals, cotangent)`` a tuple with one
    cotangent per argument (the argument's structure, or ``None`` for zero). Called
    eagerly, or traced outside any differentiation, the function runs as it is; grad
    uses the rule.

    >>> import numerix as nx
    >>> @nx.custom_vjp
    ... def square(x):
    ...     return x * x
    >>> square.defvjp(lambda x: (x * x, x), lambda x, g: (g * 2.0 * x,))
    >>> nx.grad(square)(3.0).item()
    6.0

    ``bwd`` must return one cotangent per argument:

    >>> square.defvjp(lambda x: (x * x, x), lambda x, g: (g, g))
    >>> nx.grad(square)(3.0)
    Traceback (most recent call last):
    ...
    numerix.defn.autodiff.CustomRuleError: custom_vjp square: bwd returned 2 cotangents for 1 input(s); ...
    """

    def __init__(self, fn: Callable[..., Any]) -> None:
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        """Set the rule: ``fwd(*args) -> (output, residuals)``,
        ``bwd(residuals, cotangent) -> tuple of cotangents, one per argument``."""
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: Any) -> Any:
        import optree

        name = f"custom_vjp {getattr(self.fn, '__name__', 'fn')}"
        if self.fwd is None or self.bwd is None:
            raise CustomRuleError(
                f"{name}: no rule given; call {getattr(self.fn, '__name__', 'f')}.defvjp("
                f"fwd, bwd) before calling it"
            )
        be = active_trace()
        if be is None:
            return self.fn(*args)
        leaves, tree = flatten(args, name)
        g = trace_flat(
            lambda *xs: self.fn(*optree.tree_unflatten(tree, list(xs))),
            [leaf_spec(x, name) for x in leaves],
            None,
            parent=be,
            op=name,
        )
        ins = [_traced(be, x) for x in leaves] + [be.wrap(f) for f in g.free]
        fwd, bwd = self.fwd, self.bwd
        n_leaves = len(leaves)
        multi = len(g.outputs) != 1

        def custom_vjp_rule(ops_: Any, cotangent: Any, out: Any, *xs: Any) -> Any:
            primals = optree.tree_unflatten(tree, list(xs[:n_leaves]))
            res = fwd(*primals)
            if not isinstance(res, (tuple, list)) or len(res) != 2:
                raise CustomRuleError(
                    f"{name}: fwd must return a pair (output, residuals), it returned "
                    f"{type(res).__name__}"
                )
            cts = list(cotangent) if multi else [cotangent]
            outs = list(out) if multi else [out]
            cts = [ops.zeros_like(o) if c is None else c for c, o in zip(cts, outs)]
            got = bwd(res[1], optree.tree_unflatten(g.out_tree, cts))
            if not isinstance(got, (tuple, list)) or len(got) != len(args):
                n = f"{len(got)} cotangents" if isinstance(got, (tuple, list)) else type(got)
                raise CustomRuleError(
                    f"{name}: bwd returned {n} for {len(args)} input(s); return a tuple "
                    f"with one cotangent (or None) per argument"
                )
            flat: list[Any] = []
            for a, c in zip(primals, got):
                n_a = len(optree.tree_leaves(a))
                if c is None:
                    flat += [None] * n_a
                    continue
                # None for a zero leaf, as in JAX
                c_leaves, c_tree = optree.tree_flatten(c, none_is_leaf=True)
                a_tree = optree.tree_structure(a, none_is_leaf=True)
                if c_tree != a_tree:
                    raise CustomRuleError(
                        f"{name}: bwd returned a cotangent of structure {c_tree} for an "
                        f"argument of structure {a_tree}; match it (None for a zero leaf)"
                    )
                flat += c_leaves
            primal_leaves = list(xs[:n_leaves])
            return (*_check_custom(flat, primal_leaves, name, "bwd"), *[None] * len(g.free))

        block = Block("custom_vjp", "grad", ("*args",), (), name, vjp=custom_vjp_rule)
        outs = _record_block(be, block, ins, _closed(g))
        if not multi and optree.treespec_is_leaf(g.out_tree):
            return outs[0]
        return optree.tree_unflatten(g.out_tree, outs)


# ---------------------------------------------------------------- checkpoint

#: a function recorded as one block: grad differentiates through its core version (the
#: function's graph), inlined into the backward pass, so its intermediate values are
#: computed again there instead of being kept from the forward pass
_CHECKPOINT = Block(
    "checkpoint",
    "grad",
    ("*args",),
    (),
    "rematerialised: the backward pass recomputes the function's forward pass",
)


def checkpoint(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, whose intermediate values ``grad`` recomputes in the backward pass instead
    of keeping them from the forward pass (``jax.checkpoint``, also ``jax.remat``):
    memory for time, on long chains of layers.

    Inside a trace ``fn`` is recorded as one ``block`` node; its derivative inlines
    ``fn``'s graph into the backward pass, so nothing of its inside lives between the
    passes. The values and derivatives are ``fn``'s own. Eagerly (outside any trace)
    it is ``fn``. Arguments are tensors, numbers, or tuples/lists/dicts of them; values
    ``fn`` closes over are differentiated as usual.

    >>> import numerix as nx
    >>> layer = nx.checkpoint(lambda w, x: nx.tanh(x @ w))
    >>> w = nx.tensor([[0.5]])
    >>> nx.grad(lambda w: nx.sum(layer(w, nx.tensor([[1.0]]))))(w).shape
    (1, 1)
    """
    if not callable(fn):
        raise TypeError(f"checkpoint: fn must be callable, got {type(fn).__name__}")

    @functools.wraps(fn)
    def rematerialised(*args: Any) -> Any:
        import optree

        be = active_trace()
        if be is None:
            return fn(*args)
        leaves, tree = flatten(args, "checkpoint")
        g = trace_flat(
            lambda *xs: fn(*optree.tree_unflatten(tree, list(xs))),
            [leaf_spec(x, "checkpoint") for x in leaves],
            None,
            parent=be,
            op="checkpoint",
        )
        ins = [_traced(be, x) for x in leaves] + [be.wrap(f) for f in g.free]
        outs = _record_block(be, _CHECKPOINT, ins, _closed(g))
        return optree.tree_unflatten(g.out_tree, outs)

    return rematerialised
