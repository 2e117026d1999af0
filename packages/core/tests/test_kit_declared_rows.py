"""An element-wise primitive whose declaration names its numpy oracle is checked by the
conformance kit without a row of its own (numerix.testing.suite.elementwise.declared_rows)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import numerix as nx
from numerix.primitives import REGISTRY
from numerix.testing.suite import elementwise as kit
from numerix.testing.suite import elementwise_more as more_kit


def _declared(name: str, category: str, arity: int, **extra: object) -> SimpleNamespace:
    return SimpleNamespace(
        name=name, family="elementwise",
        extra={"category": category, "arity": arity, **extra},
    )  # fmt: skip


def test_a_declared_oracle_becomes_a_row_with_the_kits_own_dtype_rule() -> None:
    unary, binary = kit.declared_rows(
        [
            _declared("exp", "inexact", 1, oracle="exp", sample={"positive": True}),
            _declared("maximum", "order", 2, oracle="fmax"),
            _declared("sin", "inexact", 1),  # no oracle: its row is written by hand
            SimpleNamespace(name="sum", family="reduction", extra={"oracle": "sum"}),
        ]
    )
    (u,) = unary
    assert (u.name, u.fn, u.ref, u.rule, u.kw) == ("exp", nx.exp, np.exp, kit.inexact,
                                                   {"positive": True})  # fmt: skip
    (b,) = binary
    assert (b.name, b.fn, b.ref, b.rule) == ("maximum", nx.maximum, np.fmax, kit.order)
    assert (b.lhs, b.rhs) == ({}, {})
    # the kit's expectation, not the core's table: integers compute in float32
    assert u.rule(nx.int32) == (nx.float32, nx.float32)


def test_a_declaration_draws_each_operand_and_routes_its_check() -> None:
    def ref(x: np.ndarray) -> np.ndarray:
        return x

    unary, binary = kit.declared_rows(
        [
            _declared("pow", "numeric", 2, oracle="power", lhs={"positive": True},
                      rhs={"small": True}),
            _declared("less", "order", 2, oracle="less", sample={"coarse": True}),
            _declared("sigmoid", "real_inexact", 1, oracle=ref),
            # checked by elementwise_more: over a domain, or with NaN and infinities
            _declared("sin", "inexact", 1, oracle="sin", domain="any"),
            _declared("isnan", "classify", 1, oracle="isnan"),
        ]
    )  # fmt: skip
    (u,) = unary
    assert (u.name, u.ref, u.rule, u.kw) == ("sigmoid", ref, kit.real_inexact, {})
    p, le = binary
    assert (p.ref, p.lhs, p.rhs) == (np.power, {"positive": True}, {"small": True})
    assert (le.lhs, le.rhs) == ({"coarse": True}, {"coarse": True})


def test_a_category_the_kit_cannot_check_is_named() -> None:
    with pytest.raises(LookupError, match=r"real_part.*write its row by hand"):
        kit.declared_rows([_declared("real", "real_part", 1, oracle="real")])


#: The element-wise primitives declared with no numpy oracle, each checked by tests of
#: its own in the kit instead.
WITHOUT_ORACLE = {
    "select": "three operands and a bool condition: test_where_*",
    "as_type": "a cast between two dtypes, numpy's except float to int: test_astype*",
    "bitcast": "a reinterpretation of bits between two dtypes: test_bitcast*",
    "erf_inv": "numpy has no inverse erf: the round trip through erf, test_erf_inv*",
    "real": "the public op takes every dtype, the primitive complex only: test_real_imag_conj*",
    "imag": "the public op takes every dtype, the primitive complex only: test_real_imag_conj*",
    "conj": "the public op takes every dtype, the primitive complex only: test_real_imag_conj*",
    "bitwise_left_shift": "numpy's shifts differ past the bit width: Python ints, test_shift_*",
    "bitwise_right_shift": "numpy's shifts differ past the bit width: Python ints, test_shift_*",
    "population_count": "Python ints' bit patterns, with count_leading_zeros: test_bit_counts*",
    "count_leading_zeros": "numpy counts no leading zeros: Python ints, test_bit_counts*",
}


def test_every_elementwise_primitive_declares_an_oracle_or_says_why_not() -> None:
    elementwise = {p.name for p in REGISTRY if p.family == "elementwise"}
    with_oracle = {p.name for p in REGISTRY if kit.kit_family(p) is not None}
    assert elementwise - with_oracle == set(WITHOUT_ORACLE)
    assert not with_oracle & set(WITHOUT_ORACLE)


def test_every_declaration_names_its_category_and_no_op_has_two_rows() -> None:
    declared = [p for p in REGISTRY if p.family == "elementwise" and "table" in p.extra]
    assert all(p.extra["category"] for p in declared)
    with_oracle = {p.name for p in declared if "oracle" in p.extra}
    # each is checked once, from its declaration: by a row here, or by elementwise_more
    rows = {op.name for op in kit._DECLARED[0] + kit._DECLARED[1]}
    more = {*more_kit.UNARY_INEXACT, *more_kit.REAL_ONLY, *more_kit.BINARY_INEXACT,
            *more_kit.CLASSIFY}  # fmt: skip
    assert rows | more == with_oracle
    assert not rows & more
    # a row written by hand beside a generated one would check the op twice
    names = [op.name for op in kit.UNARY + kit.BINARY]
    assert len(names) == len(set(names))
    assert not set(names) & more
