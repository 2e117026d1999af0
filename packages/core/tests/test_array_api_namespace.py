"""numerix as an array API namespace: the version, ``__array_namespace__``, the inspection
object, devices and the ``device=`` keyword of the creation functions, ``from_dlpack``,
``asarray``'s ``copy``, ``__dlpack__``, ``to_device`` and the in-place operators (numpy is
the oracle)."""

from __future__ import annotations

import inspect
import pickle

import numpy as np
import pytest

import numerix as nx
from numerix import plugins

OTHER = next((b for b in ("torch", "xla") if b in plugins.backend_entries()), None)
needs_other = pytest.mark.skipif(OTHER is None, reason="a second backend (torch or xla)")

DTYPES = ["bool", "int8", "uint16", "int32", "int64", "float32", "float64", "complex64"]
SHAPES = [(), (0,), (1,), (2, 3), (3, 0, 2)]


def check(got: nx.Tensor, want: np.ndarray) -> None:
    assert type(got) is nx.Tensor
    assert got.dtype.name == want.dtype.name, (got.dtype, want.dtype)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


# ------------------------------------------------------------ version and namespace
def test_the_module_is_a_2024_12_namespace() -> None:
    x = nx.tensor([1.0])
    assert nx.__array_api_version__ == "2024.12"
    assert x.__array_namespace__() is nx
    for v in ("2021.12", "2022.12", "2023.12", "2024.12"):
        assert x.__array_namespace__(api_version=v) is nx


@pytest.mark.parametrize("version", ["2025.12", "2020.10", "latest", 2024.12])
def test_an_unknown_api_version_is_refused_by_name(version: object) -> None:
    with pytest.raises(
        nx.ArgumentError,
        match=r"^__array_namespace__: array API version .* is not served; numerix implements 2021\.12",
    ):
        nx.tensor(1).__array_namespace__(api_version=version)  # type: ignore[arg-type]


def test_array_namespace_takes_api_version_by_keyword_only() -> None:
    with pytest.raises(TypeError):
        nx.tensor(1).__array_namespace__("2024.12")  # type: ignore[misc,unused-ignore]


# ------------------------------------------------------------ the inspection object
def test_capabilities() -> None:
    caps = nx.__array_namespace_info__().capabilities()
    assert caps == {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}


def test_default_dtypes_are_those_numerix_gives_python_numbers() -> None:
    info = nx.__array_namespace_info__()
    got = info.default_dtypes()
    assert got == {
        "real floating": nx.tensor([1.0]).dtype,
        "complex floating": nx.tensor([1j]).dtype,
        "integral": nx.tensor([1]).dtype,
        "indexing": nx.argmax(nx.tensor([1, 2])).dtype,
    }
    assert got["real floating"] is nx.float32 and got["indexing"] is nx.int64
    assert info.default_dtypes(device=info.default_device()) == got


KINDS: dict[object, list[str]] = {
    None: "b iu iu f c".split(),
    "bool": ["b"],
    "signed integer": ["i"],
    "unsigned integer": ["u"],
    "integral": ["iu"],
    "real floating": ["f"],
    "complex floating": ["c"],
    "numeric": ["iufc"],
    ("bool", "complex floating"): ["bc"],
}
STANDARD = [np.dtype(n) for n in ("bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 "
                                  "float32 float64 complex64 complex128").split()]  # fmt: skip


@pytest.mark.parametrize("kind", list(KINDS), ids=str)
def test_dtypes_by_kind_are_the_standards_of_that_kind(kind: object) -> None:
    letters = "".join(KINDS[kind])
    want = [d.name for d in STANDARD if d.kind in letters]
    got = nx.__array_namespace_info__().dtypes(kind=kind)
    assert list(got) == want
    assert all(got[n] is nx.dtypes.as_dtype(n) for n in want)
    assert "float16" not in got and "bfloat16" not in got


def test_dtypes_refuses_an_unknown_kind_by_name() -> None:
    with pytest.raises(nx.DTypeError, match=r"^dtypes: unknown kind 'floating'; give None"):
        nx.__array_namespace_info__().dtypes(kind="floating")
    with pytest.raises(nx.DTypeError, match=r"^dtypes: unknown kind 'x'"):
        nx.__array_namespace_info__().dtypes(kind=("bool", "x"))


