"""The expression graph and the tracing backend that records it.

Inside a trace the core's ops run unchanged: their operands live on an
:class:`ExprBackend`, whose primitives record a :class:`Node` each instead of
computing (as ``Nx.Defn.Expr``). A finished trace is a :class:`Graph`, which a
compiler turns into something that runs.

Node kinds (``node.op``): a primitive name (``add``, ``max`` ...), or one of
``parameter`` (an argument), ``constant`` (values known at trace time, held as a
host tensor in ``node.value``: a numpy array on :data:`LITERAL` for a Python scalar,
a ``binary`` tensor for a folded op), ``tensor`` (a concrete tensor captured from the
enclosing scope, in ``node.value``), ``elem`` (element ``params["index"]`` of a
multi-valued node), ``cond``, ``while`` (control flow, with traced subgraphs in
``node.subgraphs``), ``hook`` (a callback ``node.value`` run at execution time on the
value of its input, which it passes through) and ``block`` (a composite a backend may
run natively: ``node.value`` is the :class:`~numerix.primitives.Block`,
``node.fallback`` the traced core version).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

import numpy as np

from numerix import dtypes
from numerix._tensor import Tensor
from numerix.backend import Backend
from numerix.dtypes import DType
from numerix.errors import NumerixError, TracingError
from numerix.ops._core import as_tensor, check_scalar_fits, new_out, stored
from numerix.plugins import get_backend
from numerix.primitives._registry import REGISTRY, Block

__all__ = [
    "Node", "Graph", "ExprBackend", "PARAMETER", "CONSTANT", "TENSOR", "ELEM", "COND",
    "WHILE", "HOOK", "BLOCK", "SPECIAL", "FOLD_LIMIT", "NUMBER_DTYPES", "LITERAL",
    "LiteralBackend", "PlainTree", "format_type", "freeze", "literal", "num_leaves",
    "plain_flatten", "plain_spec", "tree_flatten", "tree_map", "unflatten",
]  # fmt: skip

PARAMETER = "parameter"
CONSTANT = "constant"
TENSOR = "tensor"
ELEM = "elem"
COND = "cond"
WHILE = "while"
HOOK = "hook"
BLOCK = "block"
#: The node kinds that are not primitives of the backend contract.
SPECIAL = frozenset({PARAMETER, CONSTANT, TENSOR, ELEM, COND, WHILE, HOOK, BLOCK})

#: Ops whose inputs are all constants are computed at trace time (on ``binary``) when
#: their result has at most this many elements; small captured host tensors become
#: constants. Larger results stay in the graph, so a trace never materialises big data.
FOLD_LIMIT = 1024

#: The dtype a Python number takes where it becomes a tensor of a trace: an argument of a
#: jitted function (numbers are dynamic 0-d tensors, as in Nx) or a returned value.
NUMBER_DTYPES: dict[type, DType] = {
    bool: dtypes.bool_,
    int: dtypes.int64,
    float: dtypes.float32,
    complex: dtypes.complex64,
}

_ids = itertools.count()
_new = Tensor.__new__


def format_type(shape: tuple[int, ...] | None, dtype: DType | None) -> str:
    """``f32[2][3]`` (``f32`` for a 0-d tensor), as the listing shows a type."""
    assert dtype is not None and shape is not None
    return dtype.short + "".join(f"[{d}]" for d in shape)


class Node:
    """One node of a :class:`Graph`.

    ``shape``/``dtype`` describe its value; a multi-valued node (``cond``, ``while``,
    a block with several outputs) has ``shape = dtype = None`` and ``types``, a tuple
    of ``(shape, dtype)``: its value is a list read by ``elem`` nodes.
    """

    __slots__ = (
        "_fallback",
        "dtype",
        "fallback_fn",
        "id",
        "inputs",
        "op",
        "params",
        "shape",
        "subgraphs",
        "types",
        "value",
    )  # fmt: skip

    def __init__(
        self,
        op: str,
        inputs: tuple[Any, ...],
        params: dict[str, Any],
        shape: tuple[int, ...] | None,
        dtype: DType | None,
        *,
        value: Any = None,
        types: tuple[tuple[tuple[int, ...], DType], ...] | None = None,
        subgraphs: tuple[Graph, ...] = (),
    ) -> None:
        self.id = next(_ids)
        self.op = op
        self.inputs = inputs
        self.params = params
        self.shape = shape
        self.dtype = dtype
        self.value = value
        self.types = types
        self.subgraphs = subgraphs
        self.fallback_fn: Callable[..., Any] | None = None
        self._fallback: Graph | None = None

    @property
    def fallback(self) -> Graph:
        """The core's version of a ``block`` node, traced on first access: a graph whose
        parameters are the block's inputs and whose outputs are the block's outputs."""
        if self.op != BLOCK:
            raise AttributeError(f"a {self.op} node has no fallback")
        if self._fallback is None:
            assert self.fallback_fn is not None
            specs = [(n.shape, n.dtype) for n in self.inputs]
            fn, params = self.fallback_fn, self.params
            self._fallback = trace_flat(
                lambda *xs: fn(*xs, **params), specs, None, op=f"block {self.value.name}",
                plain=True,
            )  # fmt: skip
        return self._fallback

    def type_str(self) -> str:
        if self.types is not None:
            return "(" + ", ".join(format_type(s, d) for s, d in self.types) + ")"
        return format_type(self.shape, self.dtype)

    def __repr__(self) -> str:
        return f"<expr #{self.id} {self.op} {self.type_str()}>"


class Graph:
    """A traced numerical definition.

    :ivar parameters: the parameter nodes: first the explicit arguments (``n_args``
        of them, in the order of the flattened arguments), then one per *free* value,
        a value of the enclosing graph a subgraph uses (``free``, same order).
    :ivar nodes: every node, in an order where inputs come first (parameters first);
        nodes nothing uses are removed, except hooks.
    :ivar outputs: the nodes returned, flattened.
    :ivar out_tree: the structure of what the function returned: an ``optree`` tree
        structure, or a :class:`PlainTree` for jit's traces (see :func:`trace_flat`).
    :ivar free: nodes of the enclosing graph whose values the last parameters take
        (empty for a top-level graph).
    """

    __slots__ = ("free", "n_args", "nodes", "out_tree", "outputs", "parameters")

    def __init__(
        self,
        parameters: list[Node],
        nodes: list[Node],
        outputs: list[Node],
        out_tree: Any,
        free: list[Node],
        n_args: int,
    ) -> None:
        self.parameters = parameters
        self.nodes = nodes
        self.outputs = outputs
        self.out_tree = out_tree
        self.free = free
        self.n_args = n_args

    def walk(self) -> list[Node]:
        """Every node of this graph and of its subgraphs (traced block fallbacks
        excluded: they are traced only when a compiler asks for them)."""
        out: list[Node] = []
        for n in self.nodes:
            out.append(n)
            for g in n.subgraphs:
                out.extend(g.walk())
        return out

    def listing(self, indent: str = "") -> str:
        """The graph as text, one node a line: ``c = add [ a, b ]  f32[3]``."""
        names: dict[int, str] = {}
        counter = itertools.count()

        def ref(x: Any) -> str:
            if isinstance(x, Node):
                if x.id in names:
                    return names[x.id]
                if x.op == CONSTANT and x.shape == ():
                    return _scalar_text(x.value)
                return f"?{x.id}"
            return _param_text(x)

        rows: list[tuple[str, str, list[str]]] = []
        for p in self.parameters:
            names[p.id] = _name(next(counter))
            rows.append((f"parameter {names[p.id]}", p.type_str(), []))
        for n in self.nodes:
            if n.op == PARAMETER:
                continue
            if n.op == CONSTANT and n.shape == ():
                continue  # shown inline where it is used
            name = names[n.id] = _name(next(counter))
            if n.op in (CONSTANT, TENSOR):
                rows.append((f"{n.op} {name}", n.type_str(), []))
                continue
            args = [ref(i) for i in n.inputs]
            params = n.params
            label = n.op
            if n.op == BLOCK:
                label = f"block {n.value.name}"
            elif n.op == HOOK:
                params = {"fn": getattr(n.value, "__name__", repr(n.value)), **params}
            args += [f"{k}: {_param_text(v)}" for k, v in params.items()]
            body = f"{name} = {label} [ {', '.join(args)} ]"
            sub: list[str] = []
            titles = {COND: ("true:", "false:"), WHILE: ("condition:", "body:")}.get(n.op)
            if titles:
                for title, g in zip(titles, n.subgraphs):
                    sub.append(f"{indent}  {title}")
                    sub.append(g.listing(indent + "    "))
            rows.append((body, n.type_str(), sub))
        width = max((len(r[0]) for r in rows), default=0)
        lines = []
        for left, typ, sub in rows:
            lines.append(f"{indent}{left.ljust(width)}  {typ}")
            lines.extend(sub)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.listing()

    def __repr__(self) -> str:
        return self.listing()


def _name(i: int) -> str:
    # a, b, ..., z, aa, ab, ...
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(97 + r) + s
    return s


def _scalar_text(t: Tensor) -> str:
    a = t.backend.to_numpy(t)
    if t.dtype.name == "bfloat16":
        a = a.astype(np.float32)
    return repr(a.reshape(()).item())


def _param_text(v: Any) -> str:
    if isinstance(v, DType):
        return v.short
    if isinstance(v, np.ndarray):
        return f"array{list(v.shape)}"
    return repr(v)


def freeze(v: Any) -> Any:
    """A hashable key for a parameter value; distinguishes 0.0, -0.0, 0, False and nan."""
    t = type(v)
    if t is float or t is complex:
        return (t, repr(v))
    if t is int or t is bool or t is str or v is None:
        return (t, v)
    if t is tuple or t is list:
        return (t, tuple(freeze(x) for x in v))
    if t is dict:
        return (t, tuple((k, freeze(x)) for k, x in v.items()))
    if isinstance(v, np.ndarray):
        if v.size > FOLD_LIMIT:
            raise TypeError("too large to compare")
        return ("nd", v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, np.generic):
        return ("np", v.dtype.str, v.tobytes())
    hash(v)
    return (t, v)


@functools.cache
def _host() -> Backend:
    return get_backend("binary")


class LiteralBackend(Backend):
    """Where a constant made while tracing keeps its value: a numpy array, read only.

    A Python scalar in a trace (``x * 2.0``, ``nx.maximum(h, 0.0)``) is a ``full`` with no
    input; its value is known at once, as ``numpy.array(value, dtype)`` (binary's own
    ``full``), so no backend is loaded for it: the first call of a jitted function on
    xla or torch does not import the binary plugin. Folding an op whose inputs are all
    constants still runs on ``binary`` (``_fold``), whose kernels read these arrays as
    their own. Compilers read the value with ``to_numpy``, as any host tensor's.
    """

    name = "literal"
    is_host = True
    install_fallbacks = False  # it computes nothing: folding runs on binary

    def device_name(self) -> str:
        return "host"

    def to_numpy(self, x: Tensor) -> np.ndarray:
        data: np.ndarray = x.data
        return data

    def to_dlpack(self, x: Tensor, *args: Any, **kwargs: Any) -> Any:
        return x.data.__dlpack__(*args, **kwargs)

    def dlpack_device(self, x: Tensor) -> tuple[int, int]:
        kind, index = x.data.__dlpack_device__()
        return int(kind), int(index)


#: The one :class:`LiteralBackend`: constants made while tracing live on it.
LITERAL = LiteralBackend()


def literal(shape: tuple[int, ...], dtype: DType, value: Any) -> Tensor:
    """A constant tensor of ``value`` (a Python scalar the core already rounded to
    ``dtype``, see ``numerix.ops._core.stored``) on :data:`LITERAL`: what binary's
    ``full`` makes, without loading binary."""
    with np.errstate(all="ignore"):
        a = np.full(shape, value, dtype=dtype.numpy_dtype)
    return new_out(shape, dtype, LITERAL, a)


class ExprBackend(Backend):
    """The tracing backend: each primitive call records a :class:`Node`.

    One instance per trace (and one per traced subgraph, whose ``parent`` is the
    enclosing trace). Tensors on it carry their node in ``data``.
    """

    name = "expr"
    is_tracing = True
    install_fallbacks = False  # it records every primitive (__getattr__)
    depth: int

    def __init__(self, parent: ExprBackend | None = None, *, op: str = "defn") -> None:
        super().__init__()
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.op = op
        self.active = True
        self.nodes: list[Node] = []
        self.params: list[Node] = []
        self.free_params: list[Node] = []
        self.free: list[Node] = []
        self._free_map: dict[int, Node] = {}
        self._captured: dict[int, tuple[Tensor, Node]] = {}
        self._cse: dict[Any, Node] = {}
        #: how many tensors this trace captured from outside (tests read it)
        self.captures = 0

    def device_name(self) -> str:
        return "trace"

    def __repr__(self) -> str:
        return "expr(trace)"

    # ------------------------------------------------------------ recording
    def __getattr__(self, attr: str) -> Any:
        if not attr.startswith("_"):
            if attr in REGISTRY:
                rec = functools.partial(self._record, attr)
                self.__dict__[attr] = rec
                return rec
        return super().__getattr__(attr)

    def from_numpy(self, out: Tensor, array: np.ndarray) -> Tensor:
        return self._record("from_numpy", out, array)

    def _record(self, name: str, out: Tensor, *inputs: Any, **params: Any) -> Tensor:
        if not self.active:
            raise self._leak_error(name)
        ins = tuple(self._node_of(x) if type(x) is Tensor else x for x in inputs)
        try:
            key: Any = (
                name,
                tuple(x.id if isinstance(x, Node) else freeze(x) for x in ins),
                freeze(params),
                out.shape,
                out.dtype,
            )
            hit = self._cse.get(key)
        except TypeError:
            key = hit = None
        if hit is None:
            hit = self._fold(name, out, ins, params)
            if hit is None:
                hit = self._add(Node(name, ins, params, out.shape, out.dtype))
            if key is not None:
                self._cse[key] = hit
        out.data = hit
        return out

    def _add(self, node: Node) -> Node:
        self.nodes.append(node)
        return node

    def _fold(self, name: str, out: Tensor, ins: tuple[Any, ...], params: dict[str, Any]) -> Any:
        if len(ins) == 2 and name in _IDENTITY:
            unit, commutes = _IDENTITY[name]
            a, b = ins
            # Trap: for floats x + 0.0 turns -0.0 into 0.0; folded anyway, as XLA does.
            if _is_const(b, unit) and a.shape == out.shape and a.dtype is out.dtype:
                return a
            if commutes and _is_const(a, unit) and b.shape == out.shape and b.dtype is out.dtype:
                return b
        if name == "full" and not ins and _size(out.shape) <= FOLD_LIMIT:
            return self.constant(literal(out.shape, out.dtype, params["value"]))
        literal_ins = all(not isinstance(x, Node) or x.op == CONSTANT for x in ins)
        if literal_ins and (name == "from_numpy" or _size(out.shape) <= FOLD_LIMIT):
            host = _host()
            o = new_out(out.shape, out.dtype, host)
            args = [x.value if isinstance(x, Node) else x for x in ins]
            return self.constant(getattr(host, name)(o, *args, **params))
        return None

    def constant(self, t: Tensor) -> Node:
        """A constant node holding the concrete host tensor ``t`` (shared when equal)."""
        key: Any = None
        if t.size <= FOLD_LIMIT:
            a = t.backend.to_numpy(t)
            key = ("constant", t.dtype, t.shape, np.ascontiguousarray(a).tobytes())
            hit = self._cse.get(key)
            if hit is not None:
                return hit
        node = self._add(Node(CONSTANT, (), {}, t.shape, t.dtype, value=t))
        if key is not None:
            self._cse[key] = node
        return node

    def parameter(self, shape: tuple[int, ...], dtype: DType) -> Tensor:
        """A new argument of the traced function."""
        node = self._add(Node(PARAMETER, (), {}, shape, dtype))
        self.params.append(node)
        return self.wrap(node)

    def wrap(self, node: Node) -> Tensor:
        """A tensor on this backend whose value is ``node``'s."""
        assert node.shape is not None and node.dtype is not None
        return new_out(node.shape, node.dtype, self, node)

    def node(
        self,
        op: str,
        inputs: Sequence[Tensor],
        params: dict[str, Any],
        *,
        shape: tuple[int, ...] | None = None,
        dtype: DType | None = None,
        types: tuple[tuple[tuple[int, ...], DType], ...] | None = None,
        value: Any = None,
        subgraphs: tuple[Graph, ...] = (),
        extra_inputs: Sequence[Node] = (),
    ) -> Node:
        """Record a special node (cond, while, hook, block) with tensor ``inputs``."""
        if not self.active:
            raise self._leak_error(op)
        ins = tuple(self._node_of(t) for t in inputs) + tuple(extra_inputs)
        return self._add(
            Node(op, ins, params, shape, dtype, value=value, types=types, subgraphs=subgraphs)
        )

    def elems(self, node: Node) -> list[Tensor]:
        """One ``elem`` node per value of the multi-valued ``node``, as tensors."""
        assert node.types is not None
        return [
            self.wrap(self._add(Node(ELEM, (node,), {"index": i}, s, d)))
            for i, (s, d) in enumerate(node.types)
        ]

    def record_block(
        self, block: Block, out: Any, fallback: Callable[..., Any], *inputs: Any, **params: Any
    ) -> Any:
        """Record ``block`` as one node (``run_block`` calls this on a tracing backend).

        The fallback is traced on first access of ``node.fallback``, by a compiler whose
        backend lacks ``block_<name>``.
        """
        tensors = [x if type(x) is Tensor else self._literal(x) for x in inputs]
        multi = isinstance(out, tuple)
        kw: dict[str, Any] = (
            {"types": tuple((o.shape, o.dtype) for o in out)}
            if multi
            else {"shape": out.shape, "dtype": out.dtype}
        )
        node = self.node(BLOCK, tensors, dict(params), value=block, **kw)
        node.fallback_fn = fallback
        if not multi:
            out.data = node
            return out
        for o, e in zip(out, self.elems(node)):
            o.data = e.data
        return out

    def _literal(self, x: Any) -> Tensor:
        return self.capture(as_tensor(x, self.op, _host()))

    # ------------------------------------------------------------ capture
    def capture(self, t: Tensor) -> Tensor:
        """``t`` as a tensor of this trace.

        A concrete tensor (any backend) becomes a ``tensor`` node (a ``constant`` when
        it is small and in host memory); a tensor of an enclosing trace becomes a free
        parameter of this one. Nothing is copied: the compiler moves captured tensors
        to its device once, when it compiles.
        """
        b = t.backend
        if b is self:
            return t
        if not self.active:
            raise self._leak_error("capture")
        if b.is_tracing:
            assert isinstance(b, ExprBackend)
            if self.parent is None or not self._encloses(b):
                raise TracingError(
                    f"{self.op}: {t.describe()} is a traced tensor of another numerix.jit/defn "
                    f"trace (it escaped it, e.g. through a global or a closure of a finished "
                    f"trace); pass it as an argument instead"
                )
            outer = t if b is self.parent else self.parent.capture(t)
            node = self._free_map.get(outer.data.id)
            if node is None:
                node = Node(PARAMETER, (), {}, t.shape, t.dtype)
                self._free_map[outer.data.id] = node
                self.free_params.append(node)
                self.free.append(outer.data)
                self.nodes.append(node)
            return self.wrap(node)
        hit = self._captured.get(id(t))
        if hit is None:
            self.captures += 1
            if b.is_host and t.size <= FOLD_LIMIT:
                node = self.constant(t)
            else:
                node = self._add(Node(TENSOR, (), {}, t.shape, t.dtype, value=t))
            # the tensor is kept with its node, so its id cannot be reused while tracing
            hit = self._captured[id(t)] = (t, node)
        return self.wrap(hit[1])

    def _encloses(self, b: ExprBackend) -> bool:
        p = self.parent
        while p is not None:
            if p is b:
                return True
            p = p.parent
        return False

    def _node_of(self, t: Tensor) -> Node:
        if t.backend is not self:
            t = self.capture(t)
        node: Node = t.data
        return node

    def output_node(self, x: Any) -> Node:
        """The node of one returned leaf: a tensor (captured when it is not traced here)
        or a Python number (a constant)."""
        if type(x) is Tensor:
            return self._node_of(x)
        d = NUMBER_DTYPES.get(type(x))
        if d is not None:  # a Python number: a constant of its default dtype
            check_scalar_fits(self.op, x, d)
            return self.constant(literal((), d, stored(x, d)))
        raise TracingError(
            f"{self.op}: the function returned a {type(x).__name__} ({x!r:.60}); return "
            f"tensors, Python numbers, or tuples/lists/dicts of them"
        )

    # ------------------------------------------------------------ finishing
    def finish(self, outputs: list[Node], out_tree: Any) -> Graph:
        """Close the trace: the graph of ``outputs``, without the nodes nothing uses."""
        self.active = False
        live: set[int] = set()
        stack = list(outputs) + [n for n in self.nodes if n.op == HOOK]
        while stack:
            n = stack.pop()
            if n.id in live:
                continue
            live.add(n.id)
            stack.extend(i for i in n.inputs if isinstance(i, Node))
        params = self.params + self.free_params
        live.update(p.id for p in params)
        order = {p.id: i for i, p in enumerate(params)}
        kept = [n for n in self.nodes if n.id in live and n.id not in order]
        return Graph(params, params + kept, outputs, out_tree, list(self.free), len(self.params))

    # ------------------------------------------------------------ no values
    def to_numpy(self, x: Tensor) -> np.ndarray:
        raise self.concrete_error(x, "to_numpy")

    def to_dlpack(self, x: Tensor, stream: Any = None) -> Any:
        raise self.concrete_error(x, "__dlpack__")

    def dlpack_device(self, x: Tensor) -> tuple[int, int]:
        raise self.concrete_error(x, "__dlpack_device__")

    def deallocate(self, x: Tensor) -> None:
        pass

    def concrete_error(self, x: Tensor, op: str) -> NumerixError:
        head = (
            f"{op}: {x.describe()} is a traced tensor inside numerix.jit/defn: it has no "
            f"values until the compiled program runs"
        )
        if op == "bool":
            return TracingError(
                f"{head}, so a Python `if`, `while`, `and`/`or` or bool() cannot branch on it; "
                f"use numerix.cond(pred, true_fn, false_fn, *operands) (or numerix.while_loop) "
                f"for control flow, or numerix.where(pred, a, b) to select values"
            )
        return TracingError(
            f"{head}; return it from the defn and read it outside, or print it at run time "
            f"with numerix.print_value(t)"
        )

    def _leak_error(self, op: str) -> TracingError:
        return TracingError(
            f"{op}: a traced tensor was used after its numerix.jit/defn trace finished (it "
            f"escaped through a global, an attribute or a closure); return it from the "
            f"function instead"
        )


