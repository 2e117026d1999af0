"""Derivative rules against central finite differences.

For each differentiable primitive, a public op that binds it is called eagerly on the
backend under test, with a spy on the backend's method recording the primitive's
inputs, parameters and output; the primitive's rule (``Primitive.vjp``) is then
applied to them on that backend, with a random cotangent ``c``. Its result is checked
against central differences of the same op computed on ``binary`` in float64 (or
complex128), along a random direction ``v`` of the inputs::

    <c, (f(x + eps v) - f(x - eps v)) / (2 eps)>  ==  sum_i <rule_i, v_i>

with ``<a, b> = Re(sum(a * b))``, no conjugation: JAX's convention, under which a rule
is the transpose of the derivative's linear map (for complex inputs too). Each case
costs two evaluations of ``f`` and one of the rule. The inputs are float64 (complex128)
on a backend that claims them, float32 (complex64) otherwise. Every cotangent must have
its input's shape and dtype; inputs that carry no derivative (a ``where`` condition,
dynamic-slice starts, a cast from an integer) must get ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import numerix as nx
from _numerix_pytestplugin import NOT_CLAIMED
from numerix import dtypes, ops
from numerix.primitives import REGISTRY
from numerix.testing.tolerances import tolerance

# ---------------------------------------------------------------- input domains
# each draws values of a shape where the op is smooth (away from its kinks and poles)


def _any(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(-2.0, 2.0, shape)


def _pos(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(0.5, 2.0, shape)


def _unit(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(-0.8, 0.8, shape)


def _above1(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(1.5, 3.0, shape)


def _nonzero(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(0.3, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def _complex(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(-1.5, 1.5, shape) + 1j * rng.uniform(-1.5, 1.5, shape)


def _with_zeros(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    # prod's rule must be exact with zeros: one zero in a row, two in another
    a = rng.uniform(-2.0, 2.0, shape)
    a[0, 1] = 0.0
    a[1, 0] = a[1, 2] = 0.0
    return a


# ---------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    """One check of ``prim``'s rule: ``fn(*tensors)`` binds ``prim`` once, with the
    tensors (drawn of ``shapes`` from ``domains``) as the primitive's inputs ``wrt``."""

    label: str
    prim: str
    fn: Callable[..., Any]
    shapes: tuple[tuple[int, ...], ...]
    domains: tuple[Callable[[np.random.Generator, tuple[int, ...]], np.ndarray], ...]
    wrt: tuple[int, ...] | None = None  # None: the primitive's inputs are fn's arguments
    complex: bool = False
    #: the function differenced on binary, when not ``fn``: a cast to a narrower dtype
    #: would round the differences away, so casts difference the identity
    reference: Callable[..., Any] | None = None

    @property
    def name(self) -> str:
        # the kit's report and grouping key (the plugin reads an ``op`` parameter's name)
        return f"vjp_{self.prim}"

    def __str__(self) -> str:
        return self.label


def _on(a: Any, like: nx.Tensor) -> nx.Tensor:
    """A constant of the case (a condition, a start) on ``like``'s backend."""
    return nx.tensor(a, backend=like.backend)


def _shape_id(shapes: tuple[tuple[int, ...], ...]) -> str:
    return ",".join("x".join(map(str, s)) or "0d" for s in shapes)


def _unary(prim: str, domain: Any = _any, shapes: Any = ((2, 3),)) -> list[Case]:
    fn = getattr(nx, prim)
    return [Case(f"{prim}-{_shape_id((s,))}", prim, fn, (s,), (domain,)) for s in shapes]


# every way of broadcasting, 0-d and empty for the ops that share the undoing of
# broadcasting (_unbroadcast) and for multiply; one shape broadcasting both ways for the
# others (each compiles its kernels on a compiling backend: the kit's time)
BINARY_SHAPES = [((), ()), ((2, 3), (2, 3)), ((3, 1), (1, 4)), ((2, 3), ()), ((1,), (2, 3)),
                 ((0, 3), (1, 3))]  # fmt: skip
BOTH_WAYS = [((2, 1), (1, 3))]


def _binary(prim: str, d1: Any = _any, d2: Any = _any, shapes: Any = BOTH_WAYS) -> list[Case]:
    f = getattr(nx, prim)
    return [Case(f"{prim}-{_shape_id(s)}", prim, f, s, (d1, d2)) for s in shapes]


