"""The pytest plugin of numerix's conformance kit (entry point ``pytest11: numerix``).

pytest imports every installed plugin when it starts, in every session, so this module
is the part of the plugin that costs nothing: options, markers, the ``numerix_backend``
fixture, the per-op report and the hooks, on pytest and the standard library alone. It
lives outside the ``numerix`` package because importing a module of a package imports
the package first. The kit itself, :mod:`numerix.testing.plugin`, is imported when a
test runs with a backend selected: by the ``numerix_backend`` fixture (override it in a
conftest) or by ``--numerix-backend=SPEC`` / the ini option ``numerix_backend``. A
session that selects none never imports numerix from here.

The hypothesis profile ``numerix-ci`` (10 derandomized draws per property instead of
the kit's 40) is registered when ``--hypothesis-profile=numerix-ci`` asks for it, and
whenever the kit is imported.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest

__all__ = ["NOT_CLAIMED", "is_kit", "op_of", "register_hypothesis_profile"]

NOT_CLAIMED = "not claimed"
#: the package of the kit's tests
SUITE = "numerix.testing.suite"
#: the name of the user property carrying a kit test's op (to the xdist controller too)
OP = "numerix_op"
#: the ini option ``numerix_clear_caches_every``, read once
CLEAR_EVERY = pytest.StashKey[int]()
#: ``(backend, the primitives it does not claim)`` of a test that runs with a backend
UNCLAIMED = pytest.StashKey[tuple[Any, frozenset[str]]]()
#: the hypothesis profile the plugin offers
PROFILE = "numerix-ci"


def register_hypothesis_profile() -> None:
    """Register the hypothesis profile ``numerix-ci`` (nothing without hypothesis, a
    test extra)."""
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:
        return
    settings.register_profile(
        PROFILE,
        max_examples=10,
        derandomize=True,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )


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
    parser.addini(
        "numerix_clear_caches_every",
        "clear the backends' compiled kernels when the op under test changes after this "
        "many kit tests (0: never)",
        default="400",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    # first: hypothesis's own plugin loads the profile named on the command line
    if config.getoption("hypothesis_profile", None) == PROFILE:
        register_hypothesis_profile()
    config.addinivalue_line(
        "markers", "numerix_op(name): the op a conformance-kit test exercises (for the report)"
    )
    config.pluginmanager.register(KitReport(config), "numerix-kit-report")
    raw = config.getini("numerix_clear_caches_every")
    try:
        every = int(raw)
        if every < 0:
            raise ValueError
    except ValueError:
        raise pytest.UsageError(
            f"ini option numerix_clear_caches_every must be a count of tests >= 0 "
            f"(0: never clear), got {raw!r}"
        ) from None
    config.stash[CLEAR_EVERY] = every


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    # under pytest-xdist's --dist loadgroup, one worker runs every case of an op
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if is_kit(item):
            item.add_marker(pytest.mark.xdist_group(name=f"numerix-kit-{op_of(item)}"))


@pytest.fixture(scope="session")
def numerix_backend(pytestconfig: pytest.Config) -> Any:
    """The backend spec the kit runs on; None leaves numerix's own default.

    Override this fixture in a backend package's ``conftest.py`` to select the package's
    backend (with options: ``("xla", {"client": "host"})``).
    """
    return (
        pytestconfig.getoption("numerix_backend") or pytestconfig.getini("numerix_backend") or None
    )


@pytest.fixture(autouse=True)
def _numerix_kit(request: pytest.FixtureRequest, numerix_backend: Any) -> Iterator[None]:
    if numerix_backend is None:
        yield
        return
    # the kit, imported on the first test that selects a backend: it imports nothing of
    # this module, and is handed what it needs of the test
    from numerix.testing import plugin as kit

    register_hypothesis_profile()  # wherever the kit runs, named on the command line or not
    backend = kit.resolve(numerix_backend)
    item = request.node
    op = op_of(item) if is_kit(item) else None
    if op is not None:  # the op travels with the test's reports (to the xdist controller too)
        item.user_properties.append((OP, op))
    kit.prepare(request.config, op, request.config.stash.get(CLEAR_EVERY, 400))
    item.stash[UNCLAIMED] = (backend, kit.unclaimed_primitives(type(backend)))
    missing = kit.unclaimed_dtype(backend, item)
    if missing is not None:
        item.user_properties.append(("numerix", NOT_CLAIMED))
        pytest.skip(f"{NOT_CLAIMED}: backend {backend!r} does not claim {missing}")
    yield from kit.run_with_backend(backend, op)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    return (yield from _claimed_only(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    return (yield from _claimed_only(item))


def _claimed_only(item: pytest.Item) -> Any:
    # a kit test stopped by a primitive the backend does not claim is not claimed: it is
    # skipped here, before pytest formats the traceback of a failure (which costs
    # 0.1 s a test)
    try:
        return (yield)
    except Exception as exc:  # a group of them too (hypothesis, several failing examples)
        backend, unclaimed = item.stash.get(UNCLAIMED, (None, frozenset()))
        if backend is None or not is_kit(item):
            raise
        from numerix.testing.plugin import missing_primitive

        prim = missing_primitive(exc, unclaimed)
        if prim is None or (prim == "dtype" and type(backend).supported_dtypes is None):
            raise  # a backend claiming every dtype refused one: a failure
        item.user_properties.append(("numerix", NOT_CLAIMED))
        what = "a dtype of this case" if prim == "dtype" else f"primitive {prim!r}"
        pytest.skip(f"{NOT_CLAIMED}: backend {backend!r} does not implement {what}")


def is_kit(item: pytest.Item) -> bool:
    """Whether ``item`` is one of the conformance kit's tests."""
    fn = getattr(item, "function", None)
    return bool(fn is not None and getattr(fn, "__module__", "").startswith(SUITE))


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
            return _name_of(v)
    name = getattr(item, "originalname", item.name)
    return name.removeprefix("test_")


def _name_of(v: Any) -> str:
    # an op parameter is a name, an object with a name, or a tuple led by one
    # (("add", nx.add, np.add)): the report shows the name
    if isinstance(v, str):
        return v
    name = getattr(v, "name", None)
    if isinstance(name, str):
        return name
    if isinstance(v, (tuple, list)) and v:
        return _name_of(v[0])
    return str(getattr(v, "__name__", v))


class KitReport:
    """Counts the kit's outcomes per op where the reports arrive (the test process, or
    pytest-xdist's controller) and prints them at the end."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.tally: dict[str, dict[str, int]] = defaultdict(
            lambda: {"passed": 0, "failed": 0, NOT_CLAIMED: 0}
        )

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        op = props.get(OP)
        if not isinstance(op, str):
            return
        if report.skipped and props.get("numerix") == NOT_CLAIMED:
            self.tally[op][NOT_CLAIMED] += 1
        elif report.failed:
            self.tally[op]["failed"] += 1
        elif report.when == "call" and report.passed:
            self.tally[op]["passed"] += 1

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int) -> None:
        report = self.tally
        if not report:
            return
        config = self.config
        spec = (
            config.getoption("numerix_backend")
            or config.getini("numerix_backend")
            or "the fixture's"
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
