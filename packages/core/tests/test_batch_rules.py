"""The registry's batching rules (numerix.vmap): every primitive has one or is declared as
a loop with its reason, every rule takes the primitive's parameters, and every block has
one or batches through its core version."""

from __future__ import annotations

import inspect

import pytest

from numerix.primitives import BLOCKS, REGISTRY
from numerix.primitives._registry import Loops, batch_loops, batch_rule

#: the primitives that take no tensor input: vmap never batches them (their output
#: depends on no argument), so they need no rule
NO_TENSOR_INPUTS = {p.name for p in REGISTRY if p.family == "creation"}


def test_every_primitive_has_a_batching_rule_or_a_declared_loop() -> None:
    missing = sorted(
        (p.family, p.name) for p in REGISTRY if p.batch is None and p.name not in NO_TENSOR_INPUTS
    )
    assert not missing, (
        "primitives with neither a batching rule (batch_rule) nor a batch_loops(..., reason=) "
        "declaration beside them: " + ", ".join(f"{f}.{n}" for f, n in missing)
    )


def test_creation_primitives_take_no_tensor_input() -> None:
    # the exemption above holds only while it is true
    for name in NO_TENSOR_INPUTS:
        assert REGISTRY[name].inputs in ((), ("array",)), name


def test_every_rule_takes_the_primitives_parameters() -> None:
    wrong = []
    for p in [*REGISTRY, *BLOCKS.values()]:
        rule = p.batch
        if rule is None or isinstance(rule, Loops):
            continue
        params = (*p.params, *getattr(p, "out_params", ()))
        try:
            inspect.signature(rule).bind(None, None, [], [], **{k: None for k in params})
        except TypeError as e:
            wrong.append(f"{p.name}: {e}")
    assert not wrong, "rules whose signature does not fit their primitive: " + "; ".join(wrong)


def test_every_block_batches_natively_or_through_its_core_version() -> None:
    # a block without a rule batches through its core version: it must have one
    for b in BLOCKS.values():
        assert b.batch is not None or b.fallback is not None, b.name


def test_a_rule_is_attached_once_and_a_loop_needs_its_reason() -> None:
    with pytest.raises(ValueError, match="already has a batching rule"):
        batch_rule("add")(lambda *a, **k: None)
    with pytest.raises(ValueError, match="give the reason"):
        batch_loops("add", reason=" ")
    with pytest.raises(KeyError, match="no primitive or block named 'nope'"):
        batch_rule("nope")(lambda *a, **k: None)
