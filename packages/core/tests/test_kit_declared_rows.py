"""An element-wise primitive whose declaration names its numpy oracle is checked by the
conformance kit without a row of its own (numerix.testing.suite.elementwise.declared_rows)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import numerix as nx
from numerix.primitives import REGISTRY
from numerix.testing.suite import elementwise as kit


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
    # the kit's expectation, not the core's table: integers compute in float32
    assert u.rule(nx.int32) == (nx.float32, nx.float32)


def test_a_category_the_kit_cannot_check_is_named() -> None:
    with pytest.raises(LookupError, match=r"real_part.*write its row by hand"):
        kit.declared_rows([_declared("real", "real_part", 1, oracle="real")])


def test_every_declaration_names_its_category_and_no_op_has_two_rows() -> None:
    declared = [p for p in REGISTRY if p.family == "elementwise" and "table" in p.extra]
    assert all(p.extra["category"] for p in declared)
    with_oracle = {p.name for p in declared if "oracle" in p.extra}
    assert {op.name for op in kit._DECLARED[0] + kit._DECLARED[1]} == with_oracle
    # a row written by hand beside a generated one would check the op twice
    rows = [op.name for op in kit.UNARY + kit.BINARY]
    assert len(rows) == len(set(rows))