_IDENTITY: dict[str, tuple[int, bool]] = {
    "add": (0, True),
    "subtract": (0, False),
    "multiply": (1, True),
    "divide": (1, False),
}


def _is_const(x: Any, unit: int) -> bool:
    if not isinstance(x, Node) or x.op != CONSTANT:
        return False
    t = x.value
    return bool(np.all(t.backend.to_numpy(t) == unit))


def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


# ---------------------------------------------------------------- recording a function

_active: ContextVar[ExprBackend | None] = ContextVar("numerix_active_trace", default=None)


def active_trace() -> ExprBackend | None:
    """The trace being recorded here, or None when code runs eagerly."""
    return _active.get()


class PlainTree:
    """The structure of arguments or a result made of Python's own containers, read and
    rebuilt without optree (6 ms to import, on a jitted function's first call): ``kind``
    ``"args"``, ``n`` leaves passed positionally (``(args, {})``); ``"leaf"``, one bare
    leaf; ``"tuple"``, a tuple of ``n`` leaves; ``"nested"``, tuples, lists, dicts (their
    keys all str or all int) and None nested in any way (``spec``, see
    :func:`plain_flatten`). As optree's, the leaves come in a dict's sorted key order,
    two structures are equal whatever the order of their dicts' keys (``orders``, apart
    from ``spec``), and a value is rebuilt in its own. Any other structure is an optree
    tree structure."""

    __slots__ = ("_hash", "_rebuild", "kind", "n", "orders", "spec")

    def __init__(self, kind: str, n: int, spec: Any = None, orders: tuple[Any, ...] = ()) -> None:
        self.kind = kind
        self.n = n
        self.spec = spec
        self.orders = orders
        self._hash = hash((PlainTree, kind, n, spec))
        self._rebuild: Callable[[Sequence[Any]], Any] | bool = False

    def rebuild(self, leaves: Sequence[Any]) -> Any:
        """The "nested" structure holding ``leaves`` (dicts in their own key order). The
        first time by walking the spec; from the second on by a function written for
        this structure (one expression indexing the leaves, where the walk costs a call
        per container): a structure rebuilt once (a trace's own) does not pay for
        writing one (about 30 µs)."""
        fn = self._rebuild
        if fn is False:
            self._rebuild = True
            return _rebuild(self.spec, iter(leaves), iter(self.orders))
        if fn is True:
            fn = self._rebuild = _rebuilder(self.spec, self.orders, self.n)
        return fn(leaves)

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is PlainTree
            and other.kind == self.kind
            and other.n == self.n
            and other.spec == self.spec
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"PlainTree({self.kind!r}, {self.n})"


