"""What a reader follows in the docs holds: every page can be reached, install commands
do not pull a multi-GB CUDA build of PyTorch, the figures quoted agree with the README,
and an example's extra requirement is said where the example is introduced."""

from __future__ import annotations

import ast
import math
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
DOCS = sorted(p.name for p in (REPO / "docs").glob("*.md"))
#: the pages that document the fence blocks of shell commands a reader copies
SHELL_PAGES = [
    *sorted((REPO / "docs").glob("*.md")),
    REPO / "README.md",
    *sorted((REPO / "packages").glob("*/README.md")),
]
_SHELL_BLOCK = re.compile(r"^```(?:bash|console|sh|shell)\n(.*?)^```", re.M | re.S)
_TORCH_PACKAGE = re.compile(r"backend-torch|numerix-torch|numerix\[(?:torch|all)\]")


def _linked_pages(text: str, prefix: str = "") -> set[str]:
    return {m.group(1) for m in re.finditer(rf"\]\({re.escape(prefix)}([\w-]+\.md)[)#]", text)}


def test_readme_lists_every_docs_page() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Documentation") :]
    missing = set(DOCS) - _linked_pages(section, "docs/") - {"index.md"}
    assert not missing, f"README's Documentation section does not link {sorted(missing)}"


def test_index_lists_every_docs_page() -> None:
    index = (REPO / "docs" / "index.md").read_text(encoding="utf-8")
    missing = set(DOCS) - _linked_pages(index) - {"index.md"}
    assert not missing, f"docs/index.md does not link {sorted(missing)}"


def test_site_navigation_has_every_page() -> None:
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    missing = {page for page in DOCS if not re.search(rf":\s*{re.escape(page)}\s*$", nav, re.M)}
    assert not missing, f"mkdocs.yml's nav does not list {sorted(missing)}"


def _install_lines() -> list[tuple[str, str, bool]]:
    found = []
    for page in SHELL_PAGES:
        for block in _SHELL_BLOCK.findall(page.read_text(encoding="utf-8")):
            torch_first = False  # PyTorch's own build installed by an earlier line
            for line in block.splitlines():
                if re.search(r"\bpip install torch\b.*--index-url", line):
                    torch_first = True
                elif re.search(r"\bpip install\b", line) and _TORCH_PACKAGE.search(line):
                    found.append((page.relative_to(REPO).as_posix(), line.strip(), torch_first))
    return found


def test_the_docs_install_torch_commands_exist() -> None:
    # the check below must have something to check
    assert any("getting-started" in page for page, _, _ in _install_lines())


@pytest.mark.parametrize("page,line,torch_first", _install_lines())
def test_torch_installs_under_the_constraints_file(page: str, line: str, torch_first: bool) -> None:
    assert torch_first or re.search(r"(-c|--constraint)\s+\S*constraints/", line), (
        f"{page}: `{line}` installs numerix-torch without `-c constraints/ci.txt`: "
        "(or an earlier `pip install torch --index-url ...` of PyTorch's own build): "
        "pip then takes the newest torch on PyPI, a CUDA build of several GB"
    )


def test_getting_started_quotes_the_readme_ci_time() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    measured = float(re.search(r"`\.ci/run` took ([\d.]+) minutes", readme).group(1))
    page = (REPO / "docs" / "getting-started.md").read_text(encoding="utf-8")
    quoted = [int(m) for m in re.findall(r"about (\d+)\s+minutes", page)]
    assert quoted, "getting-started.md no longer says how long the tests take"
    for minutes in quoted:
        assert minutes in (math.floor(measured), math.ceil(measured)), (
            f"getting-started.md says about {minutes} minutes; the README measured {measured}"
        )


def _third_party_imports(path: Path) -> set[str]:
    """Top-level modules an example imports that numerix itself does not depend on."""
    ours = {"numerix", "numerix_binary", "numerix_xla", "numerix_torch", "numpy"}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return {n for n in names - ours if n not in sys.stdlib_module_names}


_DISTRIBUTION = {"sklearn": "scikit-learn"}


@pytest.mark.parametrize("example", sorted((REPO / "examples").glob("*.py")), ids=lambda p: p.name)
def test_an_examples_requirements_are_said_where_it_is_introduced(example: Path) -> None:
    extra = _third_party_imports(example)
    pages = [p for p in SHELL_PAGES if f"examples/{example.name}" in p.read_text(encoding="utf-8")]
    for module in extra:
        dist = _DISTRIBUTION.get(module, module)
        assert f"pip install {dist}" in example.read_text(encoding="utf-8"), (
            f"examples/{example.name} imports {module} without saying `pip install {dist}`"
        )
        for page in pages:
            assert f"pip install {dist}" in page.read_text(encoding="utf-8"), (
                f"{page.relative_to(REPO)} introduces examples/{example.name}, which needs "
                f"{dist}, without saying `pip install {dist}`"
            )
