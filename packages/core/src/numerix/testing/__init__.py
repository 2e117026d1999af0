"""numerix.testing: the conformance kit every backend runs against itself.

- :mod:`numerix.testing.suite`: the tests, one module per op family, checked against
  numpy for values, exact dtype and exact shape.
- :mod:`numerix.testing.oracle`: sample data per dtype, the promotion oracle and
  :func:`~numerix.testing.oracle.check`.
- :mod:`numerix.testing.tolerances`: the one table of tolerances, per op and dtype.
- :mod:`numerix.testing.plugin`: the pytest plugin (installed with the core through
  the ``pytest11`` entry point): the ``numerix_backend`` fixture, the
  ``--numerix-backend`` option, dtype claims and the per-op report.

A backend package needs two things in its tests folder::

    # conftest.py
    import pytest


    @pytest.fixture(scope="session")
    def numerix_backend():
        return "mybackend"  # or ("mybackend", {"device": "cuda"})


    # test_conformance.py
    from numerix.testing.suite import *  # noqa: F403
"""

from numerix.testing.oracle import check
from numerix.testing.tolerances import tolerance

__all__ = ["check", "tolerance"]
