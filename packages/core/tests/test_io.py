"""numerix.save / numerix.load and numerix.io.read_idx on the binary backend: the
formats and what they store, memory mapping, files other libraries wrote, every
refusal (named, with the path, nothing returned), and np.save's message for bfloat16.
The conformance kit's files family checks the round trips on every backend."""

from __future__ import annotations

import gzip
import io
import json
import mmap
import os
import struct
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.errors import ArgumentError, FileFormatError, NumpyFunctionError
from numerix.io import read_idx
from numerix.testing.oracle import ALL, ids, sample

safetensors_numpy = pytest.importorskip("safetensors.numpy")

FORMATS = (".npy", ".npz", ".safetensors")


def _bits(t: Any) -> bytes:
    return np.asarray(t).tobytes()


def _mapped(a: np.ndarray) -> bool:
    """Whether ``a``'s memory is a file mapping (an mmap.mmap at the end of its bases)."""
    base: Any = a
    while base is not None:
        if isinstance(base, mmap.mmap):
            return True
        base = (
            getattr(base, "base", None)
            if isinstance(base, np.ndarray)
            else getattr(base, "obj", None)
        )
    return False


# ---------------------------------------------------------------- formats


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_every_dtype_round_trips_bit_for_bit(dtype: dtypes.DType, fmt: str, tmp_path: Path) -> None:
    a = sample(dtype, (2, 3), 1)
    if dtype.kind == "f" or dtype.kind == "c":  # the bits that round through floats lose
        flat = a.reshape(-1)
        flat[0] = -0.0
        flat[1] = np.inf
        flat[2] = np.nan
    path = tmp_path / f"x{fmt}"
    nx.save(path, nx.tensor(a))
    got = nx.load(path)
    t = got if fmt == ".npy" else got[{".npz": "arr_0", ".safetensors": "tensor"}[fmt]]
    assert t.dtype is dtype and t.shape == (2, 3)
    assert _bits(t) == a.tobytes()


def test_bfloat16_in_npy_is_a_uint16_record_other_readers_open(tmp_path: Path) -> None:
    a = sample(dtypes.bfloat16, (4,), 2)
    nx.save(tmp_path / "b.npy", nx.tensor(a))
    raw = np.load(tmp_path / "b.npy")  # numpy alone: the bits, under the field's name
    assert raw.dtype == np.dtype([("bfloat16", "<u2")])
    assert raw["bfloat16"].tobytes() == a.tobytes()


def test_complex_in_safetensors_is_float_pairs_named_in_the_metadata(tmp_path: Path) -> None:
    c64 = np.array([1 + 2j, -3 - 0j], np.complex64)
    c128 = np.array([[0.5 - 1j]], np.complex128)
    path = tmp_path / "c.safetensors"
    nx.save(path, {"a": nx.tensor(c64), "b": nx.tensor(c128), "r": nx.tensor([1.0])})
    plain = safetensors_numpy.load_file(str(path))  # the library alone
    assert plain["a"].dtype == np.float32 and plain["a"].shape == (2, 2)
    np.testing.assert_array_equal(plain["a"], [[1, 2], [-3, 0]])
    assert plain["b"].dtype == np.float64 and plain["b"].shape == (1, 1, 2)
    with safetensors_numpy.safe_open(str(path), framework="numpy") as f:
        assert json.loads(f.metadata()["numerix.dtypes"]) == {"a": "complex64", "b": "complex128"}
    got = nx.load(path)
    assert got["a"].dtype is nx.complex64 and _bits(got["a"]) == c64.tobytes()
    assert got["b"].dtype is nx.complex128 and _bits(got["b"]) == c128.tobytes()
    assert got["r"].dtype is nx.float32 and got["r"].tolist() == [1.0]