class _NotPlain(Exception):
    """A value :func:`plain_flatten` leaves to optree."""


_LEAF = "*"
_NONE = ("none",)
#: the leaves' own types (numpy scalars are checked apart: they are many types)
_LEAVES = frozenset({Tensor, *NUMBER_DTYPES, np.ndarray})


def plain_flatten(tree: Any, leaf: type | None = None) -> tuple[list[Any], PlainTree] | None:
    """The leaves and :class:`PlainTree` of ``tree`` when it is made of tuples, lists,
    dicts (keys all str or all int) and None around tensors, Python numbers, numpy
    values (and instances of ``leaf``); None for anything else (optree's to flatten).
    The leaves come in optree's order."""
    leaves: list[Any] = []
    orders: list[Any] = []
    try:
        spec = _plain(tree, leaves, leaf, orders)
    except _NotPlain:
        return None
    return leaves, PlainTree("nested", len(leaves), spec, tuple(orders))


def _plain(x: Any, leaves: list[Any], leaf: type | None, orders: list[Any]) -> Any:
    """``x``'s spec: ``"*"`` a leaf, ``("none",)``, ``("tuple"|"list", children)``,
    ``("dict", ((key, child), ...))`` by sorted key; each dict's own key order goes to
    ``orders``, in the order the dicts are met."""
    t = type(x)
    if t in _LEAVES or t is leaf or isinstance(x, np.generic):
        leaves.append(x)
        return _LEAF
    if x is None:
        return _NONE
    if t is tuple or t is list:
        children = []
        for v in x:
            if type(v) in _LEAVES:
                leaves.append(v)
                children.append(_LEAF)
            else:
                children.append(_plain(v, leaves, leaf, orders))
        return ("tuple" if t is tuple else "list", tuple(children))
    if t is dict:
        keys = tuple(x)
        if not (all(type(k) is str for k in keys) or all(type(k) is int for k in keys)):
            raise _NotPlain
        orders.append(keys)
        return ("dict", tuple((k, _plain(x[k], leaves, leaf, orders)) for k in sorted(keys)))
    raise _NotPlain


