"""Every distribution of the project: its license (Apache-2.0, a LICENSE file in the
package and in its installed metadata), its ``py.typed`` marker, and a declared
dependency for every third-party module its source imports."""

from __future__ import annotations

import ast
import sys
from importlib import metadata, resources
from pathlib import Path

import pytest

from numerix.configuration._state import _toml

REPO = Path(__file__).resolve().parents[3]
#: distribution → (folder in the checkout, import package)
PACKAGES = {
    "numerix": ("packages/core", "numerix"),
    "numerix-binary": ("packages/backend-binary", "numerix_binary"),
    "numerix-xla": ("packages/backend-xla", "numerix_xla"),
    "numerix-torch": ("packages/backend-torch", "numerix_torch"),
}
#: import name → distribution name, where they differ
DISTRIBUTION_OF = {"pydantic_settings": "pydantic-settings", "ml_dtypes": "ml-dtypes"}


def _installed() -> list[str]:
    out = []
    for dist in PACKAGES:
        try:
            metadata.distribution(dist)
        except metadata.PackageNotFoundError:
            continue
        out.append(dist)
    return out


def _pyproject(dist: str) -> dict:
    folder, _ = PACKAGES[dist]
    with open(REPO / folder / "pyproject.toml", "rb") as f:
        return _toml().load(f)


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement string."""
    head = requirement.split(";")[0].strip()
    for stop in "[<>=!~ ":
        head = head.split(stop)[0]
    return head.lower().replace("_", "-")


def _is_apache_2(text: str) -> bool:
    return "Apache License" in text and "Version 2.0, January 2004" in text


def test_the_root_has_the_license() -> None:
    assert _is_apache_2((REPO / "LICENSE").read_text(encoding="utf-8"))


@pytest.mark.parametrize("dist", list(PACKAGES))
def test_pyproject_declares_the_license_and_ships_py_typed(dist: str) -> None:
    folder, module = PACKAGES[dist]
    project = _pyproject(dist)["project"]
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    assert _is_apache_2((REPO / folder / "LICENSE").read_text(encoding="utf-8"))
    assert "Typing :: Typed" in project["classifiers"]
    assert (REPO / folder / "src" / module / "py.typed").is_file()


@pytest.mark.parametrize("dist", _installed())
def test_installed_metadata_has_the_license_and_py_typed(dist: str) -> None:
    _, module = PACKAGES[dist]
    meta = metadata.metadata(dist)
    assert meta["License-Expression"] == "Apache-2.0", (
        f"{dist} was installed from an older pyproject.toml: reinstall it"
    )
    assert meta.get_all("License-File") == ["LICENSE"]
    license_file = metadata.distribution(dist).read_text("licenses/LICENSE")
    assert license_file is not None and _is_apache_2(license_file)
    assert resources.files(module).joinpath("py.typed").is_file()


def _imports(folder: Path) -> dict[str, set[str]]:
    """Third-party top-level modules imported anywhere under ``folder`` (function-level
    imports included), with the files importing each."""
    found: dict[str, set[str]] = {}
    for f in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for n in names:
                top = n.split(".")[0]
                if top in sys.stdlib_module_names or top == "__future__":
                    continue
                if top in ("tomli", "tomllib") or top.startswith("numerix"):
                    # tomllib: the stdlib's from 3.11; tomli before (declared with a marker)
                    continue
                if (folder.parent / f"{top}.py").is_file():
                    continue  # a module the distribution ships beside its package
                found.setdefault(top, set()).add(str(f.relative_to(folder)))
    return found


@pytest.mark.parametrize("dist", list(PACKAGES))
def test_every_imported_module_is_a_declared_dependency(dist: str) -> None:
    folder, module = PACKAGES[dist]
    project = _pyproject(dist)["project"]
    declared = {_name(r) for r in project.get("dependencies", [])}
    test_extra = {_name(r) for r in project.get("optional-dependencies", {}).get("test", [])}
    src = REPO / folder / "src" / module
    missing = []
    for top, files in _imports(src).items():
        name = DISTRIBUTION_OF.get(top, top).lower().replace("_", "-")
        # the conformance kit (numerix.testing) runs under pytest: the test extra serves it
        allowed = declared | test_extra if all(f.startswith("testing") for f in files) else declared
        if name not in allowed:
            missing.append(f"{top} (imported by {', '.join(sorted(files))})")
    assert not missing, f"{dist} imports modules its pyproject.toml does not declare: {missing}"
