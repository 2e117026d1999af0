"""The contract page, generated from the registry (docs/contract.md)."""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable
from typing import Any

from numerix import backend
from numerix.primitives._registry import (
    BLOCKS,
    REGISTRY,
    REQUIRED,
    REQUIRED_FOR_COMPLEX,
    Loops,
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
    lines += _batching_section()
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


def _batching_section() -> list[str]:
    """Which batching rule (``numerix.vmap``) each primitive and block has."""
    by_rule: dict[str, list[str]] = {}
    loops: list[str] = []
    for p in [*REGISTRY, *sorted(BLOCKS.values(), key=lambda b: b.name)]:
        rule = p.batch
        if rule is None:
            continue
        if isinstance(rule, Loops):
            loops.append(f"`{p.name}` ({rule.reason})")
            continue
        where = f"{rule.__module__.removeprefix('numerix.')}.{rule.__name__}"
        by_rule.setdefault(where, []).append(p.name)
    lines = ["", "### Batching rules", ""]
    lines.append(
        "`numerix.vmap` runs each primitive and block on the whole batch through the rule "
        "declared beside it (`batch_rule`; `packages/core/tests/test_batch_rules.py` names "
        "any primitive without one). A block without a rule would batch through its core "
        "version. The creation primitives take no tensor input and are never batched. Two "
        "rules run once per example in one case each, where no batched form exists: `conv` "
        "with a kernel per example (or batch groups), `window_scatter` with an init value "
        "per example."
    )
    lines += ["", "| rule | primitives and blocks |", "|---|---|"]
    for where, names in by_rule.items():
        lines.append(f"| `{where}` | " + ", ".join(f"`{n}`" for n in names) + " |")
    if loops:
        lines += ["", "Run once per example (no batched form): " + "; ".join(loops) + "."]
    return lines


# ------------------------------------------------------------------ the typed contract
#: Where :func:`contract_protocol_source` is written, relative to the repository's root.
CONTRACT_MODULE = "packages/core/src/numerix/primitives/contract.py"

_WIDTH = 100  # ruff's line length


def _docstring(text: str, indent: str) -> list[str]:
    """``text`` as a docstring at ``indent``, wrapped to the line length."""
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    wrapped = textwrap.wrap(
        text, _WIDTH, initial_indent=f'{indent}"""', subsequent_indent=indent,
        break_on_hyphens=False, break_long_words=False,
    )  # fmt: skip
    if len(wrapped) == 1:
        return [f'{wrapped[0]}"""']
    return [*wrapped, f'{indent}"""']


def _method(name: str, params: list[str], returns: str, doc: str) -> list[str]:
    """A protocol method's lines: the signature on one line if it fits, else one
    parameter a line (as ruff formats it), then its docstring and ``...``."""
    head = f"    def {name}(self, {', '.join(params)}) -> {returns}:"
    if len(head) <= _WIDTH:
        lines = [head]
    else:
        lines = [f"    def {name}(", "        self,", *(f"        {p}," for p in params)]
        lines.append(f"    ) -> {returns}:")
    return [*lines, *_docstring(doc, " " * 8), "        ..."]


def _kernel_params(p: Primitive) -> list[str]:
    """The parameters of primitive ``p``'s kernel after ``self``: ``out`` and the tensor
    inputs positional-only (an implementation names them as it likes), a sequence input
    as ``*name``, each kernel parameter keyword-only."""
    tensors = [i for i in p.inputs if not i.startswith("*")]
    seq = [i[1:] for i in p.inputs if i.startswith("*")]
    if seq and (len(seq) > 1 or not p.inputs[-1].startswith("*")):
        raise ValueError(f"{p.name}: only the last input may be a sequence, got {p.inputs}")
    out = ["out: Tensor", *(f"{i}: Tensor" for i in tensors), "/"]
    if seq:
        out.append(f"*{seq[0]}: Tensor")
    elif p.params:
        out.append("*")
    out += [f"{k}: Any" for k in p.params]
    return out


def _host_exchange() -> list[str]:
    """``from_numpy`` and ``to_numpy`` as :class:`numerix.backend.Backend` types them,
    positional-only; from_numpy's docstring is its primitive's."""
    lines: list[str] = []
    for name in ("from_numpy", "to_numpy"):
        fn = getattr(backend.Backend, name)
        sig = inspect.signature(fn)
        params = [f"{q.name}: {q.annotation}" for q in sig.parameters.values() if q.name != "self"]
        doc = REGISTRY[name].doc if name in REGISTRY else inspect.getdoc(fn) or name
        lines += ["", *_method(name, [*params, "/"], str(sig.return_annotation), doc)]
    return lines


def contract_protocol_source() -> str:
    """The source of :mod:`numerix.primitives.contract`: the backend contract as typing
    protocols, one method per primitive, for mypy to check a backend class against."""
    header = [
        '"""The backend contract as typing protocols, generated from the primitive registry.',
        "",
        "Generated by ``numerix.primitives._docs.contract_protocol_source``: do not edit; run",
        "``python docs/gen_contract.py`` to regenerate it (``--check`` fails when it is stale).",
        "",
        "A backend class satisfies :class:`FullContract`: it defines the required core (and",
        "the complex parts where it holds complex dtypes) and may leave out any optional",
        "primitive (the core installs its fallback; mypy reads an absent one through",
        "``Backend.__getattr__``), but every method it defines has its primitive's signature:",
        "``out`` and the tensor inputs positional (named as the backend likes), each parameter",
        "of the kernel by keyword, named exactly so; it returns ``out``.",
        "``tools/contract_check.py`` has mypy check numerix's backends against it.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import TYPE_CHECKING, Any, Protocol",
        "",
        "if TYPE_CHECKING:",
        "    import numpy as np",
        "",
        "    from numerix._tensor import Tensor",
        "",
        '__all__ = ["RequiredCore", "ComplexParts", "FullContract"]',
        "",
    ]
    body: list[str] = ["", "class RequiredCore(Protocol):"]
    body += _docstring(
        "The primitives every backend implements (docs/contract.md), and the host exchange.",
        "    ",
    )
    body += _host_exchange()
    for name in REQUIRED:
        if name == "from_numpy":
            continue
        p = REGISTRY[name]
        body += ["", *_method(name, _kernel_params(p), "Tensor", p.doc)]
    body += ["", "", "class ComplexParts(Protocol):"]
    body += _docstring("Required of a backend that holds complex dtypes.", "    ")
    for name in REQUIRED_FOR_COMPLEX:
        p = REGISTRY[name]
        body += ["", *_method(name, _kernel_params(p), "Tensor", p.doc)]
    body += ["", "", "class FullContract(RequiredCore, ComplexParts, Protocol):"]
    body += _docstring(
        "Every primitive: the required core, the complex parts and the optional "
        "primitives (a backend without a method for one gets the core's fallback).",
        "    ",
    )
    for family, prims in sorted(REGISTRY.by_family().items()):
        optional = [p for p in prims if not p.required]
        if not optional:
            continue
        body += ["", f"    # {family}"]
        for i, p in enumerate(optional):
            body += [*([""] if i else []), *_method(p.name, _kernel_params(p), "Tensor", p.doc)]
    return "\n".join([*header, *body]) + "\n"