def plain_spec(skeleton: Any, leaf: type) -> PlainTree | None:
    """The :class:`PlainTree` of a structure whose leaves are the instances of ``leaf``,
    or None (a structure :func:`plain_flatten` leaves to optree)."""
    flat = plain_flatten(skeleton, leaf)
    if flat is None or any(type(x) is not leaf for x in flat[0]):
        return None
    return flat[1]


def _rebuild(spec: Any, leaves: Any, orders: Any) -> Any:
    if spec == _LEAF:
        return next(leaves)
    tag = spec[0]
    if tag == "none":
        return None
    if tag == "tuple":
        return tuple(_rebuild(c, leaves, orders) for c in spec[1])
    if tag == "list":
        return [_rebuild(c, leaves, orders) for c in spec[1]]
    own = next(orders)  # met before the dict's children, as _plain met it
    values = {k: _rebuild(c, leaves, orders) for k, c in spec[1]}  # in sorted key order
    return {k: values[k] for k in own}


#: above this many leaves a structure is rebuilt by walking its spec (the expression
#: :func:`_rebuilder` writes grows with the tree)
_WRITTEN_LIMIT = 256


def _rebuilder(spec: Any, orders: tuple[Any, ...], n: int) -> Callable[[Sequence[Any]], Any]:
    """A function rebuilding the structure ``spec`` (with the dicts' own key orders
    ``orders``) from its ``n`` leaves."""
    if n > _WRITTEN_LIMIT:
        return lambda leaves: _rebuild(spec, iter(leaves), iter(orders))
    index = iter(range(n))
    own = iter(orders)

    def code(sp: Any) -> str:
        if sp == _LEAF:
            return f"L[{next(index)}]"
        tag = sp[0]
        if tag == "none":
            return "None"
        if tag in ("tuple", "list"):
            parts = [code(c) for c in sp[1]]
            if tag == "list":
                return "[" + ", ".join(parts) + "]"
            return "(" + "".join(p + ", " for p in parts) + ")"
        keys = next(own)  # met before the dict's children, as _plain met it
        values = {k: code(c) for k, c in sp[1]}  # the leaves in sorted key order
        return "{" + ", ".join(f"{k!r}: {values[k]}" for k in keys) + "}"

    fn: Callable[[Sequence[Any]], Any] = eval(f"lambda L: {code(spec)}", {})
    return fn