@pytest.mark.parametrize("fmt", FORMATS)
def test_edge_shapes(fmt: str, tmp_path: Path) -> None:
    for shape in [(), (0,), (3, 0, 2), (1,), (1, 1)]:
        a = sample(dtypes.int16, shape, 4)
        nx.save(tmp_path / f"e{fmt}", {"x": nx.tensor(a)} if fmt != ".npy" else nx.tensor(a))
        for mm in (True, False):
            got = nx.load(tmp_path / f"e{fmt}", mmap=mm)
            t = got if fmt == ".npy" else got["x"]
            assert t.dtype is nx.int16 and t.shape == shape and _bits(t) == a.tobytes()


def test_dicts_and_keys(tmp_path: Path) -> None:
    # any str is a name, savez's own keywords included; the order of a .npz is kept
    tensors = {
        "file": nx.tensor([1]),
        "allow_pickle": nx.tensor([2.0]),
        "a/b.npy": nx.tensor(True),
        "": nx.tensor([3]),
    }
    nx.save(tmp_path / "k.npz", tensors)
    got = nx.load(tmp_path / "k.npz")
    assert list(got) == list(tensors)
    for k, t in tensors.items():
        assert got[k].dtype is t.dtype and got[k].tolist() == t.tolist()
    nx.save(tmp_path / "k.safetensors", {k: v for k, v in tensors.items() if k})
    got = nx.load(tmp_path / "k.safetensors")
    assert sorted(got) == sorted(k for k in tensors if k)


def test_save_takes_what_asarray_takes(tmp_path: Path) -> None:
    nx.save(tmp_path / "l.npy", [[1, 2], [3, 4]])
    t = nx.load(tmp_path / "l.npy")
    assert t.dtype is nx.int64 and t.tolist() == [[1, 2], [3, 4]]
    nx.save(tmp_path / "s.npz", {"x": 2.5, "y": np.arange(3, dtype=np.uint8)})
    got = nx.load(tmp_path / "s.npz")
    assert got["x"].dtype is nx.float32 and got["x"].shape == () and got["x"].item() == 2.5
    assert got["y"].dtype is nx.uint8 and got["y"].tolist() == [0, 1, 2]
    # a strided view is saved as its values
    v = nx.tensor(np.arange(12, dtype=np.int32).reshape(3, 4)).mT
    nx.save(tmp_path / "v.safetensors", v)
    assert nx.load(tmp_path / "v.safetensors")["tensor"].tolist() == v.tolist()


@pytest.mark.parametrize("backend", ["binary", "xla", "torch"])
def test_load_onto_a_backend(backend: str, tmp_path: Path) -> None:
    if backend not in nx.plugins.backend_entries():
        pytest.skip(f"numerix-{backend} is not installed")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    for fmt in FORMATS:
        nx.save(tmp_path / f"b{fmt}", nx.tensor(a))
        got = nx.load(tmp_path / f"b{fmt}", backend=backend)
        t = got if fmt == ".npy" else next(iter(got.values()))
        assert t.backend is nx.get_backend(backend) and t.dtype is nx.float32
        assert _bits(t) == a.tobytes()
    with nx.default_backend(backend):
        assert nx.load(tmp_path / "b.npy").backend is nx.get_backend(backend)


# ---------------------------------------------------------------- memory mapping


@pytest.mark.parametrize("fmt", [".npy", ".safetensors"])
def test_npy_and_safetensors_are_memory_mapped_on_binary(fmt: str, tmp_path: Path) -> None:
    a = np.arange(1000, dtype=np.float64)
    path = tmp_path / f"m{fmt}"
    nx.save(
        path,
        {"x": nx.tensor(a[:3].astype(np.int8)), "y": nx.tensor(a)}
        if fmt != ".npy"
        else nx.tensor(a),
    )
    got = nx.load(path)
    t = got if fmt == ".npy" else got["y"]
    host = t.backend.to_numpy(t)  # the binary backend's own array
    assert _mapped(host) and not host.flags.writeable
    assert _bits(t) == a.tobytes()
    got = nx.load(path, mmap=False)
    t = got if fmt == ".npy" else got["y"]
    assert not _mapped(t.backend.to_numpy(t)) and _bits(t) == a.tobytes()


