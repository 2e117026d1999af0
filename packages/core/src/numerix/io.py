"""Tensor files: :func:`save` and :func:`load` in safetensors, ``.npy`` and ``.npz``, and
:func:`read_idx` / :func:`write_idx` for the IDX format of MNIST.

The format is the file's suffix:

- ``.safetensors``: a dict of tensors (the format PyTorch, JAX and Hugging Face users
  share; written and checked by the ``safetensors`` library, a dependency of numerix
  imported on first use). A single tensor is saved under the key ``"tensor"``; loading always
  gives a dict.
- ``.npy``: one tensor (numpy's format); loading gives a tensor.
- ``.npz``: a dict of tensors (numpy's uncompressed ``savez`` zip); loading gives a dict.

Every numerix dtype comes back bit for bit in every format. Where a format has no code
for a dtype, numerix stores it losslessly in a form any reader can still open:
bfloat16 in ``.npy``/``.npz`` is a structured array of one field named ``bfloat16``
holding the 16 bits as ``uint16`` (numpy itself would write an anonymous 2-byte void,
which loads back as bytes); complex tensors in safetensors are their real and imaginary
parts as a trailing axis of 2 floats, named in the header's ``__metadata__`` under
``"numerix.dtypes"``. Files numerix did not write (numpy's, PyTorch's, JAX's) load as
they are.

Files are written to a temporary file beside the target and renamed over it: a failed
save leaves no partial file, and a tensor memory-mapped from the old file keeps its
data. A file that cannot be read (corrupt header, truncated data, an unknown dtype) is a
:class:`~numerix.errors.FileFormatError` naming the path and what is wrong; no tensor of
it is returned.
"""

from __future__ import annotations

import errno
import gzip
import json
import math
import os
import secrets
import zipfile
import zlib
from collections.abc import Callable, Mapping
from contextlib import suppress
from typing import IO, Any

import numpy as np

from numerix import dtypes
from numerix._array_api import placement
from numerix._tensor import Tensor
from numerix.errors import ArgumentError, FileFormatError

__all__ = ["save", "load", "read_idx", "write_idx", "FORMATS", "SINGLE_KEY"]

#: the suffixes :func:`save` and :func:`load` know, and what each holds
FORMATS = {
    ".safetensors": "a dict of tensors (safetensors)",
    ".npy": "one tensor (numpy .npy)",
    ".npz": "a dict of tensors (numpy .npz, uncompressed)",
}
#: the key a single tensor saved to ``.safetensors`` is stored under
SINGLE_KEY = "tensor"
#: the ``__metadata__`` entry of a safetensors file naming the dtypes numerix stored in
#: another form (a JSON object: key -> numerix dtype name)
META_DTYPES = "numerix.dtypes"

_BF16 = dtypes.bfloat16.numpy_dtype
#: how .npy/.npz hold bfloat16: a record of one uint16 field of this name
_BF16_RECORD = np.dtype([("bfloat16", "<u2")])
#: safetensors' dtype codes for the dtypes it has (complex stored as float pairs)
_ST_CODES: dict[str, np.dtype[Any]] = {
    "BOOL": np.dtype(np.bool_), "U8": np.dtype(np.uint8), "I8": np.dtype(np.int8),
    "U16": np.dtype("<u2"), "I16": np.dtype("<i2"), "U32": np.dtype("<u4"),
    "I32": np.dtype("<i4"), "U64": np.dtype("<u8"), "I64": np.dtype("<i8"),
    "F16": np.dtype("<f2"), "BF16": _BF16, "F32": np.dtype("<f4"), "F64": np.dtype("<f8"),
    "C64": np.dtype("<c8"),
}  # fmt: skip
_PAIRS: dict[str, np.dtype[Any]] = {"complex64": np.dtype("<f4"), "complex128": np.dtype("<f8")}
#: IDX dtype codes (big-endian data)
_IDX_CODES: dict[int, np.dtype[Any]] = {
    0x08: np.dtype("u1"), 0x09: np.dtype("i1"), 0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8"),
}  # fmt: skip
#: the IDX code of each numpy dtype IDX holds (by name: the data is written big-endian)
_IDX_WRITE = {d.newbyteorder("=").name: c for c, d in _IDX_CODES.items()}


# ---------------------------------------------------------------- save


