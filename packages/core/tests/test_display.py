"""Tensors you can see: the text repr and Jupyter's HTML view show what numpy prints, with
only the edge values copied to the host for a large tensor; numerix.image writes PNG
files a decoder written here (zlib and struct, checking each chunk's CRC) reads back to
the input's pixels."""

from __future__ import annotations

import base64
import re
import struct
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import numerix as nx
from numerix.ops import display

_RNG = np.random.default_rng(33)


def _numpy_body(a: np.ndarray) -> str:
    # what the text repr prints after its head, numpy's own summary of the whole array
    return np.array2string(a, threshold=100, edgeitems=3, separator=", ", prefix="  ")


def _numpy_rows(a: np.ndarray) -> list[list[str]]:
    # what the HTML table shows: numpy's summary of the whole array, on unbroken lines
    return _rows_of(
        np.array2string(a, threshold=100, edgeitems=3, separator=", ", max_line_width=10**9)
    )


def _values(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    n = int(np.prod(shape))
    if dtype == "bool":
        return _RNG.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype in ("int64", "uint8"):
        return _RNG.integers(0, 200, n).astype(dtype).reshape(shape)
    a = _RNG.normal(size=n) * 10.0 ** _RNG.integers(-3, 4, n)
    if dtype.startswith("complex"):
        a = a + 1j * _RNG.normal(size=n)
    if n > 8:
        # a huge value hidden in the middle: numpy formats a summarized array from its
        # edges only, so it changes the format only where it is shown
        a[n // 2] = 6e4 if dtype == "float16" else 1e30
    return a.astype(dtype).reshape(shape)


SHAPES = [(), (5,), (100,), (101,), (10, 10), (10, 11), (1000, 2), (3, 400), (5, 5, 5),
          (7, 8, 9), (2, 3, 4, 50), (0,), (3, 0), (300, 0)]  # fmt: skip
DTYPES = ["float32", "float64", "float16", "int64", "uint8", "bool", "complex64"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_the_text_repr_is_numpys_print_of_the_whole_array(
    shape: tuple[int, ...], dtype: str
) -> None:
    a = _values(shape, dtype)
    t = nx.from_numpy(a)
    head, body = repr(t).split("\n  ", 1)
    assert head == f"Tensor<{t.describe()}>"
    assert body == _numpy_body(a)


def test_bfloat16_prints_as_float32() -> None:
    for shape in [(4,), (30, 40)]:
        a = _values(shape, "float32").astype(ml_dtypes.bfloat16)
        t = nx.from_numpy(a)
        assert t.dtype == nx.bfloat16
        assert repr(t).split("\n  ", 1)[1] == _numpy_body(a.astype(np.float32))
        assert _html_rows(t) == _numpy_rows(a.astype(np.float32))


def test_non_finite_values_print_as_numpy_prints_them() -> None:
    a = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0], dtype=np.float32)
    big = np.full((20, 30), np.nan)
    big[0, 0], big[-1, -1] = np.inf, -2.5
    for x in (a, big):
        t = nx.from_numpy(x)
        assert repr(t).split("\n  ", 1)[1] == _numpy_body(x)
        assert _html_rows(t) == _numpy_rows(x)


# ------------------------------------------------------------ only the edges are copied
class _Spy:
    def __init__(self, monkeypatch: pytest.MonkeyPatch, t: nx.Tensor) -> None:
        self.sizes: list[int] = []
        cls = type(t.backend)
        real = cls.to_numpy

        def to_numpy(backend: Any, x: nx.Tensor) -> np.ndarray:
            a = real(backend, x)
            self.sizes.append(int(a.size))
            return a

        monkeypatch.setattr(cls, "to_numpy", to_numpy)


@pytest.mark.parametrize("shape", [(100_000,), (300, 400), (40, 50, 60), (9, 10, 11, 12)], ids=str)
def test_a_large_tensor_copies_only_the_values_it_shows(
    monkeypatch: pytest.MonkeyPatch, shape: tuple[int, ...]
) -> None:
    a = _values(shape, "float64")
    t = nx.from_numpy(a)
    spy = _Spy(monkeypatch, t)
    text = repr(t)
    page = t._repr_html_()
    assert spy.sizes, "the views read no values"
    assert max(spy.sizes) <= 6 ** len(shape), spy.sizes
    # ... and show the right ones: numpy's summary of the whole array
    assert text.split("\n  ", 1)[1] == _numpy_body(a)
    if len(shape) <= 2:
        assert _html_rows(t) == _numpy_rows(a)
    else:
        assert _pre(page) == np.array2string(a, threshold=100, edgeitems=3, separator=", ")


def test_a_small_tensor_is_copied_whole_once(monkeypatch: pytest.MonkeyPatch) -> None:
    t = nx.from_numpy(np.arange(100.0).reshape(10, 10))
    spy = _Spy(monkeypatch, t)
    repr(t)
    t._repr_html_()
    assert spy.sizes == [100, 100]


# ------------------------------------------------------------ the HTML view
class _Page(HTMLParser):
    """The tags (checked balanced), the table's rows of cells, and the text of a <pre>."""

    VOID = frozenset({"img", "br"})

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.tags: list[str] = []
        self.rows: list[list[str]] = []
        self.pre: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag not in self.VOID:
            self.open.append(tag)
        if tag == "tr":
            self.rows.append([])
        if tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open.pop() == tag, f"unbalanced </{tag}>"
        if tag in ("td", "th"):
            assert self._cell is not None
            self.rows[-1].append(("th:" if tag == "th" else "") + "".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self.open and self.open[-1] == "pre":
            self.pre.append(data)


def _parse(page: str) -> _Page:
    p = _Page()
    p.feed(page)
    p.close()
    assert not p.open, f"unclosed {p.open}"
    assert not {"script", "style", "link", "iframe"} & set(p.tags)
    return p


def _html_rows(t: nx.Tensor) -> list[list[str]]:
    # the value cells of the table, row by row (the index headers left out)
    return [
        [c for c in row if not c.startswith("th:")]
        for row in _parse(t._repr_html_()).rows
        if any(not c.startswith("th:") for c in row)
    ]


def _pre(page: str) -> str:
    return "".join(_parse(page).pre)


def _rows_of(text: str) -> list[list[str]]:
    # numpy's printed 1-d or 2-d array as rows of cells, "…" where it prints "..."
    lines = [ln.strip().strip("[],") for ln in text.split("\n")]
    rows = [[c.strip() for c in ln.split(", ")] for ln in lines]
    width = max(len(r) for r in rows)
    rows = [["…"] * width if r == ["..."] else r for r in rows]
    return [["…" if c == "..." else c for c in r] for r in rows]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5,), (101,), (10, 10), (10, 11), (1000, 2), (3, 400)], ids=str)
