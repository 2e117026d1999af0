"""Regenerate the generated section of docs/contract.md from the primitive registry.

    .venv/bin/python docs/gen_contract.py          # rewrite the section
    .venv/bin/python docs/gen_contract.py --check  # exit 1 if it is out of date

``packages/core/tests/test_docs_generated.py`` runs the same check, so the page cannot
drift from the registry.
"""

from __future__ import annotations

import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parent / "contract.md"
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


def main(argv: list[str]) -> int:
    page = PAGE.read_text(encoding="utf-8")
    new = render(page)
    if "--check" in argv:
        if new != page:
            print(f"{PAGE} is out of date: run python docs/gen_contract.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