def test_npz_is_read_not_mapped(tmp_path: Path) -> None:
    nx.save(tmp_path / "z.npz", {"x": nx.tensor([1.0, 2.0])})
    t = nx.load(tmp_path / "z.npz")["x"]
    assert not _mapped(t.backend.to_numpy(t))


def test_saving_over_a_mapped_file_keeps_the_mapped_tensor(tmp_path: Path) -> None:
    # save writes a new file and renames it over the old one: the mapping keeps its data
    path = tmp_path / "o.npy"
    nx.save(path, nx.tensor(np.arange(100, dtype=np.int32)))
    old = nx.load(path)
    nx.save(path, old + 1)
    nx.save(path, nx.tensor([7], dtype=nx.int8))  # smaller: a rewrite in place would cut it
    assert old.tolist() == list(range(100))
    new = nx.load(path)
    assert new.dtype is nx.int8 and new.tolist() == [7]
    assert sorted(os.listdir(tmp_path)) == ["o.npy"]  # no temporary file left


def test_save_writes_through_a_link_with_the_usual_permissions(tmp_path: Path) -> None:
    real = tmp_path / "real.npy"
    nx.save(real, nx.tensor([1]))
    (tmp_path / "link.npy").symlink_to(real)
    nx.save(tmp_path / "link.npy", nx.tensor([2]))
    assert (tmp_path / "link.npy").is_symlink() and nx.load(real).tolist() == [2]
    umask = os.umask(0)
    os.umask(umask)
    assert real.stat().st_mode & 0o777 == 0o666 & ~umask  # not a temporary file's 0o600


def test_computing_on_mapped_tensors(tmp_path: Path) -> None:
    a = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    nx.save(tmp_path / "c.npy", nx.tensor(a))
    t = nx.load(tmp_path / "c.npy")
    np.testing.assert_array_equal(np.asarray(nx.sum(t * 2, axis=0)), (a * 2).sum(axis=0))
    np.testing.assert_array_equal(np.asarray(t.mT @ t), a.T @ a)


# ---------------------------------------------------------------- files others wrote


def test_plain_numpy_files_load(tmp_path: Path) -> None:
    a = np.arange(6, dtype=np.uint16).reshape(2, 3)
    np.save(tmp_path / "p.npy", a)
    t = nx.load(tmp_path / "p.npy")
    assert t.dtype is nx.uint16 and t.tolist() == a.tolist()
    np.save(tmp_path / "f.npy", np.asfortranarray(a))  # Fortran order
    assert nx.load(tmp_path / "f.npy").tolist() == a.tolist()
    np.save(tmp_path / "be.npy", a.astype(">i4"))  # big-endian
    t = nx.load(tmp_path / "be.npy")
    assert t.dtype is nx.int32 and t.tolist() == a.tolist()
    np.savez(tmp_path / "p.npz", a, b=a.astype(np.complex128))
    got = nx.load(tmp_path / "p.npz")
    assert sorted(got) == ["arr_0", "b"] and got["b"].dtype is nx.complex128
    np.savez_compressed(tmp_path / "c.npz", x=a)  # compressed members are read too
    assert nx.load(tmp_path / "c.npz")["x"].tolist() == a.tolist()


def test_plain_safetensors_files_load(tmp_path: Path) -> None:
    bf = np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16)
    safetensors_numpy.save_file(
        {"w": np.arange(4, dtype=np.float16), "bf": bf, "c": np.array([1j], np.complex64)},
        str(tmp_path / "p.safetensors"),
    )
    got = nx.load(tmp_path / "p.safetensors")
    assert got["w"].dtype is nx.float16 and got["w"].tolist() == [0, 1, 2, 3]
    assert got["bf"].dtype is nx.bfloat16 and _bits(got["bf"]) == bf.tobytes()
    assert got["c"].dtype is nx.complex64 and got["c"].tolist() == [1j]  # C64, stored natively