def num_leaves(tree: Any) -> int:
    """How many leaves structure ``tree`` (a :class:`PlainTree` or optree's) holds."""
    return tree.n if type(tree) is PlainTree else int(tree.num_leaves)


def _is_leaf(x: Any) -> bool:
    t = type(x)
    return t is Tensor or t in NUMBER_DTYPES


def unflatten(tree: Any, leaves: Sequence[Any]) -> Any:
    """The value of structure ``tree`` (a :class:`PlainTree` or an optree tree
    structure) holding ``leaves``."""
    if type(tree) is PlainTree:
        if tree.kind == "leaf":
            return leaves[0]
        if tree.kind == "tuple":
            return tuple(leaves)
        if tree.kind == "nested":
            return tree.rebuild(leaves)
        return (tuple(leaves), {})
    import optree

    return optree.tree_unflatten(tree, leaves)


def tree_flatten(tree: Any) -> tuple[list[Any], Any]:
    """The leaves and structure of ``tree``: a :class:`PlainTree` for Python's own
    containers around tensors, numbers and numpy values (no optree), else optree's
    (``optree.tree_flatten``); the same leaves, in the same order, either way."""
    flat = plain_flatten(tree)
    if flat is not None:
        return flat
    import optree

    leaves, structure = optree.tree_flatten(tree)
    return leaves, structure


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """``tree`` with ``fn`` applied to each leaf (:func:`tree_flatten`'s)."""
    leaves, structure = tree_flatten(tree)
    return unflatten(structure, [fn(x) for x in leaves])


