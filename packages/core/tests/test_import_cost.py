"""What ``import numerix`` and the first tensor load: nothing a process without
configuration does not use (these modules cost milliseconds each; see
benchmarks/first_op.py)."""

from __future__ import annotations

import ast
import subprocess
import sys

import ml_dtypes
import numpy as np

from numerix import dtypes
from numerix.ops import _core

LATE = ("pathlib", "difflib", "ml_dtypes", "pydantic", "rich", "jax", "torch", "numerix.defn",
        "pluggy", "dataclasses", "string")  # fmt: skip


def _loaded(code: str) -> list[str]:
    # what numpy loads itself (pathlib, on some versions) is not numerix's doing
    probe = (
        f"import sys, numpy\nbefore = set(sys.modules)\n{code}\n"
        f"print(sorted(m for m in {LATE!r} if m in sys.modules and m not in before))"
    )
    # a clean environment: no configuration file or variable asks for pydantic
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent-home"}
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                       cwd="/", check=True)  # fmt: skip
    return ast.literal_eval(r.stdout.strip())  # a printed list of str


def test_import_numerix_loads_none_of_the_late_modules() -> None:
    assert _loaded("import numerix") == []


def test_the_first_tensor_loads_no_configuration_reader() -> None:
    loaded = _loaded("import numerix as nx\nnx.add(nx.ones(4), nx.ones(4))")
    # ml_dtypes comes with the first bfloat16 array, pluggy with the discovery of every
    # plugin, pydantic with a configuration
    assert loaded == []
    bf16 = _loaded("import numerix as nx\nnx.ones(4, dtype=nx.bfloat16)")
    assert bf16 == ["ml_dtypes"]


def test_the_largest_bfloat16_written_out_is_ml_dtypes_own() -> None:
    want = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    assert _core._FLOAT_MAX[dtypes.bfloat16] == want
    # and a value past it rounds as numpy's cast does
    assert _core.stored(3.4e38, dtypes.bfloat16) == float(np.array(3.4e38, ml_dtypes.bfloat16))