def test_devices_are_the_default_backends_and_hold_the_default_device() -> None:
    info = nx.__array_namespace_info__()
    devices = info.devices()
    assert type(devices) is list and all(type(d) is nx.Device for d in devices)
    assert [d.spec for d in devices] == nx.devices(nx.get_default_backend().name)
    assert info.default_device() in devices
    assert info.default_device() == nx.tensor(1).device
    for d in devices:  # every listed device takes every listed dtype
        for dt in info.dtypes(device=d).values():
            assert nx.empty(1, dtype=dt, device=d).device == d


def test_info_functions_take_only_keywords_as_the_standard_says() -> None:
    info = nx.__array_namespace_info__()
    for name in ("default_dtypes", "dtypes"):
        params = inspect.signature(getattr(info, name)).parameters.values()
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)
    with pytest.raises(nx.BackendNotFoundError, match=r"^get_backend: no backend named 'nope'"):
        info.dtypes(device="nope")


# ------------------------------------------------------------ devices
def test_a_device_names_the_backend_instance_and_reads_as_todays_string() -> None:
    x, y = nx.tensor([1.0]), nx.zeros((2, 2), nx.int8)
    d = x.device
    assert type(d) is nx.Device and d.backend is x.backend
    assert d == y.device and hash(d) == hash(y.device)
    assert str(d) == x.backend.device == "cpu" and d == "cpu" and d != "cuda:0"
    assert repr(d) == "Device('binary:cpu')" and d.spec == "binary:cpu"
    assert {d, y.device} == {d}
    assert pickle.loads(pickle.dumps(d)) == d
    assert d != 1 and d != x.backend
    with pytest.raises(AttributeError, match="Device is immutable"):
        d.backend = y.backend


@needs_other
def test_devices_of_two_backends_differ() -> None:
    a, b = nx.tensor([1.0]), nx.tensor([1.0], backend=OTHER)
    assert a.device != b.device and b.device.backend is b.backend
    assert b.device == nx.tensor([2], backend=OTHER).device
    assert b.device.spec in nx.devices(OTHER)


# ------------------------------------------------------------ device= on creation
def _creations(device: object) -> list[tuple[nx.Tensor, np.ndarray]]:
    base = np.arange(6, dtype=np.int16).reshape(2, 3)
    x = nx.tensor(base)
    return [
        (nx.asarray([1, 2], device=device), np.array([1, 2])),
        (nx.arange(1, 7, 2, device=device), np.arange(1, 7, 2)),
        (nx.arange(0.5, device=device), np.arange(0.5, dtype=np.float32)),
        (nx.empty((2, 0), device=device), np.empty((2, 0), np.float32)),
        (nx.empty_like(x, device=device), np.zeros_like(base)),
        (nx.eye(2, 3, k=1, device=device), np.eye(2, 3, k=1, dtype=np.float32)),
        (nx.full((), 7, dtype=nx.uint8, device=device), np.full((), 7, np.uint8)),
        (nx.full_like(x, 3, device=device), np.full_like(base, 3)),
        (nx.linspace(0, 1, 5, device=device), np.linspace(0, 1, 5, dtype=np.float32)),
        (nx.ones(1, device=device), np.ones(1, np.float32)),
        (nx.ones_like(x, dtype=nx.bool, device=device), np.ones_like(base, bool)),
        (nx.zeros((1, 2), nx.complex64, device=device), np.zeros((1, 2), np.complex64)),
        (nx.zeros_like(x, device=device), np.zeros_like(base)),
        (nx.from_dlpack(base, device=device), base),
    ]


def test_creation_functions_take_a_tensors_device() -> None:
    d = nx.tensor(1).device
    for got, want in _creations(d):
        check(got, want)
        assert got.device == d


