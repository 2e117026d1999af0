"""The import structure holds: no cycle (function-level imports counted), the low layer
imports nothing above it, plugins never import each other (tools/check_imports.py,
which ``nox -s lint`` also runs)."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _checker():
    spec = importlib.util.spec_from_file_location(
        "check_imports", ROOT / "tools" / "check_imports.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_repository_has_no_cycle_and_keeps_its_layers() -> None:
    assert _checker().check(ROOT) == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / "packages/core/src/numerix" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def test_a_cycle_held_by_a_function_level_import_is_found(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "ops/__init__.py": "",
            "ops/a.py": "from numerix.ops import b\n",
            "ops/b.py": "def f():\n    from numerix.ops.a import g\n    return g\n",
        },
    )
    problems = _checker().check(root)
    assert len(problems) == 1
    assert "import cycle among 2 modules: numerix.ops.a, numerix.ops.b" in problems[0]


def test_the_low_layer_importing_the_ops_is_found(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "ops/__init__.py": "",
            "_tensor.py": "def add(x, y):\n    from numerix import ops\n    return ops.add(x, y)\n",
        },
    )
    (problem,) = _checker().check(root)
    assert "_tensor.py:2: low-layer module numerix._tensor imports numerix.ops" in problem
    assert "inside a function" in problem


def test_type_checking_imports_and_package_parents_are_not_edges(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "from numerix.ops import a\n",
            "ops/__init__.py": "",
            "ops/a.py": "from numerix import dtypes\n",
            "dtypes.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from numerix.ops.a import x\n"
            ),
        },
    )
    assert _checker().check(root) == []


def test_a_plugin_calling_the_public_ops_is_found(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"__init__.py": "", "ops/__init__.py": "", "backend.py": ""})
    plugin = root / "packages/backend-binary/src/numerix_binary"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text("")
    (plugin / "backend.py").write_text(
        "from numerix.backend import Backend\n"
        "def fallback(x):\n    from numerix.ops import exp\n    return exp(x)\n"
    )
    (problem,) = _checker().check(root)
    assert "plugin numerix_binary imports numerix.ops (inside a function)" in problem


def test_the_pytest_plugins_light_half_is_checked_and_in_no_cycle_with_the_kit(
    tmp_path: Path,
) -> None:
    checker = _checker()
    assert "_numerix_pytestplugin" in checker._modules(ROOT)
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "testing/__init__.py": "",
            "testing/plugin.py": "from _numerix_pytestplugin import OP\n",
        },
    )
    light = root / "packages/core/src/_numerix_pytestplugin.py"
    light.write_text("OP = 1\ndef kit():\n    from numerix.testing import plugin\n")
    (problem,) = checker.check(root)
    assert "numerix.testing.plugin, _numerix_pytestplugin" in problem or (
        "_numerix_pytestplugin, numerix.testing.plugin" in problem
    ), problem