def save(path: str | os.PathLike[str], value: Any) -> None:
    """Write a tensor, or a dict of tensors by name, to ``path``; its suffix picks the
    format (``.safetensors``, ``.npy``, ``.npz``, see :data:`FORMATS`).

    ``value`` is a :class:`~numerix.Tensor` (or anything :func:`numerix.asarray` takes)
    or, for ``.safetensors`` and ``.npz``, a dict of them keyed by str. A single tensor
    saved to ``.safetensors`` is stored under the key ``"tensor"`` (:data:`SINGLE_KEY`),
    so ``numerix.load(path)["tensor"]`` reads it back; to ``.npz`` under ``"arr_0"``, as
    ``numpy.savez`` names it. The tensors are read to host memory (a copy from a device).

    The file is written beside ``path`` and renamed over it: a failed save leaves the
    old file, and a tensor memory-mapped from the old file keeps its data.

    Raises :class:`~numerix.errors.ArgumentError` for an unknown suffix, a dict to
    ``.npy``, a key that is not a str or a value that is not a tensor.
    """
    fmt = _format(path, "save")
    arrays = _host_arrays(path, fmt, value)
    if fmt == ".npy":
        (arr,) = arrays.values()
        _atomic(path, lambda f: np.lib.format.write_array(f, _npy_form(arr), allow_pickle=False))
    elif fmt == ".npz":
        _atomic(path, lambda f: _write_npz(f, arrays))
    else:
        _save_safetensors(path, arrays)


def _format(path: Any, op: str) -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentError(
            f"numerix.{op}: the path must be a str or os.PathLike, got {type(path).__name__}"
        )
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in FORMATS:
        known = "; ".join(f"{s}: {what}" for s, what in FORMATS.items())
        raise ArgumentError(
            f"numerix.{op}: {os.fspath(path)!r} has no known tensor-file suffix "
            f"(got {suffix or 'none'!r}); the formats are {known}"
        )
    return suffix


def _host_arrays(path: Any, fmt: str, value: Any) -> dict[str, np.ndarray]:
    where = f"numerix.save({os.fspath(path)!r}, ...)"
    if isinstance(value, Mapping):
        if fmt == ".npy":
            raise ArgumentError(
                f"{where}: .npy holds one tensor, got a dict of {len(value)}; save a dict "
                f"to .npz or .safetensors, or one tensor to .npy"
            )
        items = list(value.items())
        for k, _ in items:
            if not isinstance(k, str):
                raise ArgumentError(
                    f"{where}: the keys of the dict are tensor names and must be str, got "
                    f"{type(k).__name__} {k!r:.60}"
                )
        if fmt == ".safetensors" and "__metadata__" in value:
            raise ArgumentError(
                f"{where}: the key '__metadata__' is the safetensors header's own; rename "
                f"that tensor"
            )
    else:
        items = [(SINGLE_KEY if fmt == ".safetensors" else "arr_0", value)]
        if fmt == ".npy":
            items = [("", value)]
    return {k: _host(where, k, v) for k, v in items}


def _host(where: str, key: str, v: Any) -> np.ndarray:
    return _to_host(_tensor(where, key, v))


def _tensor(where: str, key: str, v: Any) -> Tensor:
    from numerix.errors import NumerixError
    from numerix.ops.creation import asarray

    if not isinstance(v, Tensor):
        if v is None or isinstance(v, (str, bytes, Mapping)):
            raise ArgumentError(_not_a_tensor(where, key, v))
        try:
            v = asarray(v)
        except NumerixError:
            raise ArgumentError(_not_a_tensor(where, key, v)) from None
    return v


def _to_host(v: Tensor) -> np.ndarray:
    a = v.to_numpy()
    # a C-ordered copy where needed (np.ascontiguousarray would make a 0-d array 1-d)
    return a if a.flags.c_contiguous else a.copy(order="C")


def _not_a_tensor(where: str, key: str, v: Any) -> str:
    name = f" {key!r}" if key else ""
    return (
        f"{where}: the value{name} is {type(v).__name__} {v!r:.60}, not a tensor; save "
        f"tensors (or numbers, lists of numbers, numpy arrays)"
    )


def _npy_form(arr: np.ndarray) -> np.ndarray:
    # bfloat16 has no .npy code: a record of its bits, which loads back as itself
    return arr.view(_BF16_RECORD) if arr.dtype == _BF16 else arr