@needs_other
@pytest.mark.parametrize("spelling", ["device", "spec", "instance"])
def test_creation_functions_put_their_result_on_the_device(spelling: str) -> None:
    assert OTHER is not None
    be = nx.get_backend(OTHER)
    device = {"device": nx.tensor(1, backend=be).device, "spec": nx.tensor(1, backend=be).device.spec, "instance": be}[spelling]  # fmt: skip
    for got, want in _creations(device):
        check(got, want)
        assert got.backend is be


def test_like_functions_keep_the_device_of_x_unless_told() -> None:
    x = nx.tensor(np.ones((0, 2), np.float64))
    for f in (nx.zeros_like, nx.ones_like, nx.empty_like):
        check(f(x), np.zeros((0, 2), np.float64))
        assert f(x).device == x.device


def test_device_and_backend_naming_different_places_are_refused() -> None:
    be = nx.get_backend("binary")
    target = OTHER or "nope"
    # one rule (numerix._array_api.placement) for every function taking both keywords
    for name, f in [
        ("zeros", nx.zeros),
        ("fftfreq", nx.fft.fftfreq),
        ("rfftfreq", nx.fft.rfftfreq),
        ("arange", nx.arange),
        ("eye", nx.eye),
    ]:
        assert f(2, device=be, backend="binary").backend is be  # the same place: fine
        with pytest.raises(
            (nx.ArgumentError, nx.BackendNotFoundError),
            match=rf"^({name}: device=|get_backend)",
        ):
            f(2, device=target, backend="binary")
    with pytest.raises(nx.BackendNotFoundError, match=r"^get_backend: no backend named 'cpu'"):
        nx.ones(2, device="cpu")


def test_signatures_follow_the_standard() -> None:
    P = inspect.Parameter
    kinds = {
        "asarray": ("obj", P.POSITIONAL_ONLY),
        "arange": ("start", P.POSITIONAL_ONLY),
        "eye": ("n_rows", P.POSITIONAL_ONLY),
        "linspace": ("stop", P.POSITIONAL_ONLY),
        "empty_like": ("x", P.POSITIONAL_ONLY),
        "full_like": ("x", P.POSITIONAL_ONLY),
        "from_dlpack": ("x", P.POSITIONAL_ONLY),
    }
    for name, (arg, kind) in kinds.items():
        assert inspect.signature(getattr(nx, name)).parameters[arg].kind is kind, name
    for name in ("asarray", "arange", "empty", "empty_like", "eye", "full", "full_like",
                 "linspace", "ones", "ones_like", "zeros", "zeros_like", "from_dlpack"):  # fmt: skip
        params = inspect.signature(getattr(nx, name)).parameters
        assert params["device"].kind is P.KEYWORD_ONLY and params["device"].default is None, name
    dl = inspect.signature(nx.Tensor.__dlpack__).parameters
    assert [n for n, p in dl.items() if p.kind is P.KEYWORD_ONLY] == ["stream", "max_version", "dl_device", "copy"]  # fmt: skip
    assert list(inspect.signature(nx.Tensor.to_device).parameters) == ["self", "device", "stream"]
    # numerix's positional dtype keeps working
    check(nx.zeros((2,), nx.int8), np.zeros((2,), np.int8))
    check(nx.full((1,), 2, nx.int16, "binary"), np.full((1,), 2, np.int16))


# ------------------------------------------------------------ from_dlpack, asarray(copy=)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_from_dlpack_of_numpy_arrays(dtype: str, shape: tuple[int, ...]) -> None:
    a = (np.arange(int(np.prod(shape))) % 3).astype(dtype).reshape(shape)
    for copy in (None, True, False):
        got = nx.from_dlpack(a, copy=copy)
        check(got, a)
        shared = np.shares_memory(a, got.to_numpy()) if a.size else not copy
        assert shared is (not copy)


def test_from_dlpack_of_a_tensor_is_itself_unless_copied_or_moved() -> None:
    x = nx.tensor([[1, 2]], nx.int32)
    assert nx.from_dlpack(x) is x and nx.from_dlpack(x, copy=False) is x
    y = nx.from_dlpack(x, copy=True)
    assert y is not x and not np.shares_memory(x.to_numpy(), y.to_numpy())
    check(y, np.array([[1, 2]], np.int32))


