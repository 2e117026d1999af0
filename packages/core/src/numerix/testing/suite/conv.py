"""Conformance of conv against a plain reference written here: Python loops over every
output position and kernel tap, XLA's ConvGeneralDilated semantics spelled out, over
every dtype, 1-d to 3-d, strides, each padding mode, input and kernel dilation,
feature and batch groups and empty inputs, plus the errors the core raises."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import dtypes
from numerix.testing.oracle import ALL, Cases, check, ids, noncontiguous, sample, to_compute


def _per_axis(v: Any, n: int) -> tuple[int, ...]:
    return (v,) * n if isinstance(v, int) else tuple(v)


def ref_conv(x: np.ndarray, k: np.ndarray, *, strides: Any = 1, padding: Any = "valid",
             input_dilation: Any = 1, kernel_dilation: Any = 1, feature_group_count: int = 1,
             batch_group_count: int = 1) -> np.ndarray:  # fmt: skip
    n, c, *size = x.shape
    o, i, *ksize = k.shape
    ns = len(size)
    st, di, dk = (_per_axis(v, ns) for v in (strides, input_dilation, kernel_dilation))
    dilated = [(m - 1) * d + 1 if m else 0 for m, d in zip(size, di)]
    spans = [(m - 1) * d + 1 for m, d in zip(ksize, dk)]
    if padding == "valid":
        pads = [(0, 0)] * ns
    elif padding == "same":
        pads = []
        for m, span, s in zip(dilated, spans, st):
            total = max(((m + s - 1) // s - 1) * s + span - m, 0)
            pads.append((total // 2, total - total // 2))
    else:
        pads = [tuple(p) for p in padding]
    counts = []
    for m, span, s, (lo, hi) in zip(dilated, spans, st, pads):
        padded = m + lo + hi
        counts.append(0 if span > padded else (padded - span) // s + 1)
    nb = n // batch_group_count
    out = np.zeros((nb, o, *counts), np.result_type(x, k))
    for b in range(nb):
        for f in range(o):
            if batch_group_count > 1:
                group = f // (o // batch_group_count)
                batch, chans = group * nb + b, range(c)
            else:
                group = f // (o // feature_group_count)
                batch, chans = b, range(group * i, (group + 1) * i)
            for pos in np.ndindex(*counts):
                acc = out.dtype.type(0)
                for tap in np.ndindex(*ksize):
                    q = [pos[a] * st[a] + tap[a] * dk[a] - pads[a][0] for a in range(ns)]
                    # q indexes the dilated input: only multiples of the dilation hold x
                    if any(q[a] < 0 or q[a] % di[a] or q[a] // di[a] >= size[a] for a in range(ns)):
                        continue
                    src = tuple(q[a] // di[a] for a in range(ns))
                    for j, ch in enumerate(chans):
                        acc += x[(batch, ch) + src] * k[(f, j) + tap]
                out[(b, f) + pos] = acc
    return out


# (x shape, kernel shape, options)
CONFIGS: list[tuple[Any, ...]] = [
    ((2, 3, 7), (4, 3, 3), {}),
    ((1, 2, 8), (3, 2, 3), {"strides": 2, "padding": "same"}),
    ((2, 1, 5), (2, 1, 2), {"input_dilation": 2, "kernel_dilation": 2, "padding": [(1, 2)]}),
    ((2, 2, 5, 4), (3, 2, 3, 2), {"strides": (2, 1), "padding": [(1, 0), (0, 1)]}),
    ((1, 3, 5, 6), (2, 3, 2, 3), {"padding": "same", "kernel_dilation": (1, 2)}),
    ((2, 4, 4, 4), (6, 2, 2, 2), {"feature_group_count": 2}),
    ((1, 3, 4, 5), (3, 1, 3, 3), {"feature_group_count": 3, "padding": "same"}),
    ((4, 2, 4, 4), (6, 2, 2, 2), {"batch_group_count": 2}),
    ((6, 1, 3), (3, 1, 2), {"batch_group_count": 3, "strides": 2, "padding": [(1, 1)]}),
    ((1, 2, 3, 4, 3), (2, 2, 2, 2, 2), {"strides": (1, 2, 1), "padding": "same"}),
    ((1, 1, 3, 3, 2), (2, 1, 2, 2, 1), {"input_dilation": (2, 1, 1)}),
    ((1, 1, 4), (1, 1, 3), {"input_dilation": 2, "strides": 3, "padding": "same"}),
    ((0, 2, 5), (3, 2, 2), {}),  # empty batch
    ((2, 0, 5), (3, 0, 2), {}),  # no input features: sums of nothing
    ((1, 1, 2), (1, 1, 3), {}),  # kernel larger than x: no outputs
    ((1, 1, 0), (1, 1, 1), {"padding": [(1, 1)]}),  # empty spatial axis, padded
    ((1, 2, 3), (0, 2, 1), {}),  # no output features
]


def _out(d: dtypes.DType) -> dtypes.DType:
    # Note: conv is floating, as Nx (to_floating): bool and integers compute in float32
    return dtypes.float32 if d.kind in "biu" else d


def _scale(x: np.ndarray, k: np.ndarray) -> float:
    if x.size == 0 or k.size == 0:
        return 1.0
    terms = int(np.prod(k.shape[1:]))
    return max(float(np.max(np.abs(x))) * float(np.max(np.abs(k))) * terms, 1.0)


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_conv(dtype: dtypes.DType) -> None:
    out = _out(dtype)
    cases = Cases()
    for idx, (xs, ks, kw) in enumerate(CONFIGS):
        with cases.case(f"x{xs} kernel{ks} {kw}"):
            a = sample(dtype, xs, idx)
            w = sample(dtype, ks, idx + 100)
            wa, ww = to_compute(a, out), to_compute(w, out)
            want = ref_conv(wa, ww, **kw)
            got = nx.conv(nx.tensor(a), nx.tensor(w), **kw)
            check(got, want, out, scale=_scale(wa, ww))
            if idx < 3:
                check(nx.conv(noncontiguous(a), noncontiguous(w), **kw), want, out,
                      scale=_scale(wa, ww))  # fmt: skip
    cases.finish()


@pytest.mark.parametrize(
    ("dx", "dk", "out"),
    [
        (dtypes.int8, dtypes.uint8, dtypes.float32),
        (dtypes.bool_, dtypes.int32, dtypes.float32),
        (dtypes.int64, dtypes.float16, dtypes.float16),
        (dtypes.bfloat16, dtypes.float16, dtypes.float32),
        (dtypes.bool_, dtypes.float64, dtypes.float64),
        (dtypes.float32, dtypes.complex64, dtypes.complex64),
        (dtypes.float64, dtypes.complex64, dtypes.complex128),
    ],
    ids=lambda v: v.short,
)
def test_conv_mixed_dtypes(dx: dtypes.DType, dk: dtypes.DType, out: dtypes.DType) -> None:
    a, w = sample(dx, (2, 2, 5), 1), sample(dk, (3, 2, 2), 2)
    want = ref_conv(to_compute(a, out), to_compute(w, out), strides=2, padding="same")
    got = nx.conv(nx.tensor(a), nx.tensor(w), strides=2, padding="same")
    check(got, want, out, scale=_scale(to_compute(a, out), to_compute(w, out)))


def test_conv_of_python_data() -> None:
    got = nx.conv([[[1, 2, 3, 4]]], [[[1, -1]]])
    check(got, np.array([[[-1.0, -1.0, -1.0]]]), nx.float32)


def test_conv_errors() -> None:
    x = nx.zeros((2, 4, 5))
    k = nx.zeros((6, 2, 3))

    def raises(match: str, *args: Any, exc: type[Exception] = nx.ShapeError, **kw: Any) -> None:
        with pytest.raises(exc, match=match):
            nx.conv(*args, **kw)

    raises(
        r"^conv: x must be \[batch, in_features, \*spatial\] with at least one spatial "
        r"axis, got f32\[2\]\[4\] \w+\([^)]*\)$",
        nx.zeros((2, 4)),
        nx.zeros((1, 4)),
    )
    raises(
        r"^conv: kernel f32\[6\]\[2\] \w+\([^)]*\) must have the rank of x "
        r"f32\[2\]\[4\]\[5\] \w+\([^)]*\)",
        x,
        nx.zeros((6, 2)),
    )
    raises(
        r"^conv: kernel f32\[6\]\[2\]\[3\] \w+\([^)]*\) must have in_features / "
        r"feature_group_count = 4 input features \(axis 1\) for x f32\[2\]\[4\]\[5\] "
        r"\w+\([^)]*\), got 2$",
        x,
        k,
    )
    raises(
        r"^conv: the in_features of x f32\[2\]\[4\]\[5\] \w+\([^)]*\) \(4\) must be "
        r"divisible by feature_group_count \(3\)$",
        x,
        k,
        feature_group_count=3,
    )
    raises(
        r"^conv: the out_features of kernel f32\[5\]\[2\]\[3\] \w+\([^)]*\) \(5\) must be "
        r"divisible by feature_group_count \(2\)$",
        x,
        nx.zeros((5, 2, 3)),
        feature_group_count=2,
    )
    raises(
        r"^conv: the out_features of kernel f32\[3\]\[4\]\[3\] \w+\([^)]*\) \(3\) must be "
        r"divisible by batch_group_count \(2\)$",
        x,
        nx.zeros((3, 4, 3)),
        batch_group_count=2,
    )
    raises(
        r"^conv: the batch of x f32\[3\]\[4\]\[5\] \w+\([^)]*\) \(3\) must be divisible by "
        r"batch_group_count \(2\)$",
        nx.zeros((3, 4, 5)),
        nx.zeros((2, 4, 3)),
        batch_group_count=2,
    )
    raises(
        r"^conv: feature_group_count \(2\) and batch_group_count \(2\) cannot both be above "
        r"1$",
        x,
        k,
        feature_group_count=2,
        batch_group_count=2,
    )
    raises(
        r"^conv: feature_group_count must be a positive int, got 0$", x, k, feature_group_count=0
    )
    raises(
        r"^conv: batch_group_count must be a positive int, got 1.0$", x, k, batch_group_count=1.0
    )
    raises(
        r"^conv: the kernel's spatial sizes must be positive, got f32\[6\]\[4\]\[0\]",
        x,
        nx.zeros((6, 4, 0)),
    )
    k4 = nx.zeros((6, 4, 3))
    raises(
        r"^conv: strides \(1, 1\) has 2 entries; it needs 1, one per spatial axis$",
        x,
        k4,
        strides=(1, 1),
    )
    raises(r"^conv: strides must be positive, got \(0,\)$", x, k4, strides=0)
    raises(
        r"^conv: input_dilation must be an int or a sequence of ints, one per spatial axis, "
        r"got '2'$",
        x,
        k4,
        input_dilation="2",
    )
    raises(r"^conv: kernel_dilation must be positive, got \(-1,\)$", x, k4, kernel_dilation=[-1])
    raises(
        r"^conv: padding must be 'valid', 'same' or a sequence of \(low, high\) pairs, got "
        r"'full'$",
        x,
        k4,
        padding="full",
        exc=nx.ArgumentError,
    )
    raises(
        r"^conv: padding has 2 \(low, high\) pairs; it needs 1, one per spatial axis$",
        x,
        k4,
        padding=[(0, 0), (0, 0)],
    )
    raises(
        r"^conv: padding must be non-negative, got \(\(-1, 0\),\); slice x instead$",
        x,
        k4,
        padding=[(-1, 0)],
    )
    raises(
        r"^conv: cannot promote uint64 with int8 without losing integers above 2\*\*53; ",
        nx.zeros((1, 1, 2), nx.uint64),
        nx.zeros((1, 1, 1), nx.int8),
        exc=nx.DTypeError,
    )
