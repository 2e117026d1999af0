"""Regenerate the reference section of docs/configuration.md from the settings models.

    .venv/bin/python docs/gen_config_reference.py          # rewrite the section
    .venv/bin/python docs/gen_config_reference.py --check  # exit 1 if it is out of date

The section lies between the BEGIN/END markers; the rest of the page is written by hand.
``packages/core/tests/test_config.py`` runs the same check, so the page cannot drift.
"""

from __future__ import annotations

import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parent / "configuration.md"
BEGIN = "<!-- BEGIN GENERATED REFERENCE: docs/gen_config_reference.py -->"
END = "<!-- END GENERATED REFERENCE -->"
#: The plugins whose tables the page documents (each backend package adds its own).
DOCUMENTED = ["binary"]


def generated() -> str:
    from numerix.configuration import reference_markdown

    return reference_markdown(backends=DOCUMENTED)


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
            print(
                f"{PAGE} is out of date: run python docs/gen_config_reference.py", file=sys.stderr
            )
            return 1
        return 0
    PAGE.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