def test_torch_safetensors_files_load(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file

    w = torch.arange(6, dtype=torch.bfloat16).reshape(2, 3)
    save_file(
        {"w": w, "i": torch.tensor([1, 2], dtype=torch.int64)}, str(tmp_path / "t.safetensors")
    )
    got = nx.load(tmp_path / "t.safetensors")
    assert got["w"].dtype is nx.bfloat16 and got["w"].shape == (2, 3)
    assert _bits(got["w"]) == w.view(torch.int16).numpy().tobytes()
    assert got["i"].dtype is nx.int64 and got["i"].tolist() == [1, 2]
    # and torch reads what numerix wrote
    from safetensors.torch import load_file

    nx.save(tmp_path / "n.safetensors", {"x": nx.tensor([1.5, 2.5], dtype=nx.bfloat16)})
    x = load_file(str(tmp_path / "n.safetensors"))["x"]
    assert x.dtype is torch.bfloat16 and x.tolist() == [1.5, 2.5]


# ---------------------------------------------------------------- refusals


def _assert_nothing_written(folder: Path, keep: set[str]) -> None:
    assert set(os.listdir(folder)) == keep


def test_save_refusals(tmp_path: Path) -> None:
    x = nx.tensor([1.0])
    with pytest.raises(
        ArgumentError,
        match=r"numerix.save: '.*a.txt' has no known tensor-file suffix \(got '.txt'\).*\.safetensors.*\.npy.*\.npz",
    ):
        nx.save(tmp_path / "a.txt", x)
    with pytest.raises(ArgumentError, match=r"no known tensor-file suffix \(got 'none'\)"):
        nx.save(tmp_path / "a", x)
    with pytest.raises(
        ArgumentError, match=r"\.npy holds one tensor, got a dict of 1; save a dict to \.npz"
    ):
        nx.save(tmp_path / "a.npy", {"x": x})
    with pytest.raises(
        ArgumentError, match=r"keys of the dict are tensor names and must be str, got int 1"
    ):
        nx.save(tmp_path / "a.npz", {1: x})
    with pytest.raises(ArgumentError, match=r"the value 'b' is str 'text', not a tensor"):
        nx.save(tmp_path / "a.safetensors", {"a": x, "b": "text"})
    with pytest.raises(ArgumentError, match=r"the value 'b' is NoneType None, not a tensor"):
        nx.save(tmp_path / "a.npz", {"a": x, "b": None})
    with pytest.raises(ArgumentError, match=r"the value is object .*, not a tensor"):
        nx.save(tmp_path / "a.npy", object())
    with pytest.raises(ArgumentError, match=r"'__metadata__' is the safetensors header's own"):
        nx.save(tmp_path / "a.safetensors", {"__metadata__": x})
    with pytest.raises(ArgumentError, match=r"the path must be a str or os.PathLike, got int"):
        nx.save(3, x)  # type: ignore[arg-type]
    _assert_nothing_written(tmp_path, set())
    with pytest.raises(FileNotFoundError):
        nx.save(tmp_path / "no" / "such" / "dir.npy", x)
    _assert_nothing_written(tmp_path, set())


def test_a_failed_save_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "keep.npz"
    nx.save(path, {"x": nx.tensor([1, 2])})

    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(np.lib.format, "write_array", broken)
    with pytest.raises(OSError, match="disk full"):
        nx.save(path, {"x": nx.tensor([3, 4])})
    monkeypatch.undo()
    assert nx.load(path)["x"].tolist() == [1, 2]
    _assert_nothing_written(tmp_path, {"keep.npz"})


def test_missing_files_and_folders(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"numerix.load: no such file: '.*gone.npy'"):
        nx.load(tmp_path / "gone.npy")
    os.mkdir(tmp_path / "d.npz")
    with pytest.raises(IsADirectoryError, match=r"numerix.load: a directory"):
        nx.load(tmp_path / "d.npz")
    with pytest.raises(ArgumentError, match=r"no known tensor-file suffix"):
        nx.load(tmp_path / "x.pt")


def _file(tmp_path: Path, fmt: str) -> bytes:
    path = tmp_path / f"good{fmt}"
    a = np.arange(20, dtype=np.float32)
    nx.save(
        path,
        nx.tensor(a)
        if fmt == ".npy"
        else {"a": nx.tensor(a), "b": nx.tensor(a[:3].astype(np.int8))},
    )
    return path.read_bytes()


@pytest.mark.parametrize("mmap_", [True, False], ids=["mmap", "read"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_truncation_is_a_named_error(fmt: str, mmap_: bool, tmp_path: Path) -> None:
    raw = _file(tmp_path, fmt)
    bad = tmp_path / f"bad{fmt}"
    for cut in range(len(raw)):
        bad.write_bytes(raw[:cut])
        with pytest.raises(FileFormatError, match=rf"numerix.load\('.*bad{fmt}'\): ") as e:
            nx.load(bad, mmap=mmap_)
        # no traceback from inside the library chained to it
        err = e.value
        assert err.__cause__ is None and (err.__context__ is None or err.__suppress_context__)


def test_corrupt_headers_are_named_errors(tmp_path: Path) -> None:
    raw = _file(tmp_path, ".npy")
    bad = tmp_path / "bad.npy"
    bad.write_bytes(raw.replace(b"'<f4'", b"'<q9'"))
    with pytest.raises(FileFormatError, match=r"not a readable \.npy file"):
        nx.load(bad)
    bad.write_bytes(b"junk that is not a file at all")
    with pytest.raises(
        FileFormatError,
        match=r"not a \.npy file \(it starts 6a 75 6e 6b 20 74; \.npy files start 93 4e 55 4d 50 59\)",
    ):
        nx.load(bad)
    bad.write_bytes(_file(tmp_path, ".npz"))
    with pytest.raises(FileFormatError, match=r"a \.npz file, not a \.npy file; name it \.npz"):
        nx.load(bad)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(raw)
    with pytest.raises(FileFormatError, match=r"a \.npy file, not a \.npz file; name it \.npy"):
        nx.load(bad)
    z = bytearray(_file(tmp_path, ".npz"))
    z[z.index(b"\x93NUMPY") + 200] ^= 0xFF  # a payload byte: the zip's CRC catches it
    bad.write_bytes(bytes(z))
    with pytest.raises(FileFormatError, match=r"the member 'a' is not a readable array"):
        nx.load(bad)
    raw = _file(tmp_path, ".safetensors")
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(raw.replace(b'"dtype"', b'"dtypo"'))
    with pytest.raises(FileFormatError, match=r"not a readable safetensors file \(.*\)"):
        nx.load(bad)
    bad.write_bytes(raw[:8] + b"{" * 8 + raw[16:])
    with pytest.raises(FileFormatError, match=r"not a readable safetensors file"):
        nx.load(bad)


def _safetensors_file(path: Path, header: dict[str, Any], data: bytes) -> None:
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


def test_dtypes_numerix_does_not_hold_are_named_errors(tmp_path: Path) -> None:
    p = tmp_path / "f8.safetensors"
    _safetensors_file(
        p, {"x": {"dtype": "F8_E4M3", "shape": [2], "data_offsets": [0, 2]}}, b"\x01\x02"
    )
    for mm in (True, False):
        with pytest.raises(
            FileFormatError,
            match=r"the tensor 'x' has safetensors dtype F8_E4M3, which numerix does not hold",
        ):
            nx.load(p, mmap=mm)
    p = tmp_path / "v.npy"
    np.save(p, np.array([1.0], dtype=ml_dtypes.bfloat16))  # numpy's own bfloat16: raw void
    with pytest.raises(
        FileFormatError, match=r"raw 2-byte void items .*numpy writes bfloat16 this way"
    ):
        nx.load(p)
    np.save(p, np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))
    with pytest.raises(FileFormatError, match=r"the array is a structured array"):
        nx.load(p)
    np.save(p, np.array(["ab", "c"]))
    with pytest.raises(FileFormatError, match=r"numpy dtype <U2, which numerix does not hold"):
        nx.load(p)
    np.save(p, np.array([{}, 1], dtype=object), allow_pickle=True)
    with pytest.raises(
        FileFormatError, match=r"not a readable \.npy file \(Object arrays cannot be loaded"
    ):
        nx.load(p, mmap=False)
    p = tmp_path / "o.npz"
    np.savez(p, good=np.ones(2), bad=np.array([None]))
    with pytest.raises(FileFormatError, match=r"the member 'bad' is not a readable array"):
        nx.load(p)


def test_malformed_numerix_metadata_is_a_named_error(tmp_path: Path) -> None:
    data = np.array([[1.0, 2.0]], np.float32).tobytes()
    p = tmp_path / "m.safetensors"
    entry = {"dtype": "F32", "shape": [1, 2], "data_offsets": [0, 8]}
    for meta, match in [
        ("not json", r"'numerix.dtypes' entry is not a JSON object"),
        ('{"y": "complex64"}', r"names 'y' as 'complex64', which the file does not hold"),
        ('{"x": "complex128"}', r"the tensor 'x' \(F32\[1, 2\]\) is not complex128's float pairs"),
        ('{"x": "int8"}', r"names 'x' as 'int8'"),
    ]:
        _safetensors_file(p, {"__metadata__": {"numerix.dtypes": meta}, "x": entry}, data)
        with pytest.raises(FileFormatError, match=match):
            nx.load(p)
    _safetensors_file(
        p, {"__metadata__": {"numerix.dtypes": '{"x": "complex64"}'}, "x": entry}, data
    )
    assert nx.load(p)["x"].tolist() == [1 + 2j]


# ---------------------------------------------------------------- read_idx


def _idx(a: np.ndarray, code: int) -> bytes:
    """An IDX file of ``a``: the oracle writer (big-endian sizes and values)."""
    assert isinstance(a, np.ndarray)  # a numpy scalar would stay in native order
    big = a.astype(a.dtype.newbyteorder(">"))
    head = bytes([0, 0, code, a.ndim]) + b"".join(struct.pack(">I", n) for n in a.shape)
    return head + big.tobytes()


IDX = [
    (np.uint8, 0x08),
    (np.int8, 0x09),
    (np.int16, 0x0B),
    (np.int32, 0x0C),
    (np.float32, 0x0D),
    (np.float64, 0x0E),
]


@pytest.mark.parametrize("zipped", [False, True], ids=["raw", "gzip"])
@pytest.mark.parametrize(("np_dtype", "code"), IDX, ids=[np.dtype(d).name for d, _ in IDX])
def test_read_idx(np_dtype: Any, code: int, zipped: bool, tmp_path: Path) -> None:
    rng = np.random.default_rng(code)
    for shape in [(5,), (3, 4, 2), (), (0, 28, 28)]:
        a = np.asarray(rng.normal(size=shape) * 50).astype(np_dtype)  # 0-d: an array, not a scalar
        data = _idx(a, code)
        if zipped:
            data = gzip.compress(data)
        path = tmp_path / ("f.idx.gz" if zipped else "f.idx")
        path.write_bytes(data)
        for source in (path, str(path), data, bytearray(data), memoryview(data)):
            t = read_idx(source)
            assert t.dtype is nx.dtypes.as_dtype(np.dtype(np_dtype).name) and t.shape == shape
            assert _bits(t) == a.tobytes()
    assert read_idx(data, backend="binary").backend is nx.get_backend("binary")


def test_read_idx_mnist_layout() -> None:
    # MNIST's images: magic 0x00000803, then 3 sizes
    images = np.arange(2 * 28 * 28, dtype=np.uint8).reshape(2, 28, 28)
    data = bytes.fromhex("00000803") + struct.pack(">III", 2, 28, 28) + images.tobytes()
    t = nx.io.read_idx(data)
    assert t.dtype is nx.uint8 and t.shape == (2, 28, 28) and _bits(t) == images.tobytes()
    labels = bytes.fromhex("00000801") + struct.pack(">I", 3) + bytes([7, 2, 1])
    assert nx.io.read_idx(labels).tolist() == [7, 2, 1]


def test_read_idx_refusals(tmp_path: Path) -> None:
    good = _idx(np.arange(6, dtype=np.int16).reshape(2, 3), 0x0B)
    with pytest.raises(
        FileFormatError,
        match=r"read_idx\(<10 bytes>\): the magic number starts 01 00, not 00 00: not an IDX file",
    ):
        read_idx(b"\x01" + good[1:10])
    with pytest.raises(
        FileFormatError,
        match=r"unknown dtype code 0x0A \(IDX has 0x08 uint8, 0x09 int8, 0x0B int16",
    ):
        read_idx(good[:2] + b"\x0a" + good[3:])
    with pytest.raises(FileFormatError, match=r"shorter than IDX's 4-byte magic number"):
        read_idx(good[:3])
    with pytest.raises(
        FileFormatError, match=r"truncated: 2 sizes need 12 header bytes, the file has 9"
    ):
        read_idx(good[:9])
    with pytest.raises(
        FileFormatError,
        match=r"truncated: shape \[2, 3\] of int16 needs 12 data bytes, the file has 11",
    ):
        read_idx(good[:-1])
    with pytest.raises(
        FileFormatError,
        match=r"size mismatch: shape \[2, 3\] of int16 needs 12 data bytes, the file has 13",
    ):
        read_idx(good + b"\x00")
    for cut in range(len(good)):  # every truncation, raw and gzip'd
        with pytest.raises(FileFormatError):
            read_idx(good[:cut])
    zipped = gzip.compress(good)
    for cut in range(2, len(zipped)):
        with pytest.raises(FileFormatError, match=r"truncated|corrupt"):
            read_idx(zipped[:cut])
    p = tmp_path / "bad.idx"
    p.write_bytes(good[:-2])
    with pytest.raises(FileFormatError, match=rf"read_idx\({str(p)!r}\): truncated"):
        read_idx(p)
    with pytest.raises(FileNotFoundError):
        read_idx(tmp_path / "none.idx")
    with pytest.raises(ArgumentError, match=r"takes a path or the file's bytes, got int"):
        read_idx(3)  # type: ignore[arg-type]


# ---------------------------------------------------------------- write_idx


@pytest.mark.parametrize("zipped", [False, True], ids=["raw", "gzip"])
@pytest.mark.parametrize(("np_dtype", "code"), IDX, ids=[np.dtype(d).name for d, _ in IDX])
def test_write_idx_round_trips(np_dtype: Any, code: int, zipped: bool, tmp_path: Path) -> None:
    rng = np.random.default_rng(code)
    path = tmp_path / ("f.idx.gz" if zipped else "f.idx")
    for shape in [(5,), (3, 4, 2), (), (0, 28, 28)]:
        a = np.asarray(rng.normal(size=shape) * 50).astype(np_dtype)
        t = nx.tensor(a)
        for target in (path, str(path)):
            nx.io.write_idx(target, t)
            data = path.read_bytes()
            assert (data[:2] == b"\x1f\x8b") is zipped
            # the bytes are IDX's, as the oracle writes them
            assert (gzip.decompress(data) if zipped else data) == _idx(a, code)
            back = read_idx(target)
            assert back.dtype is t.dtype and back.shape == shape and _bits(back) == a.tobytes()
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_write_idx_to_a_file_object_and_from_other_sources(tmp_path: Path) -> None:
    images = np.arange(2 * 28 * 28, dtype=np.uint8).reshape(2, 28, 28)
    f = io.BytesIO()
    nx.io.write_idx(f, nx.tensor(images))
    data = f.getvalue()
    assert data[:16] == bytes.fromhex("00000803") + struct.pack(">III", 2, 28, 28)  # MNIST's
    assert data == _idx(images, 0x08)
    with gzip.GzipFile(fileobj=(z := io.BytesIO()), mode="wb") as g:
        nx.io.write_idx(g, images)  # a numpy array: anything asarray takes
    assert read_idx(z.getvalue()).tolist() == images.tolist()
    nx.io.write_idx(tmp_path / "l.idx", [0.5, 1.5])  # a list: float32, as asarray makes it
    assert read_idx(tmp_path / "l.idx").describe() == "f32[2] binary(cpu)"


@pytest.mark.parametrize("backend", ["binary", "xla", "torch"])
def test_write_idx_from_a_backend(backend: str, tmp_path: Path) -> None:
    if backend not in nx.plugins.backend_entries():
        pytest.skip(f"numerix-{backend} is not installed")
    t = nx.tensor([[1, -2, 3]], dtype=nx.int16, backend=backend)
    nx.io.write_idx(tmp_path / "t.idx.gz", t)  # through the host
    assert _bits(read_idx(tmp_path / "t.idx.gz")) == np.array([[1, -2, 3]], np.int16).tobytes()


def test_write_idx_refusals(tmp_path: Path) -> None:
    held = {np.dtype(d).name for d, _ in IDX}
    for dt in [d for d in ALL if d.name not in held]:
        path = tmp_path / "x.idx"
        with pytest.raises(
            nx.errors.UnsupportedDTypeError,
            match=rf"write_idx\({str(path)!r}, \.\.\.\): IDX has no code for {dt.name} "
            rf"\(IDX holds 0x08 uint8, .*0x0E float64\); (cast it first: t\.astype|store its)",
        ):
            nx.io.write_idx(path, nx.zeros((2,), dtype=dt))
        assert not list(tmp_path.iterdir())  # nothing written
    with pytest.raises(nx.errors.UnsupportedDTypeError, match=r"t\.astype\(numerix\.uint8\)"):
        nx.io.write_idx(io.BytesIO(), nx.tensor([True]))
    with pytest.raises(nx.errors.UnsupportedDTypeError, match=r"numerix\.stack\(\[numerix\.real"):
        nx.io.write_idx(io.BytesIO(), nx.tensor([1j]))
    huge = nx.broadcast_to(nx.zeros((1,), dtype=nx.uint8), (2**32,))  # a view: nothing copied
    with pytest.raises(ArgumentError, match=r"below 2\*\*32; got shape \[4294967296\]"):
        nx.io.write_idx(io.BytesIO(), huge)
    with pytest.raises(ArgumentError, match=r"takes a path or a binary file object .*got int"):
        nx.io.write_idx(3, nx.zeros((2,)))  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match=r"write_idx\(<file>, \.\.\.\): the value is str"):
        nx.io.write_idx(io.BytesIO(), "digits")


# ---------------------------------------------------------------- numpy's writers


def test_np_save_of_bfloat16_names_numerix_save_with_the_path(tmp_path: Path) -> None:
    t = nx.tensor([1.0, 2.0], dtype=nx.bfloat16)
    path = str(tmp_path / "w")
    with pytest.raises(NumpyFunctionError, match=rf"call numerix\.save\({(path + '.npy')!r}, t\)"):
        np.save(path, t)
    with pytest.raises(
        NumpyFunctionError, match=rf"numerix\.save\({(path + '.npz')!r}, \{{'name': t, \.\.\.\}}\)"
    ):
        np.savez(path + ".npz", a=t)
    with pytest.raises(NumpyFunctionError, match=r"numerix\.save\(path, t\)"):
        with open(path + ".npy", "wb") as f:
            np.save(f, t)
    # the message's call does what it says
    nx.save(path + ".npy", t)
    back = nx.load(path + ".npy")
    assert back.dtype is nx.bfloat16 and back.tolist() == [1.0, 2.0]
    # other dtypes are numpy's to write, as before
    np.save(path + "f.npy", nx.tensor([1.5]))
    assert np.load(path + "f.npy").tolist() == [1.5]
