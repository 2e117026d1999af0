"""The conformance suite: every op of the contract, checked against numpy.

A backend package runs it against itself with one line in a test module::

    from numerix.testing.suite import *  # noqa: F403

and selects itself either with the ``numerix_backend`` fixture (override it in the
package's ``conftest.py``) or with ``pytest --numerix-backend=NAME``. Each family of
ops is one module here; this package re-exports their tests (and refuses two tests
of one name, which would silently hide one of them).
"""

from __future__ import annotations

import importlib
from typing import Any

FAMILIES = (
    "creation",
    "elementwise",
    "elementwise_more",
    "reduction",
    "linalg",
    "linalg_blocks",
    "shape",
    "indexing",
    "tensor",
    "window",
    "conv",
    "sort",
    "fft",
    "composites",
    "errors",
    "properties",
    "compiled",
    "grad",
    "grad_more",
    "grad_compiled",
    "vmap",
    "toolkit",
    "files",
    "export",
    "fp_warnings",
    "einsum",
    "numpy_protocol",
    "random",
)


def _is_fixture(obj: Any) -> bool:
    # pytest >= 8.4 wraps fixtures in FixtureFunctionDefinition; older ones mark the function
    return type(obj).__name__ == "FixtureFunctionDefinition" or hasattr(
        obj, "_pytestfixturefunction"
    )


def _collect() -> dict[str, Any]:
    names: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for fam in FAMILIES:
        mod = importlib.import_module(f"numerix.testing.suite.{fam}")
        for name, obj in vars(mod).items():
            if not (name.startswith(("test_", "Test")) or _is_fixture(obj)):
                continue
            if name in names and names[name] is not obj:
                raise RuntimeError(
                    f"numerix.testing.suite: test {name!r} is defined in both "
                    f"{origin[name]} and {fam}; rename one"
                )
            names[name] = obj
            origin[name] = fam
    return names


_TESTS = _collect()
globals().update(_TESTS)
__all__ = sorted(_TESTS)  # pyright: ignore[reportUnsupportedDunderAll]
