"""Generated documentation pages match the code they are generated from."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("script", ["gen_contract"])
def test_generated_page_is_current(script: str) -> None:
    sys.path.insert(0, str(REPO / "docs"))
    try:
        gen = __import__(script)
    finally:
        sys.path.remove(str(REPO / "docs"))
    page = gen.PAGE.read_text(encoding="utf-8")
    assert gen.render(page) == page, f"{gen.PAGE.name} is stale: run python docs/{script}.py"


def test_contract_page_lists_every_primitive() -> None:
    from numerix.primitives import BLOCKS, REGISTRY

    page = (REPO / "docs" / "contract.md").read_text(encoding="utf-8")
    for p in REGISTRY:
        assert f"| `{p.name}` |" in page
    for b in BLOCKS.values():
        assert f"| `{b.name}` | `{b.method}` |" in page
