"""Tensor files on the backend under test: :func:`numerix.save` and :func:`numerix.load`
in every format, for every dtype the backend holds and the edge shapes.

The oracle is the bytes: a tensor saved and loaded back is of the same dtype and shape,
on the backend it was loaded onto, and its host copy has exactly the bytes of the
numpy array it was made from (so bfloat16, signed zeros and every complex part round
trip bit for bit). Files written by numpy itself load onto the backend the same way.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.testing.oracle import ALL, ids, sample

FORMATS = (".npy", ".npz", ".safetensors")
#: 0-d, empty, size-1 and ordinary shapes
SHAPES = [(), (0,), (2, 0), (1,), (1, 1, 1), (3, 4)]


def _same(t: object, a: np.ndarray, dtype: dtypes.DType, backend: nx.Backend) -> None:
    assert isinstance(t, nx.Tensor), f"expected a Tensor, got {type(t).__name__}"
    assert t.dtype is dtype, f"dtype: got {t.dtype}, expected {dtype}"
    assert t.shape == a.shape and type(t.shape) is tuple, (
        f"shape: got {t.shape}, expected {a.shape}"
    )
    assert t.backend is backend, f"backend: got {t.backend!r}, expected {backend!r}"
    got = t.to_numpy()
    assert got.dtype == a.dtype and got.shape == a.shape
    assert got.tobytes() == a.tobytes(), f"bytes differ for {dtype}{list(a.shape)}"


def _one(loaded: object, fmt: str) -> object:
    if fmt == ".npy":
        return loaded
    assert isinstance(loaded, dict) and len(loaded) == 1, (
        f"expected a dict of one, got {loaded!r:.80}"
    )
    key = "tensor" if fmt == ".safetensors" else "arr_0"
    assert list(loaded) == [key], f"{fmt}: a single tensor is stored as {key!r}, got {list(loaded)}"
    return loaded[key]


@pytest.mark.numerix_op("load")
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_files_round_trip(
    dtype: dtypes.DType, shape: tuple[int, ...], fmt: str, tmp_path: Path
) -> None:
    backend = nx.get_default_backend()
    a = sample(dtype, shape, 3)
    path = tmp_path / f"t{fmt}"
    nx.save(path, nx.tensor(a))  # from a tensor of the backend under test
    _same(_one(nx.load(path, backend=backend), fmt), a, dtype, backend)
    # by name, and read into memory rather than mapped
    _same(_one(nx.load(str(path), backend=backend.name, mmap=False), fmt), a, dtype, backend)


@pytest.mark.numerix_op("load")
@pytest.mark.parametrize("fmt", (".npz", ".safetensors"))
def test_files_dict_of_every_dtype(fmt: str, tmp_path: Path) -> None:
    # one file holding every dtype the backend holds, each its own shape
    backend = nx.get_default_backend()
    claimed = type(backend).supported_dtypes
    held = [d for d in ALL if claimed is None or d in claimed]
    arrays = {f"{d.name}/{i}": sample(d, SHAPES[i % len(SHAPES)], i) for i, d in enumerate(held)}
    path = tmp_path / f"all{fmt}"
    nx.save(path, {k: nx.tensor(a) for k, a in arrays.items()})
    for mmap in (True, False):
        got = nx.load(path, backend=backend, mmap=mmap)
        assert isinstance(got, dict) and sorted(got) == sorted(arrays)
        for k, a in arrays.items():
            _same(got[k], a, dtypes.as_dtype(k.split("/")[0]), backend)


@pytest.mark.numerix_op("load")
@pytest.mark.parametrize("fmt", (".npy", ".npz"))
@pytest.mark.parametrize("dtype", [d for d in ALL if d is not dtypes.bfloat16], ids=ids)
def test_files_written_by_numpy(dtype: dtypes.DType, fmt: str, tmp_path: Path) -> None:
    # a file numerix did not write: numpy's own np.save / np.savez
    backend = nx.get_default_backend()
    a = sample(dtype, (2, 3), 5)
    path = tmp_path / f"np{fmt}"
    if fmt == ".npy":
        np.save(path, a)
        got = nx.load(path, backend=backend)
    else:
        np.savez(path, first=a, second=a[:1])
        loaded = nx.load(path, backend=backend)
        assert isinstance(loaded, dict) and list(loaded) == ["first", "second"]
        _same(loaded["second"], a[:1], dtype, backend)
        got = loaded["first"]
    _same(got, a, dtype, backend)


@pytest.mark.numerix_op("load")
def test_files_device(tmp_path: Path) -> None:
    # device= places the tensors as creation ops do
    backend = nx.get_default_backend()
    a = sample(dtypes.float32, (2, 2), 7)
    path = tmp_path / "d.npy"
    t = nx.tensor(a)
    nx.save(path, t)
    _same(nx.load(path, device=t.device), a, dtypes.float32, backend)
