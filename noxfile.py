"""Developer tasks: nox -l lists them, nox -s NAME runs one.

Tests live in tox.ini (one environment per package and Python) and .ci/run.
"""

from __future__ import annotations

from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["lint", "typecheck", "docs"]

ROOT = Path(__file__).parent
CONSTRAINTS = ("-c", "constraints/ci.txt")
PACKAGES = ("packages/core", "packages/backend-binary")
# numerix and numerix-binary depend on each other: install both in one pip call.
LOCAL_INSTALL = ("./packages/core[test]", "./packages/backend-binary[test]")
LINT_PATHS = ("packages", "benchmarks", "tools", "noxfile.py")


def install_local(session: nox.Session, *extra: str) -> None:
    """Install both local packages (and ``extra``) under the CI constraints.

    The pip that ``venv`` seeds may predate 23.3, which cannot resolve the cycle
    between the two packages once extras are requested: upgrade it first.
    """
    session.install("--upgrade", "pip>=23.3")
    session.install(*CONSTRAINTS, *extra, *LOCAL_INSTALL)


@nox.session
def lint(session: nox.Session) -> None:
    """Lint and check formatting with ruff (settings in ruff.toml), and check the import
    structure: no cycle, the low layer imports nothing above it (tools/check_imports.py)."""
    session.install("ruff")
    paths = [p for p in LINT_PATHS if (ROOT / p).exists()]
    session.run("ruff", "check", *paths)
    session.run("ruff", "format", "--check", *paths)
    session.run("python", "tools/check_imports.py")


@nox.session
def typecheck(session: nox.Session) -> None:
    """Type-check every package's sources with mypy (settings and files in mypy.ini);
    jax and torch come in for the xla and torch packages (torch pinned to the CPU build)."""
    install_local(session, "mypy", "./packages/backend-xla", "./packages/backend-torch")
    session.run("mypy")


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site with mkdocs into site/; warnings are errors. The API
    reference is read from the sources' docstrings (docs/api, from docs/gen_api_pages.py)."""
    session.install(*CONSTRAINTS, "-r", "docs/requirements.txt")
    session.run("mkdocs", "build", "--strict", env={"NO_MKDOCS_2_WARNING": "1"})


@nox.session
def browser(session: nox.Session) -> None:
    """The browser tests (docs/tests): numerix.benchmark's HTML report and the built site
    in headless Chromium, which must be installed (Debian: apt-get install chromium)."""
    install_local(session, "-r", "docs/requirements.txt")
    session.run(
        "python", "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "docs/tests",
        *session.posargs, env={"REQUIRE_BROWSER": "1"},
    )  # fmt: skip


@nox.session
def notebooks(session: nox.Session) -> None:
    """Execute the notebooks of docs/notebooks (tests/test_notebooks.py): on binary, and on
    xla and torch, which come in too (torch pinned to the CPU build)."""
    install_local(session, "./packages/backend-xla[test]", "./packages/backend-torch[test]")
    session.run(
        "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
        "packages/core/tests/test_notebooks.py", *session.posargs,
    )  # fmt: skip


@nox.session
def bench(session: nox.Session) -> None:
    """Run the benchmarks in benchmarks/run.py."""
    script = ROOT / "benchmarks" / "run.py"
    if not script.exists():
        session.skip("benchmarks/run.py does not exist yet")
    install_local(session)
    session.run("python", "benchmarks/run.py", *session.posargs)


@nox.session
def fuzz(session: nox.Session) -> None:
    """The differential fuzzer against numpy: ``nox -s fuzz -- BACKEND [--examples N]``.

    Eager and under jit with every compiler serving BACKEND (``--eager-only`` for eager
    alone); new cases each run unless ``--seed S``. Exits 1 on any wrong answer or
    foreign exception. Before a release: ``--examples 100000`` on every backend.
    """
    if not session.posargs:
        session.error("name the backend: nox -s fuzz -- binary|xla|torch [--examples N]")
    backend = session.posargs[0]
    extra = {"xla": ("./packages/backend-xla[test]",), "torch": ("./packages/backend-torch[test]",)}
    install_local(session, *extra.get(backend, ()))
    session.run("python", "-m", "numerix.testing.fuzz", *session.posargs)


@nox.session
def array_api(session: nox.Session) -> None:
    """The array API conformance suite against numerix: ``nox -s array_api -- BACKEND
    [--max-examples N] [-- pytest args]`` (tools/array_api_tests.py; the suite is the
    pinned copy in ../shared/array-api-tests, its expected failures per backend in
    conformance/array-api/)."""
    if not session.posargs:
        session.error("name the backend: nox -s array_api -- binary|xla|torch")
    backend = session.posargs[0]
    extra = {"xla": ("./packages/backend-xla[test]",), "torch": ("./packages/backend-torch[test]",)}
    install_local(session, "ndindex", "pytest-json-report", *extra.get(backend, ()))
    session.run("python", "tools/array_api_tests.py", *session.posargs)


@nox.session
def build(session: nox.Session) -> None:
    """Build the sdist and wheel of each package into dist/."""
    session.install("build")
    for package in PACKAGES:
        session.run("python", "-m", "build", "--outdir", "dist", package)
