"""numerix's one compiled module, numerix._speedups (docs/decisions.md 38).

Everything else about the package is in pyproject.toml. The extension is optional: where
no C compiler is found the wheel is built without it, and numerix runs its Python path
(the same results and errors; small ops slower).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("numerix._speedups", sources=["src/numerix/_speedups.c"], optional=True),
    ],
)