def trace_flat(
    fn: Callable[..., Any],
    specs: Sequence[tuple[tuple[int, ...], DType]],
    in_tree: Any,
    *,
    parent: ExprBackend | None = None,
    op: str = "trace",
    plain: bool = False,
) -> Graph:
    """Trace ``fn`` on parameters of ``specs``; ``in_tree`` rebuilds ``(args, kwargs)``
    from them (None or a :class:`PlainTree`: call ``fn(*parameters)``). ``plain``: a
    result that is one leaf or a tuple of leaves gets a :class:`PlainTree` as the
    graph's ``out_tree`` (what jit reads, with :func:`unflatten`), else an optree one."""
    be = ExprBackend(parent, op=op)
    params = [be.parameter(s, d) for s, d in specs]
    token = _active.set(be)
    try:
        if in_tree is None or (type(in_tree) is PlainTree and in_tree.kind == "args"):
            result = fn(*params)
        else:
            args, kwargs = unflatten(in_tree, params)
            result = fn(*args, **kwargs)
        out_tree: Any
        flat = None
        if plain and _is_leaf(result):
            leaves, out_tree = [result], PlainTree("leaf", 1)
        elif plain and type(result) is tuple and all(_is_leaf(x) for x in result):
            leaves, out_tree = list(result), PlainTree("tuple", len(result))
        elif plain and (flat := plain_flatten(result)) is not None:
            leaves, out_tree = flat
        else:
            import optree

            leaves, out_tree = optree.tree_flatten(result)
        outputs = [be.output_node(x) for x in leaves]
    finally:
        _active.reset(token)
        be.active = False
    return be.finish(outputs, out_tree)
