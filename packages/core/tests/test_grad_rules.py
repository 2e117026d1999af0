"""The registry's derivative rules: every primitive has one or is declared without a
derivative, every rule takes the primitive's inputs and parameters, and the conformance
kit checks every rule of the families it covers against finite differences."""

from __future__ import annotations

import inspect

from numerix import dtypes
from numerix.primitives import REGISTRY, Primitive
from numerix.testing.suite.grad import CASES

#: the families whose every differentiable primitive the kit's grad family checks
#: (the others' rules are checked by grad_more)
KIT_FAMILIES = ("elementwise", "reduction", "shape", "creation")


def _arity(p: Primitive) -> int:
    # a sequence input (``*xs``) is spread out: call it with two
    return sum(2 if name.startswith("*") else 1 for name in p.inputs)


def test_every_primitive_has_a_rule_or_is_declared_nondifferentiable() -> None:
    missing = sorted((p.family, p.name) for p in REGISTRY if p.vjp is None)
    assert not missing, (
        "primitives with neither a derivative rule (vjp_rule) nor a nondifferentiable(...) "
        "declaration beside them: " + ", ".join(f"{f}.{n}" for f, n in missing)
    )


def test_every_rule_takes_the_primitives_inputs_and_parameters() -> None:
    # rule(ops, cotangent, out, *inputs, **params): a parameter misspelt in a rule, or an
    # input too many or too few, fails here instead of inside a grad
    wrong = []
    for p in REGISTRY:
        if not p.differentiable or p.vjp is None:
            continue
        try:
            inspect.signature(p.vjp).bind(
                None, None, None, *[None] * _arity(p), **{k: None for k in p.params}
            )
        except TypeError as e:
            wrong.append(f"{p.name}: {e}")
    assert not wrong, "rules whose signature does not fit their primitive: " + "; ".join(wrong)


def test_the_kit_checks_every_rule_of_its_families() -> None:
    checked = {c.prim for c in CASES}
    want = {p.name for p in REGISTRY if p.differentiable and p.family in KIT_FAMILIES}
    want.add("dot")
    assert want <= checked, f"rules with no finite-difference case in the kit: {want - checked}"


def test_boolean_and_integer_results_carry_no_derivative() -> None:
    # an element-wise primitive whose float result is bool (a comparison, isnan) has no
    # derivative to give; so do the integer-only ops (bit ops, shifts)
    for p in REGISTRY.by_family()["elementwise"]:
        table = p.extra.get("table")
        if table is None:
            continue
        unary = p.extra["arity"] == 1
        results = [table[d if unary else (d, d)] for d in (dtypes.float64, dtypes.complex128)]
        if all(r is None or r[1].kind in "biu" for r in results):
            assert not p.differentiable, f"{p.name} gives no inexact result, yet has a rule"
