"""The examples in numerix's docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import numerix

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(numerix.__path__, "numerix.")
    if not m.name.endswith("__main__") and not m.name.startswith("numerix.testing")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


def test_examples_exist():
    # the public op modules document themselves with examples
    total = 0
    for name in MODULES:
        finder = doctest.DocTestFinder()
        total += sum(len(t.examples) for t in finder.find(importlib.import_module(name)))
    assert total >= 15