@needs_other
def test_from_dlpack_copy_false_refuses_what_needs_a_copy() -> None:
    x = nx.tensor([1.0, 2.0])
    with pytest.raises(
        nx.ArgumentError, match=r"^from_dlpack: copy=False, but moving f32\[2\] binary\(cpu\) to"
    ):
        nx.from_dlpack(x, device=OTHER, copy=False)
    with pytest.raises(ValueError, match=r"^from_dlpack: copy=False, but ndarray data comes to"):
        nx.from_dlpack(np.ones(2), device=OTHER, copy=False)
    moved = nx.from_dlpack(x, device=OTHER)
    assert moved.backend.name == OTHER
    check(moved, np.array([1.0, 2.0], np.float32))
    check(nx.from_dlpack(moved), np.array([1.0, 2.0], np.float32))


def test_from_dlpack_refuses_what_has_no_dlpack() -> None:
    with pytest.raises(
        nx.DTypeError, match=r"^from_dlpack: list \[1, 2\] has no __dlpack__; use numerix\.asarray"
    ):
        nx.from_dlpack([1, 2])


def test_asarray_copy() -> None:
    a = np.arange(4.0)
    x = nx.asarray(a, copy=False)
    check(x, a)
    assert np.shares_memory(a, x.to_numpy())
    assert not np.shares_memory(a, nx.asarray(a, copy=True).to_numpy())
    t = nx.tensor([1, 2])
    assert nx.asarray(t, copy=False) is t and nx.asarray(t, dtype=nx.int64, copy=False) is t
    assert nx.asarray(t, copy=True) is not t
    for bad in ([1.0, 2.0], a.astype(np.float32), t):
        with pytest.raises(
            nx.ArgumentError,
            match=r"^asarray: copy=False, but \w+ data becomes f64\[2?4?\] binary\(cpu\) only by a copy",
        ):
            nx.asarray(bad, dtype=nx.float64, copy=False)


# ------------------------------------------------------------ __dlpack__, to_device
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_dlpack_export_round_trips(dtype: str, shape: tuple[int, ...]) -> None:
    a = (np.arange(int(np.prod(shape))) % 3).astype(dtype).reshape(shape)
    x = nx.tensor(a)
    got = np.from_dlpack(x)
    assert got.dtype == a.dtype and got.shape == a.shape
    np.testing.assert_array_equal(got, a)
    assert x.__dlpack_device__() == (1, 0)
    capsule = x.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=True)
    assert type(capsule).__name__ == "PyCapsule"


def test_dlpack_keywords_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        nx.tensor([1.0]).__dlpack__(None)  # type: ignore[misc,unused-ignore]


def test_to_device() -> None:
    x = nx.tensor([1, 2], nx.uint8)
    assert x.to_device(x.device) is x and x.to_device("binary") is x
    with pytest.raises(
        nx.ArgumentError,
        match=r"^to_device: numerix has no streams, got stream=1 for u8\[2\] binary\(cpu\)",
    ):
        x.to_device(x.device, stream=1)
    if OTHER is not None:
        there = nx.tensor(0.0, backend=OTHER).device
        y = x.to_device(there)
        assert y.device == there and y.backend is there.backend
        check(y, np.array([1, 2], np.uint8))
        check(nx.backend_transfer(y, x.device), np.array([1, 2], np.uint8))
        assert nx.backend_transfer(y, x.device).device == x.device


# ------------------------------------------------------------ in-place operators
def test_in_place_operators_rebind_to_a_new_tensor() -> None:
    # tensors are immutable: x += y builds a new tensor and rebinds x, as in JAX
    a = np.array([[1, 2, 3]], np.int32)
    x = nx.tensor(a)
    keep = x
    x += nx.tensor([1, 1, 1], nx.int8)
    check(x, a + np.int8(1))
    check(keep, a)
    x *= 2
    x //= 3
    x <<= 1
    check(x, (((a + 1) * 2) // 3) << 1)
    f = nx.tensor(np.float32(1.5))
    f /= 2
    f **= 2
    check(f, np.float32(0.5625) * np.ones((), np.float32))
