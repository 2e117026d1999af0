"""numerix's one compiled module, numerix._speedups (docs/decisions.md 38 and 40).

Everything else about the package is in pyproject.toml. The extension is optional: where
no C compiler is found the wheel is built without it, and numerix runs its Python path
(the same results and errors; small ops slower). A free-threaded CPython (3.13t, 3.14t)
builds none either: the module's memos are unlocked, so it declares that it needs the
GIL, and importing it there would turn the GIL back on for the whole process.
"""

import sysconfig

from setuptools import Extension, setup

FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))

setup(
    ext_modules=[]
    if FREE_THREADED
    else [Extension("numerix._speedups", sources=["src/numerix/_speedups.c"], optional=True)],
)
