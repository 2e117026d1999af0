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


def test_typed_contract_is_current() -> None:
    """numerix/primitives/contract.py is what the registry generates: a primitive added,
    renamed or given another parameter without regenerating it fails here."""
    sys.path.insert(0, str(REPO / "docs"))
    try:
        gen = __import__("gen_contract")
    finally:
        sys.path.remove(str(REPO / "docs"))
    module = gen.module_path()
    assert module.read_text(encoding="utf-8") == gen.module_source(), (
        f"{module.name} is stale: run python docs/gen_contract.py"
    )


def test_contract_page_lists_every_primitive() -> None:
    from numerix.primitives import BLOCKS, REGISTRY

    page = (REPO / "docs" / "contract.md").read_text(encoding="utf-8")
    for p in REGISTRY:
        assert f"| `{p.name}` |" in page
    for b in BLOCKS.values():
        assert f"| `{b.name}` | `{b.method}` |" in page


def _mapping_rows() -> list[tuple[str, str, str]]:
    page = (REPO / "docs" / "contract.md").read_text(encoding="utf-8")
    section = page.split("## Nx backend callbacks", 1)[1]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`"):
            rows.append((cells[0], cells[1], cells[2]))
    return rows


def test_nx_mapping_names_exist() -> None:
    import re

    import numerix as nx
    from numerix.backend import Backend
    from numerix.primitives import BLOCKS, REGISTRY

    rows = _mapping_rows()
    assert len(rows) >= 60
    for nx_name, numerix_names, kind in rows:
        for name in re.findall(r"`([A-Za-z_.]+)`", numerix_names):
            if name.startswith("Backend."):
                assert hasattr(Backend, name.split(".", 1)[1]), name
            elif name.startswith("Tensor."):
                assert hasattr(nx.Tensor, name.split(".", 1)[1]), name
            elif name == "run_block":
                from numerix.ops._core import run_block  # noqa: F401
            else:
                assert name in REGISTRY or name in BLOCKS or hasattr(nx, name), (
                    f"{nx_name}: {name} is neither a primitive, a block nor a public op"
                )
        if kind in ("primitive", "primitives"):
            for name in re.findall(r"`([a-z_0-9]+)`", numerix_names.split("(")[0]):
                assert name in REGISTRY, f"{nx_name}: {name} is listed as a primitive"
        if kind == "block":
            for name in re.findall(r"`([a-z_0-9]+)`", numerix_names):
                assert name in BLOCKS, f"{nx_name}: {name} is listed as a block"