# remainder jumps where x1 / x2 is an integer: these keep |x1 / x2| in [1.13, 1.6]
def _dividend(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(1.25, 1.6, shape) * rng.choice([-1.0, 1.0], shape)


def _divisor(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(1.0, 1.1, shape) * rng.choice([-1.0, 1.0], shape)


_NARROWER = {dtypes.float64: dtypes.float32, dtypes.float32: dtypes.float16, dtypes.complex128: dtypes.complex64,
             dtypes.complex64: dtypes.complex128}  # fmt: skip


def _identity(x: nx.Tensor) -> nx.Tensor:
    return x


def _to_complex(x: nx.Tensor) -> nx.Tensor:
    return x.astype(dtypes.complex128 if x.dtype is dtypes.float64 else dtypes.complex64)


def _where(shape: tuple[int, ...]) -> Callable[..., Any]:
    pred = np.arange(int(np.prod(shape))).reshape(shape) % 2 == 0
    return lambda a, b: nx.where(_on(pred, a), a, b)


def _starts(x: nx.Tensor, values: tuple[int, ...]) -> list[nx.Tensor]:
    # tensor starts bind dynamic_slice / put_slice (ints become a static slice)
    return [_on(np.int64(v), x) for v in values]


CASES: list[Case] = [
    # element-wise, unary
    *_unary("negative", shapes=((), (0,))), *_unary("exp", shapes=((), (0,), (2, 3))),
    *_unary("log", _pos),
    *_unary("abs", _nonzero), *_unary("sqrt", _pos), *_unary("rsqrt", _pos),
    *_unary("cbrt", _nonzero), *_unary("expm1"), *_unary("log1p", _pos), *_unary("tanh"),
    *_unary("sigmoid"), *_unary("sin"), *_unary("cos"), *_unary("tan", _unit),
    *_unary("asin", _unit), *_unary("acos", _unit), *_unary("atan"), *_unary("sinh"),
    *_unary("cosh"), *_unary("asinh"), *_unary("acosh", _above1), *_unary("atanh", _unit),
    *_unary("erf"), *_unary("erfc"), *_unary("erf_inv", _unit),
    # element-wise, binary (every broadcasting direction, 0-d, empty)
    *_binary("add", shapes=BINARY_SHAPES), *_binary("subtract", shapes=BINARY_SHAPES),
    *_binary("multiply", shapes=BINARY_SHAPES),
    *_binary("divide", _any, _nonzero), *_binary("maximum"), *_binary("minimum"),
    *_binary("pow", _pos, _any), *_binary("atan2", _nonzero, _nonzero),
    *_binary("remainder", _dividend, _divisor),
    Case("select-2x3", "select", _where((2, 3)), ((2, 3), (2, 3)), (_any, _any), (1, 2)),
    Case("select-broadcast", "select", _where((2, 3)), ((1, 3), ()), (_any, _any), (1, 2)),
    Case("select-empty", "select", _where((0, 2)), ((0, 2), (1, 2)), (_any, _any), (1, 2)),
    Case("as_type-narrower", "as_type", lambda x: x.astype(_NARROWER[x.dtype]), ((2, 3),),
         (_any,), reference=_identity),
    # reductions
    Case("sum-all", "reduce", nx.sum, ((3, 4),), (_any,)),
    Case("sum-0d", "reduce", nx.sum, ((),), (_any,)),
    Case("sum-axes", "reduce", lambda x: nx.sum(x, axis=(0, 2)), ((2, 3, 4),), (_any,)),
    Case("sum-keepdims", "reduce", lambda x: nx.sum(x, axis=1, keepdims=True), ((2, 3),), (_any,)),
    Case("sum-empty", "reduce", lambda x: nx.sum(x, axis=0), ((0, 3),), (_any,)),
    Case("prod-axis", "reduce", lambda x: nx.prod(x, axis=1), ((2, 3),), (_any,)),
    Case("prod-zeros", "reduce", lambda x: nx.prod(x, axis=1, keepdims=True), ((3, 4),),
         (_with_zeros,)),
    Case("prod-empty", "reduce", lambda x: nx.prod(x, axis=1), ((2, 0),), (_any,)),
    Case("max-all", "reduce", nx.max, ((3, 4),), (_any,)),
    Case("max-axis", "reduce", lambda x: nx.max(x, axis=0, keepdims=True), ((3, 4),), (_any,)),
    Case("min-axes", "reduce", lambda x: nx.min(x, axis=(0, 2)), ((2, 3, 4),), (_any,)),
    Case("min-0d", "reduce", nx.min, ((),), (_any,)),
    # shape
    Case("reshape", "reshape", lambda x: nx.reshape(x, (3, 2)), ((2, 3),), (_any,)),
    Case("reshape-0d", "reshape", lambda x: nx.reshape(x, (1, 1)), ((),), (_any,)),
    Case("reshape-empty", "reshape", lambda x: nx.reshape(x, (3, 0)), ((0, 3),), (_any,)),
    Case("transpose", "transpose", lambda x: nx.transpose(x, (2, 0, 1)), ((2, 3, 4),), (_any,)),
    Case("broadcast", "broadcast", lambda x: nx.broadcast_to(x, (2, 3, 4)), ((3, 1),), (_any,)),
    Case("broadcast-0d", "broadcast", lambda x: nx.broadcast_to(x, (2,)), ((),), (_any,)),
    Case("broadcast-empty", "broadcast", lambda x: nx.broadcast_to(x, (0, 2)), ((1,),), (_any,)),
    Case("concatenate", "concatenate", lambda a, b, c: nx.concatenate([a, b, c], axis=1),
         ((2, 3), (2, 0), (2, 1)), (_any, _any, _any)),
    Case("slice-strided", "slice", lambda x: x[1:7:3, :, 2:3], ((8, 3, 4),), (_any,)),
    Case("slice-empty", "slice", lambda x: x[2:2], ((4, 2),), (_any,)),
    Case("reverse", "reverse", lambda x: nx.flip(x, axis=(0, 2)), ((2, 3, 4),), (_any,)),
    Case("pad", "pad", lambda x, v: nx.pad_general(x, [(2, -1, 1), (-1, 0, 2)], value=v),
         ((3, 4), ()), (_any, _any)),
    Case("pad-empty", "pad", lambda x, v: nx.pad_general(x, [(1, 2, 1)], value=v),
         ((0,), ()), (_any, _any)),
    Case("dynamic_slice", "dynamic_slice",
         lambda x: nx.dynamic_slice(x, _starts(x, (1, 7)), (2, 2)), ((4, 3),), (_any,), (0,)),
    Case("put_slice", "put_slice",
         lambda x, u: nx.put_slice(x, _starts(x, (3, -1)), u), ((4, 3), (2, 2)),
         (_any, _any), (0, 1)),
    # dot: contraction and batch axes
    Case("dot-matrix", "dot", nx.matmul, ((3, 4), (4, 5)), (_any, _any)),
    Case("dot-inner", "dot", nx.dot, ((3,), (3,)), (_any, _any)),
    Case("dot-batch", "dot", lambda x, y: nx.dot_general(x, y, ((2,), (1,)), ((0,), (0,))),
         ((2, 3, 4), (2, 4, 5)), (_any, _any)),
    Case("dot-general", "dot", lambda x, y: nx.dot_general(x, y, ((0, 2), (3, 1)), ((1,), (2,))),
         ((4, 2, 3, 5), (7, 3, 2, 4)), (_any, _any)),
    Case("dot-outer", "dot", lambda x, y: nx.dot_general(x, y, ((), ())), ((3,), (2,)),
         (_any, _any)),
    Case("dot-empty", "dot", nx.matmul, ((2, 0), (0, 3)), (_any, _any)),
    # complex inputs (JAX's convention)
    *[Case(f"{p}-complex", p, getattr(nx, p), ((2, 3),), (_complex,), complex=True)
      for p in ("exp", "log", "sqrt", "tanh", "sin", "asinh", "acosh", "abs", "real", "imag",
                "conj", "negative")],
    *[Case(f"{p}-complex", p, getattr(nx, p), ((2, 3), (3,)), (_complex, _complex), complex=True)
      for p in ("multiply", "divide", "add")],
    Case("dot-complex", "dot", nx.matmul, ((2, 3), (3, 2)), (_complex, _complex), complex=True),
    Case("sum-complex", "reduce", lambda x: nx.sum(x, axis=0), ((2, 3),), (_complex,), complex=True),
    Case("as_type-to-complex", "as_type", _to_complex, ((2, 3),), (_any,)),
    Case("as_type-complex", "as_type", lambda x: x.astype(_NARROWER[x.dtype]), ((2, 3),),
         (_complex,), complex=True, reference=_identity),
]  # fmt: skip


def declared_cases(primitives: Any) -> list[Case]:
    """A finite-difference case for each differentiable element-wise primitive whose
    declaration names a numpy oracle (``oracle=``; the element-wise kit makes its rows
    from the same declaration): such a primitive needs no case of its own here. One with
    a case written above (its own domain, shapes or broadcasting) keeps only that one."""
    written = {c.prim for c in CASES}
    out: list[Case] = []
    for p in primitives:
        if p.family != "elementwise" or "oracle" not in p.extra or not p.differentiable:
            continue
        if p.name in written:
            continue
        domain = _pos if p.extra.get("sample", {}).get("positive") else _any
        out += _unary(p.name, domain) if p.extra["arity"] == 1 else _binary(p.name, domain, domain)
    return out


CASES += declared_cases(REGISTRY)

#: Relative error allowed between the rule and the central difference, per dtype of
#: the rule's inputs: float64 is limited by the difference itself (eps = 1e-6: rounding
#: ~1e-10, truncation ~1e-12 of the scale); float32 by the rule's own rounding, summed
#: over the elements. Backends loosen one op with a ``Looser`` for ``"vjp_<name>"``.
FD_RTOL = {
    dtypes.float64: 1e-7,
    dtypes.complex128: 1e-7,
    dtypes.float32: 2e-4,
    dtypes.complex64: 2e-4,
}
EPS = 1e-6


# ---------------------------------------------------------------- the check


@contextmanager
def _spy(name: str) -> Iterator[list[tuple[Any, tuple[Any, ...], dict[str, Any]]]]:
    """Record every call of primitive ``name`` on the default backend."""
    cls = type(nx.get_default_backend())
    original = getattr(cls, name, None)
    if original is None:  # the backend lacks it and the core has no fallback: not claimed
        raise NotImplementedError(f"backend {cls.name!r} does not implement primitive {name!r}")
    calls: list[tuple[Any, tuple[Any, ...], dict[str, Any]]] = []

    def spy(self: Any, out: Any, *inputs: Any, **params: Any) -> Any:
        result = original(self, out, *inputs, **params)
        calls.append((result, inputs, params))
        return result

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cls, name, spy)
        yield calls


def _working(request: pytest.FixtureRequest, kind: str) -> dtypes.DType:
    """The widest dtype of ``kind`` the backend claims (float64, else float32)."""
    claimed = type(nx.get_default_backend()).supported_dtypes
    wide, narrow = (
        (dtypes.complex128, dtypes.complex64) if kind == "c" else (dtypes.float64, dtypes.float32)
    )
    for d in (wide, narrow):
        if claimed is None or d in claimed:
            return d
    request.node.user_properties.append(("numerix", NOT_CLAIMED))
    pytest.skip(f"{NOT_CLAIMED}: backend {nx.get_default_backend()!r} claims neither {wide} "
                f"nor {narrow}")  # fmt: skip


def _pair(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """``Re(sum(a * b))`` and the sum of the magnitudes of its terms (the scale)."""
    prod = np.asarray(a, np.complex128) * np.asarray(b, np.complex128)
    return float(np.sum(prod.real)), float(np.sum(np.abs(prod.real)))


def check_rule(case: Case, dtype: dtypes.DType, seed: int = 0) -> None:
    """Check ``case.prim``'s rule on the default backend, with inputs of ``dtype``."""
    rng = np.random.default_rng(seed)
    host = [np.asarray(dom(rng, s)).astype(dtype.numpy_dtype) for dom, s in
            zip(case.domains, case.shapes)]  # fmt: skip
    args = [nx.tensor(a) for a in host]
    with _spy(case.prim) as calls:
        result = case.fn(*args)
    assert len(calls) == 1, f"{case}: {case.prim} was bound {len(calls)} times, not once"
    out, inputs, params = calls[0]
    assert out.shape == result.shape, f"{case}: {case.prim} is not the op's last step"
    wrt = case.wrt if case.wrt is not None else tuple(range(len(inputs)))
    for i, a in zip(wrt, args):
        assert inputs[i].shape == a.shape, f"{case}: input {i} is {inputs[i].describe()}"

    ct_dtype = out.dtype
    ct_host = rng.uniform(-1.0, 1.0, out.shape)
    if ct_dtype.kind == "c":
        ct_host = ct_host + 1j * rng.uniform(-1.0, 1.0, out.shape)
    cotangent = nx.tensor(np.asarray(ct_host).astype(ct_dtype.numpy_dtype))
    rule = REGISTRY[case.prim].vjp
    assert callable(rule), f"{case.prim} has no derivative rule"
    grads = rule(ops, cotangent, out, *inputs, **params)
    assert isinstance(grads, tuple) and len(grads) == len(inputs), (
        f"{case}: the rule returned {grads!r} for {len(inputs)} inputs"
    )
    for i, (g, x) in enumerate(zip(grads, inputs)):
        if i not in wrt:
            assert g is None, f"{case}: input {i} carries no derivative, got {g!r}"
            continue
        assert type(g) is nx.Tensor, f"{case}: cotangent {i} is {g!r}"
        assert g.shape == x.shape and g.dtype is x.dtype, (
            f"{case}: cotangent {i} is {g.describe()}, input is {x.describe()}"
        )
        assert g.backend is x.backend, (g.describe(), x.describe())

    # central differences of the op on binary, in float64 / complex128, at the same values
    wide = dtypes.complex128 if any(a.dtype.kind == "c" for a in host) else dtypes.float64
    xs = [a.astype(wide.numpy_dtype) for a in host]
    vs = [rng.uniform(-1.0, 1.0, a.shape).astype(a.dtype) for a in xs]
    if wide.kind == "c":
        vs = [v + 1j * rng.uniform(-1.0, 1.0, v.shape) for v in vs]

    def at(sign: float) -> np.ndarray:
        moved = [nx.tensor(x + sign * EPS * v, backend="binary") for x, v in zip(xs, vs)]
        return (case.reference or case.fn)(*moved).to_numpy().astype(np.complex128)

    fd = (at(1.0) - at(-1.0)) / (2 * EPS)
    lhs, lhs_scale = _pair(ct_host, fd)
    rhs, rhs_scale = 0.0, 0.0
    for i, v in zip(wrt, vs):
        term, scale = _pair(grads[i].to_numpy(), v)
        rhs, rhs_scale = rhs + term, rhs_scale + scale
    backend = nx.get_default_backend().name
    rtol = max(FD_RTOL[dtype], tolerance(f"vjp_{case.prim}", dtype, backend)[0])
    scale = max(lhs_scale, rhs_scale, 1.0)
    assert abs(lhs - rhs) <= rtol * scale, (
        f"{case} ({dtype}): <cotangent, finite difference> = {lhs!r}, but the rule gives "
        f"{rhs!r} (difference {abs(lhs - rhs):.3g}, allowed {rtol * scale:.3g})"
    )


@pytest.mark.parametrize("op", CASES, ids=str)
def test_vjp_rule_matches_finite_differences(op: Case, request: pytest.FixtureRequest) -> None:
    check_rule(op, _working(request, "c" if op.complex else "f"))


# ---------------------------------------------------------------- conventions


def _rule_of(prim: str, fn: Callable[..., Any], *args: nx.Tensor) -> tuple[Any, ...]:
    with _spy(prim) as calls:
        fn(*args)
    out, inputs, params = calls[-1]
    ones = nx.ones(out.shape, dtype=out.dtype)
    rule = REGISTRY[prim].vjp
    return tuple(rule(ops, ones, out, *inputs, **params))


def test_vjp_ties_share_the_cotangent(request: pytest.FixtureRequest) -> None:
    # at a tie max/min have no derivative; like jax.grad, the rules give each tied
    # position an equal share (jax.grad(jnp.max)([1, 3, 3, 2]) is [0, .5, .5, 0])
    d = _working(request, "f")
    x = nx.tensor(np.array([1.0, 3.0, 3.0, 2.0]).astype(d.numpy_dtype))
    (g,) = _rule_of("reduce", nx.max, x)
    np.testing.assert_array_equal(g.to_numpy(), np.array([0.0, 0.5, 0.5, 0.0], d.numpy_dtype))
    (g,) = _rule_of("reduce", lambda t: nx.min(-t), x)
    np.testing.assert_array_equal(g.to_numpy(), np.array([0.0, 0.5, 0.5, 0.0], d.numpy_dtype))
    y = nx.tensor(np.array([3.0, 0.0, 1.0]).astype(d.numpy_dtype))
    g1, g2 = _rule_of("maximum", nx.maximum, x[1:], y)
    np.testing.assert_array_equal(g1.to_numpy(), np.array([0.5, 1.0, 1.0], d.numpy_dtype))
    np.testing.assert_array_equal(g2.to_numpy(), np.array([0.5, 0.0, 0.0], d.numpy_dtype))


def test_vjp_of_casts_to_integers_is_none(request: pytest.FixtureRequest) -> None:
    d = _working(request, "f")
    x = nx.tensor(np.array([1.5, -2.5]).astype(d.numpy_dtype))
    assert _rule_of("as_type", lambda t: t.astype(nx.int32), x) == (None,)
    i = nx.tensor(np.array([1, 2], np.int32))
    assert _rule_of("as_type", lambda t: t.astype(d), i) == (None,)


# ---------------------------------------------------------------- through numerix.grad
# A few composites differentiated by the transform under every compiler serving the
# backend, against central differences of the function on binary.


def _mlp(x: nx.Tensor, w: nx.Tensor, b: nx.Tensor) -> nx.Tensor:
    h = nx.tanh(x @ w + b)
    return -nx.sum(nx.log_softmax(h, axis=-1)[:, 0]) + 0.1 * nx.sum(w * w)


def _piecewise(x: nx.Tensor, y: nx.Tensor) -> nx.Tensor:
    z = nx.where(x > 0, nx.sqrt(nx.abs(x) + 1.0), nx.exp(x)) * nx.maximum(x, y)
    return nx.sum(z / (1.0 + y * y) + nx.minimum(x, 0.5) ** 3)


def _reductions(x: nx.Tensor) -> nx.Tensor:
    return nx.sum(nx.prod(x, axis=1) * nx.max(x, axis=1)) + nx.min(x) * nx.mean(x)


def _shapes(x: nx.Tensor, y: nx.Tensor) -> nx.Tensor:
    z = nx.concatenate([x[::2], nx.flip(x, axis=0)], axis=0)  # (6, 3)
    t = nx.transpose(nx.reshape(z, (3, 2, 3)), (2, 0, 1)) * nx.broadcast_to(y, (3, 3, 2))
    return nx.sum(nx.sin(t)) + nx.sum(nx.pad_general(x, [(1, -1, 1), (0, 2, 0)], value=0.5) ** 2)


def _functions(x: nx.Tensor, y: nx.Tensor) -> nx.Tensor:
    # the rules the other composites leave out, traced: dynamic slices, casts, more
    # element-wise functions
    u = nx.dynamic_slice(x, _starts(x, (1, 0)), (2, 3))
    x = nx.put_slice(x, _starts(x, (0, 2)), nx.sigmoid(u[:, :1]) * nx.cbrt(y[:2, None] + 3.0))
    a = nx.atan2(x, y) + nx.remainder(nx.abs(x) + 1.3, 1.1) + nx.erf_inv(nx.tanh(x) * 0.5)
    b = nx.acosh(x * x + 2.0) * nx.expm1(y * 0.3) + nx.log1p(x * x) * nx.rsqrt(y * y + 1.0)
    c = nx.cosh(x * 0.5) - nx.sinh(y * 0.2) * nx.erfc(x) + nx.atanh(nx.sin(x) * 0.5)
    d = nx.real(_to_complex(a * b)) + nx.acos(nx.cos(c) * 0.9)
    return nx.sum(d) + nx.sum(nx.asin(nx.tan(x * 0.3)) * nx.atan(y) + nx.negative(x) / y)


def _complex_abs(z: nx.Tensor) -> nx.Tensor:
    return nx.sum(nx.abs(z * z + 1.0) + nx.real(nx.exp(z) * nx.conj(z)))


@dataclass(frozen=True)
class Composite:
    label: str
    fn: Callable[..., Any]
    shapes: tuple[tuple[int, ...], ...]
    complex: bool = False

    def __str__(self) -> str:
        return self.label


COMPOSITES = [
    Composite("mlp", _mlp, ((4, 3), (3, 5), (5,))),
    Composite("piecewise", _piecewise, ((2, 3), (3,))),
    Composite("reductions", _reductions, ((3, 4),)),
    Composite("shapes", _shapes, ((4, 3), (2,))),
    Composite("functions", _functions, ((4, 3), (3,))),
    Composite("complex", _complex_abs, ((2, 3),), complex=True),
]


def _draw_composite(
    case: Composite, dtype: dtypes.DType, rng: np.random.Generator
) -> list[np.ndarray]:
    dom = _complex if case.complex else _nonzero
    return [np.asarray(dom(rng, s)).astype(dtype.numpy_dtype) for s in case.shapes]


def _fd_directional(
    fn: Callable[..., Any], xs: list[np.ndarray], vs: list[np.ndarray]
) -> np.ndarray:
    def at(sign: float) -> np.ndarray:
        moved = [nx.tensor(x + sign * EPS * v, backend="binary") for x, v in zip(xs, vs)]
        return np.asarray(_host(fn(*moved)))

    return (at(1.0) - at(-1.0)) / (2 * EPS)


def _host(t: Any) -> Any:
    if isinstance(t, (tuple, list)):
        return [_host(x) for x in t]
    return t.to_numpy().astype(np.complex128)


@pytest.mark.parametrize("case", COMPOSITES, ids=str)
def test_grad_of_composites_under_every_compiler(
    case: Composite, request: pytest.FixtureRequest
) -> None:
    from numerix.defn.compilers import compilers_serving

    dtype = _working(request, "c" if case.complex else "f")
    rng = np.random.default_rng(3)
    host = _draw_composite(case, dtype, rng)
    args = [nx.tensor(a) for a in host]
    wide = dtypes.complex128 if case.complex else dtypes.float64
    xs = [a.astype(wide.numpy_dtype) for a in host]
    vs = [rng.uniform(-1.0, 1.0, a.shape) for a in xs]
    if case.complex:
        vs = [v + 1j * rng.uniform(-1.0, 1.0, v.shape) for v in vs]
    want = float(np.real(_fd_directional(case.fn, xs, vs)))
    argnums = tuple(range(len(args)))
    backend_name = nx.get_default_backend().name
    for name in compilers_serving(nx.get_default_backend()):
        grads = nx.jit(nx.grad(case.fn, argnums=argnums), compiler=name)(*args)
        assert len(grads) == len(args)
        got, scale = 0.0, 0.0
        for g, a, v in zip(grads, args, vs):
            assert g.shape == a.shape and g.dtype is a.dtype and g.backend is a.backend, (
                f"{case} under {name}: gradient {g.describe()} of {a.describe()}"
            )
            term, s = _pair(g.to_numpy(), v)
            got, scale = got + term, scale + s
        rtol = max(FD_RTOL[dtype], tolerance("vjp_composite", dtype, backend_name)[0])
        assert abs(got - want) <= rtol * max(scale, abs(want), 1.0), (
            f"{case} under {name} ({dtype}): <grad, v> = {got!r}, finite differences give {want!r}"
        )


def test_grad_of_grad_under_every_compiler(request: pytest.FixtureRequest) -> None:
    # a Hessian-vector product: the backward pass differentiated again
    from numerix.defn.compilers import compilers_serving

    dtype = _working(request, "f")
    rng = np.random.default_rng(4)
    x = _nonzero(rng, (2, 3)).astype(dtype.numpy_dtype)
    y = _any(rng, (3,)).astype(dtype.numpy_dtype)
    v = rng.uniform(-1.0, 1.0, x.shape)

    def f(a: nx.Tensor) -> nx.Tensor:
        return _piecewise(a, nx.tensor(y, backend=a.backend)) + nx.sum(nx.sin(a) * a)

    def hvp(a: nx.Tensor) -> nx.Tensor:
        return nx.grad(lambda b: nx.sum(nx.grad(f)(b) * nx.tensor(v, backend=b.backend)))(a)

    want = _fd_directional(nx.grad(f), [x.astype(np.float64)], [v])
    backend_name = nx.get_default_backend().name
    for name in compilers_serving(nx.get_default_backend()):
        got = nx.jit(hvp, compiler=name)(nx.tensor(x))
        assert got.shape == x.shape and got.dtype is dtype, got.describe()
        rtol = max(FD_RTOL[dtype], tolerance("vjp_composite", dtype, backend_name)[0])
        np.testing.assert_allclose(
            got.to_numpy(), want.real, rtol=rtol * 10, atol=rtol * 10 * np.abs(want).max(),
            err_msg=f"grad of grad under {name}",
        )  # fmt: skip