def test_the_html_table_shows_the_values_numpy_prints(shape: tuple[int, ...], dtype: str) -> None:
    a = _values(shape, dtype)
    t = nx.from_numpy(a)
    assert _html_rows(t) == _numpy_rows(a)


def test_the_html_view_names_dtype_shape_backend_and_device() -> None:
    t = nx.from_numpy(np.arange(12, dtype=np.int32).reshape(3, 4))
    page = t._repr_html_()
    text = re.sub(r"<[^>]+>", "", page)
    for part in ("dtype int32", "shape (3, 4)", "backend binary", "device cpu"):
        assert part in text
    rows = _parse(page).rows
    # the index headers: columns 0..3, then each row's index
    assert rows[0] == ["th:", "th:0", "th:1", "th:2", "th:3"]
    assert [r[0] for r in rows[1:]] == ["th:0", "th:1", "th:2"]
    big = nx.from_numpy(np.zeros((50, 8)))
    rows = _parse(big._repr_html_()).rows
    assert rows[0] == ["th:", "th:0", "th:1", "th:2", "th:…", "th:5", "th:6", "th:7"]
    assert [r[0] for r in rows[1:]] == ["th:0", "th:1", "th:2", "th:…", "th:47", "th:48", "th:49"]
    assert "summarized" in re.sub(r"<[^>]+>", "", big._repr_html_())


def test_html_of_0d_empty_and_higher_rank_tensors() -> None:
    page = nx.tensor(2.5)._repr_html_()
    _parse(page)
    assert re.sub(r"<[^>]+>", "", page).endswith("2.5")
    assert "no values" in nx.zeros((3, 0))._repr_html_()
    a = np.arange(24.0).reshape(2, 3, 4)
    assert _pre(nx.from_numpy(a)._repr_html_()) == np.array2string(
        a, threshold=100, edgeitems=3, separator=", "
    )


