"""Exported programs on the backend under test: :func:`numerix.export` with every
compiler that serves the backend and exports, then :func:`numerix.load_exported`, in
this process and in a fresh one without the function's source.

The oracle is the same function jitted by the same compiler: a loaded program returns
tensors of the same dtypes, shapes, backend and tree, with the same values (bit for
bit for integers and booleans, within the kit's tolerance for floats, since a
compiler may build the exported program differently from its jitted one). A compiler
that serves the backend but does not export must refuse with
:class:`~numerix.errors.ArgumentError` naming the compilers that do.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.defn.compilers import compilers_serving
from numerix.defn.exporting import exported_signature
from numerix.plugins import get_compiler
from numerix.testing.oracle import ALL, ids, sample
from numerix.testing.suite.compiled import close

#: 0-d, empty and ordinary shapes, all in one program
SHAPES = [(), (0,), (2, 3)]


def _exporters() -> list[str]:
    """The compilers serving the backend under test that export; the others are checked
    to refuse."""
    backend = nx.get_default_backend()
    out = []
    for name in compilers_serving(backend):
        if get_compiler(name).exports:
            out.append(name)
        else:
            with pytest.raises(nx.ArgumentError, match=f"compiler {name!r} cannot export"):
                nx.export(lambda x: x, nx.template((2,), backend=backend), compiler=name)
    return out


def _held(dtype: dtypes.DType) -> bool:
    claimed = type(nx.get_default_backend()).supported_dtypes
    return claimed is None or dtype in claimed


def _fn(*xs: Any) -> Any:
    # what every dtype takes: a comparison, a reshape, a select, a reduction (counted)
    return [
        {"same": x == x, "flat": nx.reshape(x, (-1,)), "pick": nx.where(x == x, x, x)} for x in xs
    ], nx.count_nonzero(xs[-1])


@pytest.mark.numerix_op("export")
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_export_round_trip(dtype: dtypes.DType) -> None:
    if not _held(dtype):
        with pytest.raises((nx.UnsupportedDTypeError, nx.DTypeError)):
            nx.tensor(sample(dtype, (2,), 0))
        return
    args = [nx.tensor(sample(dtype, s, i)) for i, s in enumerate(SHAPES)]
    for name in _exporters():
        want = nx.jit(_fn, compiler=name)(*args)
        program = nx.load_exported(nx.export(_fn, *args, compiler=name))
        got = program(*args)
        close(got, want, exact=dtype.kind not in "fc")
        # host arrays are accepted and moved, as by a compiled program
        close(program(*[a.to_numpy() for a in args]), want, exact=dtype.kind not in "fc")


@pytest.mark.numerix_op("export")
def test_export_trees_numbers_and_constants(tmp_path: Path) -> None:
    backend = nx.get_default_backend()
    w = nx.tensor(sample(dtypes.float32, (4, 3), 1))  # captured: a constant of the program

    def f(params: Any, x: Any, scale: Any) -> Any:
        h = nx.dot(x, w) * scale + params["b"][0]
        return {"out": (h, None), "n": [nx.sum(h, axis=0)]}

    args = ({"b": [nx.tensor(sample(dtypes.float32, (3,), 2))]},
            nx.tensor(sample(dtypes.float32, (5, 4), 3)), 0.5)  # fmt: skip
    templates = (
        {"b": [nx.template((3,), nx.float32, backend)]},
        nx.template((5, 4), nx.float32, backend),
        0.5,
    )
    for name in _exporters():
        want = nx.jit(f, compiler=name)(*args)
        data = nx.export(nx.jit(f, compiler=name), *templates)  # a jitted function's compiler
        path = tmp_path / f"{name}.nxp"
        path.write_bytes(data)
        program = nx.load_exported(path)  # a path, as bytes
        got = program(*args)
        close(got, want, exact=False)
        assert got["out"][1] is None
        sig = exported_signature(data)
        assert sig["compiler"] == name and sig["name"] == "f"
        assert repr(sig["inputs"][1]) == "Template<f32[5][4]>"
        assert repr(sig["outputs"]["n"][0]) == "Template<f32[3]>"
        # other shapes, and another tree, are refused by name
        with pytest.raises(nx.TracingError, match="exported for arguments"):
            program(args[0], nx.tensor(sample(dtypes.float32, (2, 4), 3)), 0.5)
        with pytest.raises(nx.TracingError, match="exported for arguments"):
            program(args[1], 0.5)


@pytest.mark.numerix_op("export")
def test_export_corrupt_bytes_refused() -> None:
    backend = nx.get_default_backend()
    for name in _exporters():
        data = nx.export(lambda x: x * 2, nx.template((3,), nx.float32, backend), compiler=name)
        # cut anywhere (in the envelope, its header, the compiler's payload) or padded:
        # a named error, never a partial program or a crash
        for cut in sorted({1, 16, 23, 40, len(data) // 2, len(data) - 1}):
            with pytest.raises(nx.FileFormatError):
                nx.load_exported(data[:cut])
        with pytest.raises(nx.FileFormatError):
            nx.load_exported(data + b"\0")
        with pytest.raises(nx.FileFormatError, match="not a numerix exported program"):
            nx.load_exported(b"x" + data[1:])


_FRESH = """
import sys, numpy as np, numerix as nx
program = nx.load_exported(sys.argv[1], backend=sys.argv[2])
x = nx.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), backend=sys.argv[2])
out = program(x, 2.0)
print(out.backend.name, out.dtype.name, out.shape, out.to_numpy().tolist())
"""


@pytest.mark.numerix_op("export")
def test_export_runs_in_a_fresh_process(tmp_path: Path) -> None:
    backend = nx.get_default_backend()

    def f(x: Any, a: Any) -> Any:
        return nx.tanh(x * a).sum(axis=1)

    x = nx.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    for name in _exporters():
        want = nx.jit(f, compiler=name)(x, 2.0).to_numpy()
        path = tmp_path / f"{name}.nxp"
        path.write_bytes(nx.export(f, x, 2.0, compiler=name))
        # the fresh process has neither f nor this module: only the file
        run = subprocess.run(
            [sys.executable, "-c", _FRESH, str(path), backend.name],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
        )
        assert run.returncode == 0, run.stderr[-2000:]
        got_backend, got_dtype, got_shape, values = run.stdout.strip().split(" ", 3)
        assert (got_backend, got_dtype, got_shape) == (backend.name, "float32", "(2,)")
        np.testing.assert_allclose(ast.literal_eval(values), want, rtol=1e-6)
