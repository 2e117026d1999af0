"""Check the import structure of numerix's packages (run by ``nox -s lint`` and by a core test).

Three rules, read from the sources (nothing is imported):

1. **No import cycle** among a package's modules, counting every import: at module level
   and inside functions. A function-level import is allowed where it makes loading
   lazy (the CLI's subcommands, pydantic for the settings, pluggy for plugin discovery),
   never to dodge a cycle: with it counted as an edge, a cycle it hides is found.
   Importing ``a.b`` runs the package ``a``'s ``__init__`` first; that implicit edge is
   not counted (Python allows a package's submodules to load while its ``__init__``
   runs), but an import of a name that ``__init__`` defines is. A module that loads others
   on first use of a name (a PEP 562 ``__getattr__`` calling ``importlib.import_module``)
   imports, inside a function, each module its string constants name.
2. **The low layer imports nothing above it** (:data:`LOW`: the tensor, dtypes, shapes,
   errors, the registry of primitives, dispatch, the meeting rule, the backend and
   compiler contracts, plugins and configuration), at module level or in functions.
3. **Plugins do not import each other**: ``numerix_binary``, ``numerix_xla``,
   ``numerix_torch`` and the pytest plugin's light half ``_numerix_pytestplugin`` import
   numerix, never one another.
4. **Plugins stand on the low layer**: from numerix they import the low layer, the
   compiler interface (``numerix.defn``) and the conformance kit (``numerix.testing``),
   never the public ops or the ``numerix`` namespace: a backend's kernels do not call
   public ops, and what a backend's native block falls back to is in the registry
   (``Block.fallback``).

Usage: ``python tools/check_imports.py [ROOT]``; exits 1 and lists every violation.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path

#: Source folders (or a top-level module's file), relative to the repository's root.
PACKAGES = {
    "numerix": "packages/core/src/numerix",
    "numerix_binary": "packages/backend-binary/src/numerix_binary",
    "numerix_xla": "packages/backend-xla/src/numerix_xla",
    "numerix_torch": "packages/backend-torch/src/numerix_torch",
    "_numerix_pytestplugin": "packages/core/src/_numerix_pytestplugin.py",
}

#: What a plugin may import from numerix besides the low layer.
PLUGIN_ALSO = ("numerix.defn", "numerix.testing")

#: The low layer of the core: modules (and packages, with everything under them) that
#: import only each other.
LOW = (
    "numerix._tensor",
    "numerix._frozen",
    "numerix._threads",
    "numerix._shapes",
    "numerix._version",
    "numerix._dispatch",
    "numerix._meeting",
    "numerix.dtypes",
    "numerix.errors",
    "numerix.primitives",
    "numerix.backend",
    "numerix._payload",
    "numerix.compiler",
    "numerix.plugins",
    "numerix.hookspecs",
    "numerix.configuration",
)


def _in(module: str, prefixes: Iterable[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _modules(root: Path) -> dict[str, Path]:
    out = {}
    for name, folder in PACKAGES.items():
        base = root / folder
        if base.suffix == ".py":
            if base.is_file():
                out[name] = base
            continue
        for path in sorted(base.rglob("*.py")):
            parts = [name, *path.relative_to(base).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _imports(module: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, int, bool]]:
    """``(imported module, line, inside a function)`` for each import of a known module
    (``if TYPE_CHECKING:`` blocks are skipped: they never run)."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name in modules:
                        found.append((alias.name, child.lineno, in_function))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - child.level + 1]
                    source = ".".join(base + ([child.module] if child.module else []))
                else:
                    source = child.module or ""
                for alias in child.names:
                    sub = f"{source}.{alias.name}"
                    target = sub if sub in modules else source
                    if target in modules:
                        found.append((target, child.lineno, in_function))
            visit(child, inner)

    visit(tree, False)
    found += _lazy_imports(tree, package, modules)
    return found


def _lazy_imports(
    tree: ast.Module, package: str, modules: dict[str, Path]
) -> list[tuple[str, int, bool]]:
    """The modules a PEP 562 ``__getattr__`` may load: in a module whose ``__getattr__``
    calls ``import_module``, every string constant naming a module, or a submodule of its
    package (``numerix.ops``'s families by their short names), counts as an import inside
    a function. Loading on first use is lazy, not a cycle dodge: a cycle through it is
    found like any other."""
    getattr_fn = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "__getattr__"), None
    )
    if getattr_fn is None or "import_module" not in ast.unparse(tree):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for name in (node.value, f"{package}.{node.value}"):
                if name in modules:
                    found.append((name, node.lineno, True))
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def strongconnect(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return found


def check(root: Path) -> list[str]:
    """Every violation of the three rules under ``root``, one line each."""
    modules = _modules(root)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    problems = []
    for module, path in modules.items():
        where = path.relative_to(root)
        top = module.split(".")[0]
        for target, line, in_function in _imports(module, path, modules):
            if target == module:
                continue
            graph[module].add(target)
            kind = "inside a function" if in_function else "at module level"
            if _in(module, LOW) and not _in(target, LOW):
                problems.append(
                    f"{where}:{line}: low-layer module {module} imports {target} ({kind}), "
                    f"which is above the low layer"
                )
            other = target.split(".")[0]
            if top != "numerix" and other not in ("numerix", top):
                problems.append(f"{where}:{line}: plugin {top} imports plugin {other} ({kind})")
            if top != "numerix" and other == "numerix" and not _in(target, LOW + PLUGIN_ALSO):
                problems.append(
                    f"{where}:{line}: plugin {top} imports {target} ({kind}); plugins import "
                    f"numerix's low layer, numerix.defn and numerix.testing"
                )
    for component in _cycles(graph):
        edges = [f"{a} -> {b}" for a in component for b in sorted(graph[a]) if b in component]
        problems.append(
            f"import cycle among {len(component)} modules: {', '.join(component)}; "
            f"edges: {'; '.join(edges)}"
        )
    return problems


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} import-structure problem(s); see tools/check_imports.py")
        return 1
    print(f"imports: no cycle, the low layer imports nothing above it ({root})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
