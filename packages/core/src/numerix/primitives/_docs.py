"""The contract page, generated from the registry (docs/contract.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from numerix.primitives._registry import BLOCKS, REGISTRY, Primitive


def _rule(fn: Callable[..., Any] | None, what: str) -> str:
    if fn is None:
        return f"given by the core (`out.{what}`)"
    name = getattr(fn, "__name__", repr(fn))
    return f"`{name}`" if not name.startswith("dtype_rule") else "table"


def _dtype(p: Primitive) -> str:
    accepts = p.extra.get("accepts")
    if accepts:
        return accepts
    return _rule(p.dtype_rule, "dtype")


def contract_markdown() -> str:
    """Markdown tables of every primitive (by family) and every block."""
    lines: list[str] = []
    total = len(REGISTRY)
    lines.append(
        f"{total} primitives and {len(BLOCKS)} blocks. A backend implements each primitive as "
        "`def <name>(self, out, *inputs, **params) -> out`; a block is optional "
        "(`block_<name>`), the core's composite runs otherwise."
    )
    for family, prims in sorted(REGISTRY.by_family().items()):
        lines += ["", f"### {family}", ""]
        lines.append("| primitive | inputs | params | shape rule | dtype rule | semantics |")
        lines.append("|---|---|---|---|---|---|")
        for p in sorted(prims, key=lambda p: p.name):
            inputs = ", ".join(f"`{i}`" for i in p.inputs) or "—"
            params = ", ".join(f"`{k}`" for k in p.params) or "—"
            if p.out_params:
                params += " (rules only: " + ", ".join(f"`{k}`" for k in p.out_params) + ")"
            doc = p.doc.replace("|", "\\|")
            lines.append(
                f"| `{p.name}` | {inputs} | {params} | {_rule(p.shape_rule, 'shape')} "
                f"| {_dtype(p)} | {doc} |"
            )
    if BLOCKS:
        lines += ["", "### blocks", ""]
        lines.append("| block | backend method | family | inputs | params | semantics |")
        lines.append("|---|---|---|---|---|---|")
        for b in sorted(BLOCKS.values(), key=lambda b: b.name):
            inputs = ", ".join(f"`{i}`" for i in b.inputs) or "—"
            params = ", ".join(f"`{k}`" for k in b.params) or "—"
            doc = b.doc.replace("|", "\\|")
            lines.append(
                f"| `{b.name}` | `{b.method}` | {b.family} | {inputs} | {params} | {doc} |"
            )
    return "\n".join(lines) + "\n"
