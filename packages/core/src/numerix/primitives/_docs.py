"""The contract page, generated from the registry (docs/contract.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from numerix import backend
from numerix.primitives._registry import (
    BLOCKS,
    REGISTRY,
    REQUIRED,
    REQUIRED_FOR_COMPLEX,
    Primitive,
)


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
    backend.load_fallbacks()  # installed by the ops layer
    optional = [p.name for p in REGISTRY if not p.required and p.fallback is not None]
    bare = [p.name for p in REGISTRY if not p.required and p.fallback is None]
    lines.append(
        f"{total} primitives and {len(BLOCKS)} blocks. A backend implements each primitive as "
        "`def <name>(self, out, *inputs, **params) -> out`: the "
        f"{len(REQUIRED)} of the required core always (and {len(REQUIRED_FOR_COMPLEX)} more "
        f"where it holds complex dtypes), the {len(optional) + len(bare)} others where its library does "
        "them better than the core's fallback. A block is optional (`block_<name>`), the "
        "core's composite runs otherwise."
    )
    lines += ["", "### The required core", ""]
    lines.append("| primitive | why no composition of the others gives it |")
    lines.append("|---|---|")
    for name, why in REQUIRED.items():
        lines.append(f"| `{name}` | {why} |")
    lines += ["", "Where the backend holds complex dtypes:", ""]
    lines.append("| primitive | why |")
    lines.append("|---|---|")
    for name, why in REQUIRED_FOR_COMPLEX.items():
        lines.append(f"| `{name}` | {why} |")
    lines += ["", "### The optional primitives", ""]
    lines.append(
        "Each has a fallback in the core, written with the required core "
        "(`numerix/ops/fallbacks/`), which runs where a backend has no method for it, "
        "eagerly and under every compiler: " + ", ".join(f"`{n}`" for n in optional) + "."
    )
    if bare:
        lines += [
            "",
            "Optional without a fallback yet (the kit reports their cases as *not claimed* on "
            "a backend without them): " + ", ".join(f"`{n}`" for n in bare) + ".",
        ]
    for family, prims in sorted(REGISTRY.by_family().items()):
        lines += ["", f"### {family}", ""]
        lines.append(
            "| primitive | inputs | params | shape rule | dtype rule | semantics | required |"
        )
        lines.append("|---|---|---|---|---|---|---|")
        for p in sorted(prims, key=lambda p: p.name):
            inputs = ", ".join(f"`{i}`" for i in p.inputs) or "—"
            params = ", ".join(f"`{k}`" for k in p.params) or "—"
            if p.out_params:
                params += " (rules only: " + ", ".join(f"`{k}`" for k in p.out_params) + ")"
            doc = p.doc.replace("|", "\\|")
            req = (
                "yes" if p.name in REQUIRED else "complex" if p.required
                else "fallback" if p.fallback is not None else "no fallback yet"
            )  # fmt: skip
            lines.append(
                f"| `{p.name}` | {inputs} | {params} | {_rule(p.shape_rule, 'shape')} "
                f"| {_dtype(p)} | {doc} | {req} |"
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