def test_a_traced_tensor_shows_no_values_and_a_deallocated_one_says_so() -> None:
    pages: list[str] = []

    @nx.jit
    def f(x: nx.Tensor) -> nx.Tensor:
        pages.append(x._repr_html_())
        return x * 2

    f(nx.from_numpy(np.full((2, 3), 7.0)))
    _parse(pages[0])
    assert "traced" in pages[0] and "shape <b>(2, 3)</b>" in pages[0]
    assert "7." not in pages[0] and "<table" not in pages[0]
    t = nx.ones(3)
    nx.backend_deallocate(t)
    page = t._repr_html_()
    _parse(page)
    assert "deallocated" in page and "<table" not in page


def test_html_escapes_everything() -> None:
    # a backend's device name is the one free text in the view
    t = nx.ones((2, 2))

    class Odd:
        name = "<b>"
        device = "<script>x</script>"
        is_tracing = False

        def to_numpy(self, x: nx.Tensor) -> np.ndarray:
            return np.ones((2, 2), dtype=np.float32)

        def __repr__(self) -> str:
            return "odd&<>"

    t.backend = Odd()  # type: ignore[assignment]
    page = t._repr_html_()
    assert "<script" not in page and "&lt;script&gt;" in page and "odd&amp;&lt;&gt;" in page
    _parse(page)


