"""Regenerate what is generated from the primitive registry: the generated section of
docs/contract.md and the typed contract, packages/core/src/numerix/primitives/contract.py.

    .venv/bin/python docs/gen_contract.py          # rewrite both
    .venv/bin/python docs/gen_contract.py --check  # exit 1 if either is out of date

``packages/core/tests/test_docs_generated.py`` runs the same checks, so neither can
drift from the registry.
"""

from __future__ import annotations

import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parent / "contract.md"
ROOT = Path(__file__).resolve().parents[1]
BEGIN = "<!-- BEGIN GENERATED CONTRACT: docs/gen_contract.py -->"
END = "<!-- END GENERATED CONTRACT -->"


def generated() -> str:
    from numerix.primitives._docs import contract_markdown

    return contract_markdown()


def render(page: str) -> str:
    head, sep, rest = page.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise SystemExit(f"{PAGE}: the BEGIN/END markers of the generated section are missing")
    return f"{head}{BEGIN}\n\n{generated()}\n{END}{tail}"


def module_path() -> Path:
    """Where the typed contract is written (numerix.primitives.contract)."""
    from numerix.primitives._docs import CONTRACT_MODULE

    return ROOT / CONTRACT_MODULE


def module_source() -> str:
    """The typed contract's source, as the registry gives it now."""
    from numerix.primitives._docs import contract_protocol_source

    return contract_protocol_source()


def main(argv: list[str]) -> int:
    page = PAGE.read_text(encoding="utf-8")
    new = render(page)
    module = module_path()
    old_source = module.read_text(encoding="utf-8") if module.exists() else ""
    source = module_source()
    if "--check" in argv:
        stale = [
            p for p, old, now in ((PAGE, page, new), (module, old_source, source)) if old != now
        ]
        for path in stale:
            print(f"{path} is out of date: run python docs/gen_contract.py", file=sys.stderr)
        return 1 if stale else 0
    PAGE.write_text(new, encoding="utf-8")
    module.write_text(source, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
