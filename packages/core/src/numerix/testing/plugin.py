"""The pytest plugin of the conformance kit (entry point ``pytest11: numerix``).

Inert until a backend is selected, by the ``numerix_backend`` fixture (override it in
a conftest) or by ``--numerix-backend=SPEC`` / the ini option ``numerix_backend``.
Once selected, every test runs with that backend as the default. A backend claims
what it implements, and the kit reports what it does not claim as *not claimed*
(neither passed nor failed):

- dtypes: a test of a dtype outside ``Backend.supported_dtypes`` is not run;
- primitives: the kit reads them off the backend's class (a primitive of the
  registry the class has no method for is not claimed); a test that reaches one of
  them (``NotImplementedError`` from :class:`numerix.backend.Backend`) is not
  claimed. A primitive the class does define and that fails is a failure.

The terminal summary lists, per op, how many of the kit's cases passed, failed or
were not claimed.

The kit compiles thousands of kernels on a compiling backend (one per op, shape and
dtype), so the plugin keeps a test process small and fast:

- it calls :func:`numerix.clear_caches` when the op under test changes and at least
  ``numerix_clear_caches_every`` kit tests (ini option, default 400) ran since the
  last clear, or when the process grew by 1 GiB since then (on Linux): kernels stay
  shared by the cases of one op, and the compiled executables of ops done with are
  freed (and returned to the system);
- under pytest-xdist it puts every case of one op in one group
  (``--dist loadgroup``), so the kernels an op's cases share are compiled by one
  worker only;
- it registers the hypothesis profile ``numerix-ci`` (``--hypothesis-profile=numerix-ci``):
  10 derandomized draws per property instead of the kit's 40.
"""

from __future__ import annotations

import ctypes
import gc
import os
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest

import numerix as nx
from numerix.dtypes import DType
from numerix.plugins import clear_caches
from numerix.primitives import REGISTRY
from numerix.testing.tolerances import current_op

try:
    from hypothesis import HealthCheck, settings

    settings.register_profile(
        "numerix-ci",
        max_examples=10,
        derandomize=True,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
except ImportError:  # hypothesis is a test extra; without it there is no profile to offer
    pass

__all__ = ["current_op", "op_of", "unclaimed_primitives"]

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
    parser.addini(
        "numerix_clear_caches_every",
        "clear the backends' compiled kernels when the op under test changes after this "
        "many kit tests (0: never)",
        default="400",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "numerix_op(name): the op a conformance-kit test exercises (for the report)"
    )
    config.pluginmanager.register(_KitReport(config), "numerix-kit-report")
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
    config.stash[_CLEARING] = _Clearing(every)


class _Clearing:
    """When to clear the compiled caches: at the first change of op after ``every`` kit
    tests since the last clear, or after ``memory`` bytes of growth of the process
    since the last clear (where the process's size can be read: Linux), whatever the op.
    ``every`` 0 never clears."""

    def __init__(self, every: int, memory: int = 1 << 30) -> None:
        self.every = every
        self.memory = memory
        self.since = 0
        self.op: str | None = None
        self.base = _resident()

    def before(self, op: str) -> None:
        if self.every and (
            (op != self.op and self.since >= self.every)
            or (self.base is not None and (_resident() or 0) - self.base > self.memory)
        ):
            clear_caches()
            _release_memory()
            self.since = 0
            self.base = _resident()
        self.op = op
        self.since += 1


def _resident() -> int | None:
    """The resident size of this process in bytes, or None where it cannot be read."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


def _release_memory() -> None:
    # what clear_caches freed goes back to the system (glibc keeps it otherwise)
    gc.collect()
    if _TRIM is not None:
        _TRIM(0)


def _malloc_trim() -> Any:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_TRIM = _malloc_trim() if sys.platform.startswith("linux") else None


_CLEARING = pytest.StashKey[_Clearing]()
_OP = "numerix_op"


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    # under pytest-xdist's --dist loadgroup, one worker runs every case of an op
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if _is_kit(item):
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


def unclaimed_primitives(backend_class: type) -> frozenset[str]:
    """The primitives of the registry ``backend_class`` has no method for: the kit
    reports the tests that reach them as not claimed."""
    return frozenset(n for n in REGISTRY.names() if not callable(getattr(backend_class, n, None)))


# the message of Backend.__getattr__ for a primitive a backend has no method for
_MISSING = re.compile(r"does not implement primitive '(\w+)'")


def _missing_primitive(exc: BaseException | None, unclaimed: frozenset[str]) -> str | None:
    """The unclaimed primitive ``exc`` (or what caused it) reports as missing, or None."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        group = getattr(exc, "exceptions", None)  # hypothesis reports several as a group
        if isinstance(group, (tuple, list)) and group:
            found = [_missing_primitive(e, unclaimed) for e in group]
            return found[0] if all(found) else None
        if isinstance(exc, NotImplementedError):
            m = _MISSING.search(str(exc))
            if m is not None and m.group(1) in unclaimed:
                return m.group(1)
        exc = exc.__cause__ or exc.__context__
    return None


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
    backend = nx.defaults.resolve_backend(numerix_backend, "numerix kit")
    item = request.node
    kit = _is_kit(item)
    if kit:
        op = op_of(item)
        # the op travels with the test's reports (to the xdist controller too)
        item.user_properties.append((_OP, op))
        request.config.stash[_CLEARING].before(op)
    item.stash[_UNCLAIMED] = (backend, unclaimed_primitives(type(backend)))
    claimed = type(backend).supported_dtypes
    if claimed is not None:
        missing = [d for d in _dtypes_of(item) if d not in claimed]
        if missing:
            item.user_properties.append(("numerix", NOT_CLAIMED))
            pytest.skip(f"{NOT_CLAIMED}: backend {backend!r} does not claim {missing[0]}")
    token = current_op.set(op if kit else None)
    try:
        with nx.default_backend(backend):
            yield
    finally:
        current_op.reset(token)


_UNCLAIMED = pytest.StashKey[tuple[Any, frozenset[str]]]()


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
        backend, unclaimed = item.stash.get(_UNCLAIMED, (None, frozenset()))
        prim = _missing_primitive(exc, unclaimed) if unclaimed and _is_kit(item) else None
        if prim is None:
            raise
        item.user_properties.append(("numerix", NOT_CLAIMED))
        pytest.skip(f"{NOT_CLAIMED}: backend {backend!r} does not implement primitive {prim!r}")


class _KitReport:
    """Counts the kit's outcomes per op where the reports arrive (the test process, or
    pytest-xdist's controller) and prints them at the end."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.tally: dict[str, dict[str, int]] = defaultdict(
            lambda: {"passed": 0, "failed": 0, NOT_CLAIMED: 0}
        )

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        op = props.get(_OP)
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