# ------------------------------------------------------------ images
def _decode_png(data: bytes) -> tuple[np.ndarray, int]:
    """The pixels (H×W×C uint8) and colour type of a PNG of 8-bit samples, filter type 0
    and no interlace, each chunk's CRC checked."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + body), kind
        chunks.append((kind, body))
        pos += 12 + length
    assert pos == len(data)
    kinds = [k for k, _ in chunks]
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and chunks[-1][1] == b""
    width, height, depth, colour, compression, filtering, interlace = struct.unpack(
        ">IIBBBBB", chunks[0][1]
    )
    assert (depth, compression, filtering, interlace) == (8, 0, 0, 0)
    channels = {0: 1, 2: 3, 6: 4}[colour]
    raw = zlib.decompress(b"".join(b for k, b in chunks if k == b"IDAT"))
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(height, 1 + width * channels)
    assert (rows[:, 0] == 0).all()  # filter type 0 on every row
    return rows[:, 1:].reshape(height, width, channels), colour


def _expected_pixels(a: np.ndarray) -> np.ndarray:
    if a.dtype == bool:
        p = np.where(a, 255, 0).astype(np.uint8)
    elif a.dtype == np.uint8:
        p = a
    else:
        p = np.round(a.astype(np.float64) * 255).astype(np.uint8)
    return p.reshape(a.shape[0], a.shape[1], -1)


@pytest.mark.parametrize(
    "shape,colour", [((5, 7), 0), ((5, 7, 1), 0), ((4, 3, 3), 2), ((3, 6, 4), 6), ((1, 1), 0)]
)
@pytest.mark.parametrize("dtype", ["uint8", "float32", "float64", "float16", "bfloat16", "bool"])
def test_an_image_decodes_to_its_pixels(shape: tuple[int, ...], colour: int, dtype: str) -> None:
    if dtype == "uint8":
        a = _RNG.integers(0, 256, shape).astype(np.uint8)
    elif dtype == "bool":
        a = _RNG.integers(0, 2, shape).astype(bool)
    else:
        values = _RNG.random(shape)
        values.flat[0], values.flat[-1] = 0.0, 1.0
        a = values.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    t = nx.from_numpy(a)
    img = nx.image(t)
    pixels, got_colour = _decode_png(img.data)
    assert got_colour == colour
    assert pixels.dtype == np.uint8 and pixels.shape == _expected_pixels(a).shape
    np.testing.assert_array_equal(pixels, _expected_pixels(a))
    assert img.shape == shape and (img.height, img.width) == shape[:2]
    assert img.mode == {0: "grey", 2: "RGB", 6: "RGBA"}[colour]
    assert t.to_image().data == img.data


def test_halves_round_as_numpy_rounds() -> None:
    # k/510 scaled by 255 is k/2: the halves go to the even neighbour, as numpy's round
    a = np.arange(511, dtype=np.float64).reshape(7, 73) / 510
    pixels, _ = _decode_png(nx.image(nx.from_numpy(a)).data)
    np.testing.assert_array_equal(pixels[..., 0], np.round(a * 255).astype(np.uint8))
    assert pixels[0, 1, 0] == 0 and pixels[0, 3, 0] == 2  # 0.5 -> 0, 1.5 -> 2


def test_a_digit_in_jupyters_forms_and_on_disk(tmp_path: Path) -> None:
    digit = np.zeros((28, 28), dtype=np.uint8)
    digit[4:24, 12:16] = 255
    img = nx.from_numpy(digit).to_image()
    assert img._repr_png_() == img.data
    page = img._repr_html_()
    assert re.fullmatch(r'<img src="data:image/png;base64,[A-Za-z0-9+/=]+" [^<>]*>', page)
    uri = re.search(r'base64,([A-Za-z0-9+/=]+)"', page)
    assert uri is not None and base64.b64decode(uri.group(1)) == img.data
    assert 'width="28" height="28"' in page
    img.save(tmp_path / "digit.png")
    assert (tmp_path / "digit.png").read_bytes() == img.data
    img.save(str(tmp_path / "again.png"))
    np.testing.assert_array_equal(
        _decode_png((tmp_path / "again.png").read_bytes())[0][..., 0], digit
    )
    assert repr(img).startswith("Image<png 28×28 grey, ")
    # numpy arrays and nested lists are taken as numerix.asarray takes them
    np.testing.assert_array_equal(_decode_png(nx.image(digit).data)[0][..., 0], digit)


@pytest.mark.parametrize(
    "values,error,words",
    [
        (
            np.array([[0.5, 1.5]]),
            nx.ArgumentError,
            ["image:", "[0, 1]", "got values from 0.5 to 1.5 in f64[1][2]", "clip"],
        ),
        (
            np.array([[0.5, -0.25]], dtype=np.float32),
            nx.ArgumentError,
            ["got values from -0.25 to 0.5 in f32[1][2]", "normalise"],
        ),
        (
            np.array([[np.nan, 0.5]]),
            nx.ArgumentError,
            ["got values from 0.5 to 0.5 and 1 NaN in", "isnan"],
        ),
        (np.array([[np.inf, 0.5]]), nx.ArgumentError, ["values from 0.5 to inf in", "clip"]),
        (np.full((2, 2), np.nan), nx.ArgumentError, ["got 4 NaN in f64[2][2]"]),
        (np.zeros((2, 2), dtype=np.int64), nx.DTypeError, ["s64[2][2]", "astype(numerix.uint8)"]),
        (np.zeros((2, 2), dtype=np.uint16), nx.DTypeError, ["u16"]),
        (np.zeros((2, 2), dtype=np.complex64), nx.DTypeError, ["c64"]),
        (np.zeros(784, dtype=np.uint8), nx.ShapeError, ["image", "u8[784]", "reshape"]),
        (np.zeros((2, 2, 2), dtype=np.uint8), nx.ShapeError, ["H×W×3"]),
        (np.zeros((1, 2, 2, 3), dtype=np.uint8), nx.ShapeError, ["t[i]"]),
        (np.zeros((0, 5), dtype=np.uint8), nx.ShapeError, ["at least one row", "u8[0][5]"]),
        (np.zeros((5, 0, 3), dtype=np.uint8), nx.ShapeError, ["at least one row"]),
    ],
)
def test_refused_images_name_the_op_the_tensor_and_the_fix(
    values: np.ndarray, error: type[Exception], words: list[str]
) -> None:
    with pytest.raises(error) as info:
        nx.image(nx.from_numpy(values))
    for w in words:
        assert w in str(info.value)


def test_an_image_above_the_pixel_limit_is_refused_before_any_copy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    t = nx.zeros((64, 64), dtype=nx.uint8)
    assert _decode_png(nx.image(t).data)[0].shape == (64, 64, 1)
    monkeypatch.setattr(display, "MAX_PIXELS", 64 * 64 - 1)
    spy = _Spy(monkeypatch, t)
    with pytest.raises(nx.ShapeError, match=r"image: encodes at most 4095 pixels"):
        t.to_image()
    assert spy.sizes == []


def test_other_formats_and_traced_tensors_are_refused() -> None:
    with pytest.raises(nx.ArgumentError, match="image: the formats are 'png'"):
        nx.image(nx.zeros((2, 2), dtype=nx.uint8), format="jpeg")

    @nx.jit
    def f(x: nx.Tensor) -> nx.Tensor:
        x.to_image()
        return x

    with pytest.raises(nx.TracingError, match="image"):
        f(nx.zeros((2, 2), dtype=nx.uint8))


def test_the_family_is_public_and_loads_on_first_use() -> None:
    assert nx.image is nx.ops.image and nx.Image is display.Image
    assert {"image", "Image"} <= set(nx.__all__)
    assert "printed_values" not in nx.__all__ and "tensor_html" not in nx.__all__