def _write_npz(f: IO[bytes], arrays: dict[str, np.ndarray]) -> None:
    # numpy.savez's layout (an uncompressed zip of .npy members), written here so that
    # any str is a key (savez's own keywords 'file' and 'allow_pickle' included)
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for key, arr in arrays.items():
            with zf.open(key + ".npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, _npy_form(arr), allow_pickle=False)


def _save_safetensors(path: Any, arrays: dict[str, np.ndarray]) -> None:
    st = _safetensors("save", path)
    stored: dict[str, np.ndarray] = {}
    renamed: dict[str, str] = {}
    for key, arr in arrays.items():
        pair = _PAIRS.get(arr.dtype.name)
        if pair is not None:  # complex: (re, im) on a trailing axis
            renamed[key] = arr.dtype.name
            arr = arr.reshape(arr.shape + (1,)).view(pair)
        stored[key] = arr
    metadata = {META_DTYPES: json.dumps(renamed, sort_keys=True)} if renamed else None
    _atomic(path, None, write_name=lambda name: st.save_file(stored, name, metadata=metadata))


def _atomic(
    path: Any,
    write: Callable[[IO[bytes]], Any] | None,
    *,
    write_name: Callable[[str], Any] | None = None,
) -> None:
    # a new file beside the target (the same file system), renamed over it once whole;
    # a symbolic link is written through, to the file it names
    target = os.path.realpath(os.fspath(path))
    folder, base = os.path.split(target)
    tmp = os.path.join(folder, f".{base}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
    try:
        with os.fdopen(fd, "wb") as f:
            if write is not None:
                write(f)
        if write_name is not None:
            write_name(tmp)
        os.replace(tmp, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise


def _safetensors(op: str, path: Any) -> Any:
    try:
        import safetensors.numpy
    except ImportError:
        raise ImportError(
            f"numerix.{op}({os.fspath(path)!r}): the safetensors format needs the "
            f"safetensors package, a dependency of numerix: pip install safetensors"
        ) from None
    return safetensors.numpy


# ---------------------------------------------------------------- load


def load(
    path: str | os.PathLike[str],
    backend: Any = None,
    *,
    device: Any = None,
    mmap: bool = True,
) -> Any:
    """Read a tensor file written by :func:`save` or by numpy, PyTorch or JAX; its
    suffix picks the format (see :data:`FORMATS`).

    ``.npy`` gives a :class:`~numerix.Tensor`; ``.safetensors`` and ``.npz`` a dict of
    name -> tensor (a ``.npz``'s in the file's order, a ``.safetensors``' sorted by name).
    The tensors are made on ``backend`` (a name or instance; None: the default backend),
    or on ``device`` (a :class:`numerix.Device`).

    With ``mmap=True`` (the default) ``.npy`` files and the tensors of ``.safetensors``
    files are memory-mapped rather than read: on the binary backend the tensor's data is
    the read-only mapping of the file itself (pages are read as they are used), on the
    others the mapping is what the backend copies to its memory. ``.npz`` members are
    read. A memory-mapped tensor needs its file unchanged while it lives (:func:`save`
    replaces files rather than rewriting them, which keeps the old data mapped).
    ``mmap=False`` reads everything into memory.

    Raises ``FileNotFoundError`` for a missing file and
    :class:`~numerix.errors.FileFormatError` for a corrupt or truncated one, or one
    holding a dtype numerix does not have; nothing is returned then.
    """
    from numerix.ops._core import from_numpy

    fmt = _format(path, "load")
    target = placement("load", device, backend)
    name = os.fspath(path)
    if not os.path.exists(name):
        raise FileNotFoundError(errno.ENOENT, "numerix.load: no such file", name)
    if os.path.isdir(name):
        raise IsADirectoryError(errno.EISDIR, "numerix.load: a directory, not a file", name)
    if fmt == ".npy":
        return from_numpy(_read_npy(name, mmap), backend=target)
    arrays = _read_npz(name) if fmt == ".npz" else _read_safetensors(name, mmap)
    # every array is read and checked before the first tensor is made
    return {k: from_numpy(a, backend=target) for k, a in arrays.items()}


def _bad(path: str, what: str) -> FileFormatError:
    return FileFormatError(f"numerix.load({path!r}): {what}")


def _from_file(path: str, arr: np.ndarray, what: str) -> np.ndarray:
    """``arr`` as numerix holds it: bfloat16 records as bfloat16, a memory map as a plain
    read-only ndarray over the same pages; other dtypes refused by name."""
    if isinstance(arr, np.memmap):
        arr = arr.view(np.ndarray)
    dt = arr.dtype
    if dt == _BF16:  # ml_dtypes' kind is "V" too
        return arr
    if dt.names is not None:
        if dt.names == ("bfloat16",) and dt.itemsize == 2 and dt["bfloat16"].kind == "u":
            return arr.view(_BF16)
        raise _bad(path, f"{what} is a structured array ({dt}); numerix holds plain numbers")
    if dt.kind == "V":
        hint = (
            " (numpy writes bfloat16 this way, dropping the dtype; read it with "
            "numerix.from_numpy(np.load(path).view(ml_dtypes.bfloat16)) if it is one)"
            if dt.itemsize == 2
            else ""
        )
        raise _bad(path, f"{what} holds raw {dt.itemsize}-byte void items ({dt.str}){hint}")
    if dt.kind not in "biufc":
        raise _bad(path, f"{what} has numpy dtype {dt}, which numerix does not hold")
    if not dt.isnative:  # a big-endian file: read into this machine's order
        arr = arr.astype(dt.newbyteorder("="))
    try:
        dtypes.from_numpy_dtype(arr.dtype, "load")
    except Exception:
        raise _bad(path, f"{what} has numpy dtype {dt}, which numerix does not hold") from None
    return arr


_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = b"PK\x03\x04"


def _check_magic(path: str, fmt: str) -> None:
    # np.load takes anything else for a pickle: name what the file is instead
    with open(path, "rb") as f:
        head = f.read(6)
    want, other, name = (
        (_NPY_MAGIC, _ZIP_MAGIC, ".npz") if fmt == ".npy" else (_ZIP_MAGIC, _NPY_MAGIC, ".npy")
    )
    if head.startswith(want):
        return
    if head.startswith(other):
        raise _bad(path, f"a {name} file, not a {fmt} file; name it {name}")
    what = "empty" if not head else f"it starts {head.hex(' ')}"
    raise _bad(path, f"not a {fmt} file ({what}; {fmt} files start {want.hex(' ')})")


def _read_npy(path: str, mmap: bool) -> np.ndarray:
    _check_magic(path, ".npy")
    try:
        arr = np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
    except Exception as e:
        raise _bad(path, f"not a readable .npy file ({_why(e)})") from None
    return _from_file(path, arr, "the array")


def _read_npz(path: str) -> dict[str, np.ndarray]:
    _check_magic(path, ".npz")
    out: dict[str, np.ndarray] = {}
    try:
        with np.load(path, allow_pickle=False) as z:
            for key in z.files:
                try:
                    arr = z[key]
                except Exception as e:
                    raise _bad(
                        path, f"the member {key!r} is not a readable array ({_why(e)})"
                    ) from None
                out[key] = _from_file(path, arr, f"the member {key!r}")
    except FileFormatError:
        raise
    except Exception as e:
        raise _bad(path, f"not a readable .npz file, corrupt or truncated ({_why(e)})") from None
    return out


def _why(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def _read_safetensors(path: str, mmap: bool) -> dict[str, np.ndarray]:
    st = _safetensors("load", path)
    # the library checks the header and the offsets against the file's size
    try:
        with st.safe_open(path, framework="numpy") as f:
            meta: dict[str, str] = f.metadata() or {}
            header: dict[str, tuple[str, tuple[int, ...]]] = {}
            for k in sorted(f.keys()):
                piece = f.get_slice(k)
                header[k] = (piece.get_dtype(), tuple(piece.get_shape()))
                if header[k][0] not in _ST_CODES:
                    raise _bad(path, f"the tensor {k!r} has safetensors dtype {header[k][0]}, "
                               f"which numerix does not hold")  # fmt: skip
            arrays = {} if mmap else {k: f.get_tensor(k) for k in header}
    except FileFormatError:
        raise
    except Exception as e:
        raise _bad(path, f"not a readable safetensors file ({_why(e)})") from None
    if mmap:
        arrays = _map_safetensors(path, header)
    renamed = _renamed(path, meta, header)
    out: dict[str, np.ndarray] = {}
    for k, (code, shape) in header.items():
        arr = arrays[k]
        if arr.dtype != _ST_CODES[code]:
            arr = arr.view(_ST_CODES[code])
        arr = arr.reshape(shape)
        if k in renamed:
            arr = arr.view(renamed[k])[..., 0]
        out[k] = _from_file(path, arr, f"the tensor {k!r}")
    return out


def _renamed(
    path: str, meta: Mapping[str, str], header: Mapping[str, tuple[str, tuple[int, ...]]]
) -> dict[str, np.dtype]:
    text = meta.get(META_DTYPES)
    if text is None:
        return {}
    try:
        named = json.loads(text)
        assert isinstance(named, dict)
    except Exception:
        raise _bad(path, f"the header's {META_DTYPES!r} entry is not a JSON object") from None
    out: dict[str, np.dtype] = {}
    for k, name in named.items():
        pair = _PAIRS.get(name)
        if k not in header or pair is None:
            raise _bad(path, f"the header's {META_DTYPES!r} entry names {k!r} as {name!r}, "
                       f"which the file does not hold as a pair of floats")  # fmt: skip
        code, shape = header[k]
        if _ST_CODES[code] != pair or not shape or shape[-1] != 2:
            raise _bad(path, f"the tensor {k!r} ({code}{list(shape)}) is not {name}'s float "
                       f"pairs (a trailing axis of 2 {pair.name})")  # fmt: skip
        out[k] = np.dtype(name)
    return out


def _map_safetensors(
    path: str, header: Mapping[str, tuple[str, tuple[int, ...]]]
) -> dict[str, np.ndarray]:
    # the library gives numpy a copy; the header (already checked by it) gives the offsets
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        entries = json.loads(f.read(n))
    out: dict[str, np.ndarray] = {}
    for k, (code, shape) in header.items():
        begin = entries[k]["data_offsets"][0]
        dt = _ST_CODES[code]
        count = math.prod(shape)
        if count == 0:
            out[k] = np.empty(shape, dt)
            continue
        mapped = np.memmap(path, dtype=dt, mode="r", offset=8 + n + begin, shape=(count,))
        # an odd offset (after a narrower tensor): read it rather than keep it unaligned
        out[k] = mapped if mapped.flags.aligned else np.array(mapped)
    return out


# ---------------------------------------------------------------- IDX


def read_idx(
    path_or_bytes: str | os.PathLike[str] | bytes | bytearray | memoryview, *, backend: Any = None
) -> Tensor:
    """The tensor of an IDX file (the format of the MNIST data sets), from a path or the
    file's bytes, gzip-compressed or not (detected by gzip's magic bytes).

    IDX is big-endian: two zero bytes, a dtype code (``0x08`` uint8, ``0x09`` int8,
    ``0x0B`` int16, ``0x0C`` int32, ``0x0D`` float32, ``0x0E`` float64), the number of
    dimensions, each size as a 4-byte unsigned int, then the values. The tensor has
    that dtype and shape, on ``backend`` (None: the default backend).

    Raises :class:`~numerix.errors.FileFormatError` for a wrong magic number, an unknown
    dtype code, or data shorter or longer than the sizes say; ``FileNotFoundError`` for
    a missing file.
    """
    from numerix.ops._core import from_numpy

    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        data, where = bytes(path_or_bytes), f"<{len(path_or_bytes)} bytes>"
    elif isinstance(path_or_bytes, (str, os.PathLike)):
        where = repr(os.fspath(path_or_bytes))
        with open(path_or_bytes, "rb") as f:
            data = f.read()
    else:
        raise ArgumentError(
            f"numerix.io.read_idx: takes a path or the file's bytes, got "
            f"{type(path_or_bytes).__name__}"
        )

    def bad(what: str) -> FileFormatError:
        return FileFormatError(f"numerix.io.read_idx({where}): {what}")

    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise bad(f"a corrupt or truncated gzip stream ({_why(e)})") from None
    if len(data) < 4:
        raise bad(f"{len(data)} bytes, shorter than IDX's 4-byte magic number")
    if data[:2] != b"\x00\x00":
        raise bad(f"the magic number starts {data[:2].hex(' ')}, not 00 00: not an IDX file")
    code, ndim = data[2], data[3]
    dt = _IDX_CODES.get(code)
    if dt is None:
        known = ", ".join(f"0x{c:02X} {d.name}" for c, d in _IDX_CODES.items())
        raise bad(f"unknown dtype code 0x{code:02X} (IDX has {known})")
    start = 4 + 4 * ndim
    if len(data) < start:
        raise bad(f"truncated: {ndim} sizes need {start} header bytes, the file has {len(data)}")
    shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    want = math.prod(shape) * dt.itemsize
    got = len(data) - start
    if got != want:
        state = "truncated" if got < want else "size mismatch"
        raise bad(f"{state}: shape {list(shape)} of {dt.name} needs {want} data bytes, "
                  f"the file has {got}")  # fmt: skip
    arr = np.frombuffer(data, dtype=dt, count=math.prod(shape), offset=start).reshape(shape)
    return from_numpy(arr.astype(dt.newbyteorder("="), copy=False), backend=backend)


def write_idx(path_or_file: str | os.PathLike[str] | IO[bytes], array: Any) -> None:
    """Write ``array`` (a :class:`~numerix.Tensor`, or anything :func:`numerix.asarray`
    takes) as an IDX file, the inverse of :func:`read_idx`: to a path, gzip-compressed
    when it ends with ``.gz``, or to a binary file object (uncompressed; wrap it in
    ``gzip.GzipFile`` to compress).

    The file is IDX's big-endian layout: two zero bytes, the dtype code, the number of
    dimensions, each size as a 4-byte unsigned int, then the values in C order. A path
    is written beside itself and renamed over, as :func:`save` does.

    >>> import io
    >>> import numerix as nx
    >>> f = io.BytesIO()
    >>> nx.io.write_idx(f, nx.tensor([[7, 2, 1]], dtype=nx.uint8))
    >>> f.getvalue().hex(" ")
    '00 00 08 02 00 00 00 01 00 00 00 03 07 02 01'
    >>> nx.io.read_idx(f.getvalue()).tolist()
    [[7, 2, 1]]

    Raises :class:`~numerix.errors.UnsupportedDTypeError` for a dtype IDX has no code
    for (IDX holds uint8, int8, int16, int32, float32 and float64: cast first, e.g.
    ``t.astype(numerix.int32)``), :class:`~numerix.errors.ArgumentError` for a size of
    2**32 or more (IDX's sizes are 4-byte) or a value that is not a tensor.
    """
    file: IO[bytes] | None = None
    if isinstance(path_or_file, (str, os.PathLike)):
        target = os.fspath(path_or_file)
        where = f"numerix.io.write_idx({target!r}, ...)"
    elif callable(getattr(path_or_file, "write", None)):
        file, target, where = path_or_file, "", "numerix.io.write_idx(<file>, ...)"
    else:
        raise ArgumentError(
            f"numerix.io.write_idx: takes a path or a binary file object to write to, got "
            f"{type(path_or_file).__name__}"
        )
    t = _tensor(where, "", array)
    code = _idx_code(where, t)  # checked before the data is copied to the host
    data = _idx_header(code, t.shape) + _to_host(t).astype(_IDX_CODES[code]).tobytes()
    if file is not None:
        file.write(data)
        return
    if target.lower().endswith(".gz"):
        data = gzip.compress(data, mtime=0)  # no time stamp: the same data, the same bytes
    _atomic(target, lambda f: f.write(data))


def _idx_code(where: str, t: Tensor) -> int:
    from numerix.errors import UnsupportedDTypeError

    code = _IDX_WRITE.get(t.dtype.name)
    if code is None:
        known = ", ".join(f"0x{c:02X} {d.name}" for c, d in _IDX_CODES.items())
        raise UnsupportedDTypeError(
            f"{where}: IDX has no code for {t.dtype.name} (IDX holds {known}); "
            f"{_idx_fix(t.dtype.numpy_dtype)}"
        )
    if any(n >= 2**32 for n in t.shape):
        raise ArgumentError(
            f"{where}: IDX sizes are 4-byte unsigned ints, below 2**32; got shape {list(t.shape)}"
        )
    return code


def _idx_header(code: int, shape: tuple[int, ...]) -> bytes:
    return bytes([0, 0, code, len(shape)]) + b"".join(n.to_bytes(4, "big") for n in shape)


def _idx_fix(dt: np.dtype[Any]) -> str:
    """How to make a tensor of ``dt`` one IDX holds."""
    if dt.kind == "c":
        return (
            "store its real and imaginary parts on a trailing axis, "
            "numerix.stack([numerix.real(t), numerix.imag(t)], axis=-1)"
        )
    if dt.kind == "b":
        return "cast it first: t.astype(numerix.uint8)"
    if dt.kind in "iu":
        fits = "" if dt.itemsize < 4 else " (if its values fit; or numerix.float64)"
        return f"cast it first: t.astype(numerix.int32){fits}"
    return "cast it first: t.astype(numerix.float32)"
