"""The pytest plugin of the conformance kit (entry point ``pytest11: numerix``).

Inert until a backend is selected, by the ``numerix_backend`` fixture (override it in
a conftest) or by ``--numerix-backend=SPEC`` / the ini option ``numerix_backend``.
Once selected, every test runs with that backend as the default, a test whose dtypes
the backend does not claim (``Backend.supported_dtypes``) is reported as *not
claimed* instead of run, and the terminal summary lists, per op, how many of the
kit's cases passed, failed or were not claimed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest

from numerix.dtypes import DType
from numerix.testing.tolerances import current_op

__all__ = ["current_op", "op_of"]

NOT_CLAIMED = "not claimed"
_SUITE = "numerix.testing.suite"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("numerix", "numerix conformance kit")
    group.addoption(
        "--numerix-backend",
        dest="numerix_backend",
        default=None,
        help="run the tests with this numerix backend as the default (a name or "
        "'name:field:field'); kit tests of dtypes it does not claim are reported as not claimed",
    )
    parser.addini("numerix_backend", "the numerix backend the kit runs on", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "numerix_op(name): the op a conformance-kit test exercises (for the report)"
    )
    config.stash[_REPORT] = defaultdict(lambda: {"passed": 0, "failed": 0, NOT_CLAIMED: 0})


_REPORT = pytest.StashKey[dict[str, dict[str, int]]]()


@pytest.fixture(scope="session")
def numerix_backend(pytestconfig: pytest.Config) -> Any:
    """The backend spec the kit runs on; None leaves numerix's own default.

    Override this fixture in a backend package's ``conftest.py`` to select the package's
    backend (with options: ``("xla", {"client": "host"})``).
    """
    return (
        pytestconfig.getoption("numerix_backend") or pytestconfig.getini("numerix_backend") or None
    )


def _is_kit(item: pytest.Item) -> bool:
    fn = getattr(item, "function", None)
    return bool(fn is not None and getattr(fn, "__module__", "").startswith(_SUITE))


def op_of(item: pytest.Item) -> str:
    """The op a kit test exercises: its ``numerix_op`` marker, its ``op``/``name``
    parameter, or its function name."""
    m = item.get_closest_marker("numerix_op")
    if m is not None and m.args:
        return str(m.args[0])
    params = getattr(getattr(item, "callspec", None), "params", {})
    for key in ("op", "name"):
        v = params.get(key)
        if v is not None:
            return str(getattr(v, "name", v))
    name = getattr(item, "originalname", item.name)
    return name.removeprefix("test_")


def _dtypes_of(item: pytest.Item) -> list[DType]:
    out: list[DType] = []

    def walk(v: Any) -> None:
        if isinstance(v, DType):
            out.append(v)
        elif isinstance(v, (tuple, list)):
            for x in v:
                walk(x)

    for v in getattr(getattr(item, "callspec", None), "params", {}).values():
        walk(v)
    return out


@pytest.fixture(autouse=True)
def _numerix_kit(request: pytest.FixtureRequest, numerix_backend: Any) -> Iterator[None]:
    if numerix_backend is None:
        yield
        return
    import numerix as nx

    backend = nx.defaults.resolve_backend(numerix_backend, "numerix kit")
    item = request.node
    claimed = type(backend).supported_dtypes
    if claimed is not None:
        missing = [d for d in _dtypes_of(item) if d not in claimed]
        if missing:
            item.user_properties.append(("numerix", NOT_CLAIMED))
            pytest.skip(f"{NOT_CLAIMED}: backend {backend!r} does not claim {missing[0]}")
    token = current_op.set(op_of(item) if _is_kit(item) else None)
    try:
        with nx.default_backend(backend):
            yield
    finally:
        current_op.reset(token)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome: Any = yield
    rep = outcome.get_result()
    if not _is_kit(item):
        return
    report = item.config.stash[_REPORT]
    op = op_of(item)
    if rep.skipped and ("numerix", NOT_CLAIMED) in item.user_properties:
        if rep.when == "setup":
            report[op][NOT_CLAIMED] += 1
    elif rep.failed:
        report[op]["failed"] += 1
    elif rep.when == "call" and rep.passed:
        report[op]["passed"] += 1


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    report = config.stash.get(_REPORT, None)
    if not report:
        return
    spec = (
        config.getoption("numerix_backend") or config.getini("numerix_backend") or "the fixture's"
    )
    tr = terminalreporter
    tr.section(f"numerix conformance kit: {spec} backend")
    width = max(len(op) for op in report)
    tr.write_line(f"{'op':<{width}}  {'passed':>7}  {'failed':>7}  {NOT_CLAIMED:>11}")
    totals = {"passed": 0, "failed": 0, NOT_CLAIMED: 0}
    for op in sorted(report):
        r = report[op]
        for k in totals:
            totals[k] += r[k]
        line = f"{op:<{width}}  {r['passed']:>7}  {r['failed']:>7}  {r[NOT_CLAIMED]:>11}"
        tr.write_line(line, red=bool(r["failed"]))
    tr.write_line(
        f"{'total':<{width}}  {totals['passed']:>7}  {totals['failed']:>7}  {totals[NOT_CLAIMED]:>11}",
        bold=True,
    )
