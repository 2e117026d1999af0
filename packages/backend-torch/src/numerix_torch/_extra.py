"""Torch kernels of the shape-indexing, window, conv, sort, cumulative, fft and linear-algebra
families (mixed into TorchBackend).

uint16/32/64 are stored in torch's own dtypes, which can be copied and sliced but have few
kernels: data movement (index_put, flip, gather) goes through a same-width signed view
(:func:`_bits`), arithmetic and ordering through :mod:`._dtypes` (``compute``/``restore``/
``order_key``), so every result is exact.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from numerix import dtypes
from numerix._tensor import Tensor
from numerix.backend import SliceByIndexing, pad_plan
from numerix.dtypes import DType
from numerix_torch._dtypes import TORCH, compute, order_key, restore

_Pairs = tuple[tuple[int, int], ...]
_BITS = {dtypes.uint16: torch.int16, dtypes.uint32: torch.int32, dtypes.uint64: torch.int64}
_HALF = (dtypes.float16, dtypes.bfloat16)
_I64_MIN = -(2**63)
_I64_MAX = 2**63 - 1
_CONV = (F.conv1d, F.conv2d, F.conv3d)


def _bits(t: torch.Tensor, dtype: DType) -> torch.Tensor:
    """A same-width view torch can move (index_put, flip, gather) of an unsigned tensor."""
    s = _BITS.get(dtype)
    return t if s is None else t.view(s)


def _unbits(t: torch.Tensor, dtype: DType) -> torch.Tensor:
    return t.view(TORCH[dtype]) if dtype in _BITS else t


def _acc(t: torch.Tensor, dtype: DType) -> torch.Tensor:
    """``t`` in the dtype sums and products run in: float16/bfloat16 in float32 (rounded once
    by :func:`restore`), emulated unsigned in their compute dtype."""
    return t.float() if dtype in _HALF else compute(t, dtype)


def _key(t: torch.Tensor, dtype: DType) -> torch.Tensor:
    return t.to(torch.uint8) if dtype is dtypes.bool_ else order_key(t, dtype)


def _unkey(r: torch.Tensor, dtype: DType) -> torch.Tensor:
    if dtype is dtypes.uint64:
        return (r ^ _I64_MIN).view(torch.uint64)
    if dtype is dtypes.bool_:
        return r.to(torch.bool)
    return restore(r, dtype)


def _key_extreme(dtype: DType, highest: bool) -> Any:
    """The identity of min (``highest``) or of max in :func:`_key`'s space."""
    if dtype is dtypes.uint64:  # keyed into int64's range
        return _I64_MAX if highest else _I64_MIN
    v = dtypes.reduction_identity("min" if highest else "max", dtype)
    return int(v) if dtype is dtypes.bool_ else v


def _padded(a: torch.Tensor, padding: _Pairs, fill: Any) -> torch.Tensor:
    if all(p == (0, 0) for p in padding):
        return a
    shape = [n + lo + hi for n, (lo, hi) in zip(a.shape, padding)]
    r = torch.full(shape, fill, dtype=a.dtype, device=a.device)
    r[tuple(slice(lo, lo + n) for n, (lo, _) in zip(a.shape, padding))] = a
    return r


def _windows(
    a: torch.Tensor, dims: tuple[int, ...], strides: tuple[int, ...], dilations: tuple[int, ...]
) -> torch.Tensor:
    """A view ``[*out, *dims]`` of every (strided, dilated) window of ``a``."""
    for i, (w, s, d) in enumerate(zip(dims, strides, dilations)):
        a = a.unfold(i, (w - 1) * d + 1, s)
    if any(d > 1 for d in dilations):
        every: tuple[Any, ...] = (Ellipsis,) + tuple(slice(None, None, d) for d in dilations)
        a = a[every]
    return a


def _nan_where(r: torch.Tensor, info: torch.Tensor) -> torch.Tensor:
    # numerix never raises for singular / non-positive-definite input: NaN matrices instead
    bad = (info != 0).reshape(*info.shape, *([1] * (r.dim() - info.dim())))
    return torch.where(bad, torch.full((), math.nan, dtype=r.dtype, device=r.device), r)


def _complex_argsort(t: torch.Tensor, axis: int, descending: bool) -> torch.Tensor:
    # numpy's order R+Rj < R+nanj < nan+Rj < nan+nanj, lexicographic: three stable passes,
    # least significant key first
    re, im = t.real, t.imag
    rn, inn = re.isnan(), im.isnan()
    zero = torch.zeros((), dtype=re.dtype, device=re.device)
    keys = (torch.where(inn, zero, im), torch.where(rn, zero, re), rn.to(torch.int8) * 2 + inn)
    idx: torch.Tensor | None = None
    for k in keys:
        if idx is not None:
            k = torch.take_along_dim(k, idx, axis)
        i = torch.sort(k, dim=axis, descending=descending, stable=True).indices
        idx = i if idx is None else torch.take_along_dim(idx, i, axis)
    assert idx is not None
    return idx


def _lu(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(p, l, u) with x = p l u by partial pivoting on the first largest ``|entry|`` (LAPACK's
    complex getrf compares |re| + |im| instead, so complex matrices come here)."""
    a = x.clone()
    *batch, n, _ = a.shape
    dev = a.device
    ar = torch.arange(n, device=dev)
    order = ar.expand(*batch, n).clone()
    for k in range(n):
        piv = k + a[..., k:, k].abs().argmax(-1)  # (...,) the first largest
        swap = ar.expand(*batch, n).clone()
        swap.scatter_(-1, piv[..., None], k)
        swap[..., k] = piv
        a = torch.take_along_dim(a, swap[..., None], -2)
        order = torch.take_along_dim(order, swap, -1)
        d = a[..., k : k + 1, k]
        f = a[..., k + 1 :, k] / torch.where(d == 0, torch.ones_like(d), d)
        a[..., k + 1 :, k + 1 :] -= f[..., :, None] * a[..., k : k + 1, k + 1 :]
        a[..., k + 1 :, k] = f
    eye = torch.eye(n, dtype=a.dtype, device=dev)
    low = torch.tril(a, -1) + eye
    p = eye[order].mT
    return p.contiguous(), low, torch.triu(a)


def _poolable(
    x: Tensor, window_dimensions: tuple[int, ...], strides: tuple[int, ...], padding: _Pairs
) -> list[int] | None:
    """The axes torch's max pooling would slide over, or None where the geometry is beyond
    it (more than three such axes, padding uneven or wider than half the window) or the
    dtype is (torch pools integers and bools on the cpu only)."""
    if x.dtype.kind != "f" and x.data.device.type != "cpu":
        return None
    pooled = [
        i for i, (w, s, p) in enumerate(zip(window_dimensions, strides, padding))
        if w > 1 or s > 1 or p != (0, 0)
    ]  # fmt: skip
    if not 1 <= len(pooled) <= 3 or any(
        padding[i][0] != padding[i][1] or 2 * padding[i][0] > window_dimensions[i] for i in pooled
    ):
        return None
    return pooled


def _max_pool(
    a: torch.Tensor, pooled: list[int], window_dimensions: tuple[int, ...],
    strides: tuple[int, ...], padding: _Pairs, dilations: tuple[int, ...], indices: bool,
) -> tuple[torch.Tensor, torch.Tensor | None]:  # fmt: skip
    """Torch's max pooling of ``a`` over the ``pooled`` axes: the window maxima (in ``a``'s
    axis order) and, with ``indices``, the flat index into ``a`` of each window's first
    max. Torch keeps the first of tied values and never picks its implicit padding, as the
    window primitives do, but lets a later NaN replace an earlier one: windows whose value
    is NaN take their index from a second pooling of the NaN mask (the first 1 wins).

    The other axes are flattened into channels, laid out channels-last: torch's
    channels-last pooling runs vectorised across them (seven times the speed of the
    contiguous layout on f32[32,8,28,28])."""
    nd = a.ndim
    rest = [i for i in range(nd) if i not in pooled]
    order = [*rest, *pooled]
    lead = [a.shape[i] for i in rest]
    sizes = [a.shape[i] for i in pooled]
    pick = [(window_dimensions[i], strides[i], padding[i][0], dilations[i]) for i in pooled]
    if len(pooled) == 1:  # as a 2-d pooling over a unit axis: torch has no 1-d channels-last
        sizes, pick = [1, *sizes], [(1, 1, 0, 1), *pick]
    kernel, step, pad, dil = (list(v) for v in zip(*pick))
    layout = torch.channels_last if len(sizes) == 2 else torch.channels_last_3d
    moved = a.permute(*order).reshape(1, -1, *sizes).contiguous(memory_format=layout)
    pool = F.max_pool2d if len(sizes) == 2 else F.max_pool3d
    values, picks = pool(moved, kernel, step, pad, dil, return_indices=True)
    back = [order.index(i) for i in range(nd)]
    out = [*lead, *values.shape[2:][len(sizes) - len(pooled) :]]
    r = values.reshape(out).permute(*back)
    if not indices:
        return r, None
    if a.is_floating_point():
        nan = values.isnan()
        if bool(nan.any()):
            first = pool(moved.isnan().to(a.dtype), kernel, step, pad, dil, return_indices=True)
            picks = torch.where(nan, first[1], picks)
    # each pick indexes the pooled axes of one channel: a flat index into a moved to
    # (others, pooled), then through that move back to a's own order
    grid = picks.reshape(picks.shape[1], -1)
    base = torch.arange(grid.shape[0], device=grid.device)[:, None] * math.prod(sizes)
    flat = (base + grid).reshape(out)
    if order == sorted(order):
        return r, flat
    where = torch.arange(a.numel(), device=grid.device).reshape(a.shape)
    return r, where.permute(*order).reshape(-1)[flat].permute(*back)


class ExtraKernels(SliceByIndexing):
    """Kernels beyond the element-wise, reduction and basic shape families."""

    __slots__ = ()

    # ------------------------------------------------------------ pad and dynamic slices
    def pad(
        self, out: Tensor, x: Tensor, pad_value: Tensor, *, config: tuple[tuple[int, int, int], ...]
    ) -> Tensor:
        dt = x.dtype
        a = _bits(x.data, dt)
        full, place, crop = pad_plan(x.shape, config)
        r = torch.empty(full, dtype=a.dtype, device=a.device)
        r.copy_(_bits(pad_value.data, dt))
        r[place] = a
        out.data = _unbits(r[crop], dt)
        return out

    # dynamic_slice and put_slice: SliceByIndexing, over these two
    @staticmethod
    def _read_starts(starts: tuple[Tensor, ...]) -> list[int]:
        # one read from the device for all the starts
        if not starts:
            return []
        return torch.stack([s.data.reshape(()) for s in starts]).tolist()

    @staticmethod
    def _copy(data: torch.Tensor) -> torch.Tensor:
        return data.clone()

    # ------------------------------------------------------------ scatter
    def indexed_add(
        self, out: Tensor, x: Tensor, indices: Tensor, updates: Tensor, *, axes: tuple[int, ...]
    ) -> Tensor:
        dt, k = x.dtype, len(axes)
        a = _acc(x.data, dt)
        if a is x.data or dt is dtypes.uint64:
            a = a.clone()
        u = _acc(updates.data, dt)
        first = tuple(range(k))
        v = a if axes == first else a.movedim(axes, first)
        idx = indices.data
        v.index_put_(tuple(idx[:, i] for i in range(k)), u, accumulate=True)
        out.data = restore(a, dt)
        return out

    def indexed_put(
        self, out: Tensor, x: Tensor, indices: Tensor, updates: Tensor, *, axes: tuple[int, ...]
    ) -> Tensor:
        dt, k = x.dtype, len(axes)
        a = _bits(x.data, dt).clone()
        first = tuple(range(k))
        v = a if axes == first else a.movedim(axes, first)
        idx = indices.data
        n = idx.shape[0]
        u = _bits(updates.data, dt).expand(n, *v.shape[k:])
        if n > 1:
            # index_put_ leaves the winner of repeated indices unspecified: keep the last
            flat = idx[:, 0]
            for i in range(1, k):
                flat = flat * v.shape[i] + idx[:, i]
            uniq, inverse = torch.unique(flat, return_inverse=True)
            last = torch.full(uniq.shape, -1, dtype=torch.int64, device=idx.device)
            last.scatter_reduce_(0, inverse, torch.arange(n, device=idx.device), "amax")
            idx, u = idx[last], u[last]
        v.index_put_(tuple(idx[:, i] for i in range(k)), u)
        out.data = _unbits(a, dt)
        return out

    # ------------------------------------------------------------ windows
    def window_reduce(
        self, out: Tensor, x: Tensor, *, kind: str, window_dimensions: tuple[int, ...],
        strides: tuple[int, ...], padding: _Pairs, window_dilations: tuple[int, ...],
    ) -> Tensor:  # fmt: skip
        dt = x.dtype
        if 0 in out.shape:
            out.data = torch.zeros(out.shape, dtype=TORCH[out.dtype], device=x.data.device)
            return out
        if x.ndim == 0:  # the one window is x itself
            out.data = x.data.clone()
            return out
        pooled = (
            None if kind in ("sum", "prod") else _poolable(x, window_dimensions, strides, padding)
        )
        if pooled is not None:
            a = _key(x.data, dt)
            if kind == "min":  # an order-reversing map: the min is the max of the image
                a = -a if a.is_floating_point() else ~a
            geometry = (window_dimensions, strides, padding, window_dilations)
            r = _max_pool(a, pooled, *geometry, indices=False)[0]
            if kind == "min":
                r = -r if r.is_floating_point() else ~r
            out.data = _unkey(r, dt)
            return out
        if kind in ("sum", "prod"):
            a = _acc(x.data, dt)
            fill: Any = dtypes.reduction_identity(kind, dt)
        else:
            a = _key(x.data, dt)
            fill = _key_extreme(dt, kind == "min")
        v = _windows(_padded(a, padding, fill), window_dimensions, strides, window_dilations)
        nd = x.ndim
        if kind == "sum":
            r = v.sum(dim=tuple(range(nd, 2 * nd)))
        elif kind == "prod":
            r = v.reshape(*v.shape[:nd], -1).prod(-1)
        elif kind == "max":
            r = v.amax(dim=tuple(range(nd, 2 * nd)))
        else:
            r = v.amin(dim=tuple(range(nd, 2 * nd)))
        out.data = restore(r, dt) if kind in ("sum", "prod") else _unkey(r, dt)
        return out

    def window_scatter(
        self, out: Tensor, x: Tensor, source: Tensor, init_value: Tensor, *, kind: str,
        window_dimensions: tuple[int, ...], strides: tuple[int, ...], padding: _Pairs,
    ) -> Tensor:  # fmt: skip
        pick_min = kind == "min"
        sdt = out.dtype
        src = _acc(source.data, sdt)
        init = _acc(init_value.data, sdt)
        dev = src.device
        nd, n = x.ndim, math.prod(x.shape)
        if src.numel() == 0:
            res = torch.empty(x.shape, dtype=src.dtype, device=dev).copy_(init)
        elif nd == 0:  # the one window is x itself
            res = init + src
        elif (pooled := _poolable(x, window_dimensions, strides, padding)) is not None:
            a = _key(x.data, x.dtype)
            if pick_min:  # an order-reversing map: the first min is the first max of the image
                a = -a if a.is_floating_point() else ~a
            geometry = (window_dimensions, strides, padding, (1,) * nd)
            lin = _max_pool(a, pooled, *geometry, indices=True)[1]
            assert lin is not None
            res = torch.empty(n, dtype=src.dtype, device=dev).copy_(init)
            res.index_add_(0, lin.reshape(-1), src.reshape(-1))
            res = res.reshape(x.shape)
        else:
            # the first max (min) among a window's in-bounds positions; padding never wins
            fill = _key_extreme(x.dtype, pick_min)
            ones = (1,) * nd
            grid = tuple(src.shape)
            size = math.prod(window_dimensions)
            v = _windows(_padded(_key(x.data, x.dtype), padding, fill), window_dimensions,
                         strides, ones).reshape(*grid, size)  # fmt: skip
            sel = v.amin(-1, keepdim=True) if pick_min else v.amax(-1, keepdim=True)
            cand = v == sel
            if x.dtype.kind == "f":  # NaN counts as the max (min): the first NaN
                cand |= v.isnan() & sel.isnan()
            if any(p != (0, 0) for p in padding):
                inside = torch.ones(x.shape, dtype=torch.bool, device=dev)
                cand &= _windows(_padded(inside, padding, False), window_dimensions, strides,
                                 ones).reshape(*grid, size)  # fmt: skip
            spots = torch.arange(size, device=dev)
            pick = torch.where(cand, spots, size).amin(-1)
            lin = torch.zeros(grid, dtype=torch.int64, device=dev)
            rest, step = pick, n
            for d in range(nd):
                step //= x.shape[d]
                below = math.prod(window_dimensions[d + 1 :])
                local = rest // below
                rest = rest - local * below
                shape = [1] * nd
                shape[d] = grid[d]
                at = torch.arange(grid[d], device=dev).reshape(shape) * strides[d]
                lin = lin + (at + local - padding[d][0]) * step
            lin = torch.where(pick < size, lin, n)  # a window all padding: a slot past the end
            res = torch.empty(n + 1, dtype=src.dtype, device=dev).copy_(init)
            res.index_add_(0, lin.reshape(-1), src.reshape(-1))
            res = res[:n].reshape(x.shape)
        out.data = restore(res, sdt)
        return out

    # ------------------------------------------------------------ conv
    def conv(
        self, out: Tensor, x: Tensor, kernel: Tensor, *, strides: tuple[int, ...],
        padding: _Pairs, input_dilation: tuple[int, ...], kernel_dilation: tuple[int, ...],
        feature_group_count: int, batch_group_count: int,
    ) -> Tensor:  # fmt: skip
        dt = out.dtype
        a, w = x.data, kernel.data
        if 0 in out.shape or a.numel() == 0 or w.numel() == 0:
            out.data = torch.zeros(out.shape, dtype=TORCH[dt], device=a.device)
            return out
        if dt in _HALF:  # accumulate in float32, round once
            a, w = a.float(), w.float()
        ns = a.dim() - 2
        if any(d > 1 for d in input_dilation):
            grown = [(m - 1) * d + 1 for m, d in zip(a.shape[2:], input_dilation)]
            z = a.new_zeros((*a.shape[:2], *grown))
            every: tuple[Any, ...] = (Ellipsis,) + tuple(
                slice(None, None, d) for d in input_dilation
            )
            z[every] = a
            a = z
        if any(p != (0, 0) for p in padding):
            a = F.pad(a, [v for lo_hi in reversed(padding) for v in lo_hi])
        groups = feature_group_count
        if batch_group_count > 1:
            # batch group j meets output features j*o/g..: move it into the channels and
            # convolve with feature groups
            groups = g = batch_group_count
            nb, c = a.shape[0] // g, a.shape[1]
            a = a.reshape(g, nb, c, *a.shape[2:]).transpose(0, 1).reshape(nb, g * c, *a.shape[2:])
        if 1 <= ns <= 3:
            r = _CONV[ns - 1](a, w, stride=strides, dilation=kernel_dilation, groups=groups)
        else:
            r = _conv_any(a, w, strides, kernel_dilation, groups)
        out.data = r.to(TORCH[dt])
        return out

    # ------------------------------------------------------------ sort
    def sort(self, out: Tensor, x: Tensor, *, axis: int, descending: bool) -> Tensor:
        t = x.data
        if x.dtype.kind == "c":
            out.data = torch.take_along_dim(t, _complex_argsort(t, axis, descending), axis)
        else:
            out.data = torch.sort(t, dim=axis, descending=descending, stable=True).values
        return out

    def argsort(self, out: Tensor, x: Tensor, *, axis: int, descending: bool) -> Tensor:
        t = x.data
        if x.dtype.kind == "c":
            out.data = _complex_argsort(t, axis, descending)
        else:
            out.data = torch.sort(t, dim=axis, descending=descending, stable=True).indices
        return out

    def block_top_k(
        self, out: tuple[Tensor, Tensor], x: Tensor, *, k: int, axis: int
    ) -> tuple[Tensor, Tensor]:
        values, indices = out
        t = x.data
        if x.dtype.kind == "c":
            i = _complex_argsort(t, axis, True).narrow(axis, 0, k)
            v = torch.take_along_dim(t, i, axis)
        else:
            # torch.topk leaves the order of ties unspecified: a stable sort, cut
            s = torch.sort(t, dim=axis, descending=True, stable=True)
            v, i = s.values.narrow(axis, 0, k), s.indices.narrow(axis, 0, k)
            if k < t.shape[axis]:
                v, i = v.contiguous(), i.contiguous()
        values.data, indices.data = v, i
        return values, indices

    # ------------------------------------------------------------ cumulative
    def cumulative(self, out: Tensor, x: Tensor, *, kind: str, axis: int, reverse: bool) -> Tensor:
        dt = out.dtype
        ordered = kind in ("max", "min")
        a = _key(x.data, dt) if ordered else _acc(x.data, dt)
        if reverse:
            a = a.flip(axis)
        if kind == "sum":
            r = torch.cumsum(a, axis)
        elif kind == "prod":
            r = torch.cumprod(a, axis)
        elif kind == "max":
            r = torch.cummax(a, axis).values
        else:
            r = torch.cummin(a, axis).values
        if reverse:
            r = r.flip(axis)
        out.data = _unkey(r, dt) if ordered else restore(r, dt)
        return out

    # ------------------------------------------------------------ fft
    def fft(self, out: Tensor, x: Tensor, *, length: int) -> Tensor:
        if 0 in out.shape:  # MKL refuses an empty batch
            out.data = torch.zeros(out.shape, dtype=TORCH[out.dtype], device=x.data.device)
        else:
            out.data = torch.fft.fft(x.data, n=length, dim=-1)
        return out

    def ifft(self, out: Tensor, x: Tensor, *, length: int) -> Tensor:
        if 0 in out.shape:
            out.data = torch.zeros(out.shape, dtype=TORCH[out.dtype], device=x.data.device)
        else:
            out.data = torch.fft.ifft(x.data, n=length, dim=-1)
        return out

    # ------------------------------------------------------------ linear algebra blocks
    # The core hands these float32 / float64 / complex64 / complex128 only.
    def block_cholesky(self, out: Tensor, x: Tensor, *, upper: bool) -> Tensor:
        low, info = torch.linalg.cholesky_ex(x.data)
        low = _nan_where(low, info)
        out.data = low.mH.resolve_conj() if upper else low
        return out

    def block_triangular_solve(
        self, out: Tensor, a: Tensor, b: Tensor, *, lower: bool, left_side: bool,
        transform_a: str,
    ) -> Tensor:  # fmt: skip
        m, upper = a.data, not lower
        if transform_a != "none":
            m = m.mT if transform_a == "transpose" else m.mH
            upper = not upper
        r = torch.linalg.solve_triangular(m, b.data, upper=upper, left=left_side)
        out.data = r.resolve_conj()
        return out

    def block_solve(self, out: Tensor, a: Tensor, b: Tensor) -> Tensor:
        r, info = torch.linalg.solve_ex(a.data, b.data)
        out.data = _nan_where(r, info)
        return out

    def block_inv(self, out: Tensor, x: Tensor) -> Tensor:
        r, info = torch.linalg.inv_ex(x.data)
        out.data = _nan_where(r, info)
        return out

    def block_det(self, out: Tensor, x: Tensor) -> Tensor:
        out.data = torch.linalg.det(x.data)
        return out

    def block_qr(
        self, out: tuple[Tensor, Tensor], x: Tensor, *, mode: str
    ) -> tuple[Tensor, Tensor]:
        q, r = out
        q.data, r.data = torch.linalg.qr(x.data, mode=mode)
        return q, r

    def block_eigh(self, out: tuple[Tensor, Tensor], x: Tensor) -> tuple[Tensor, Tensor]:
        w, v = out
        w.data, v.data = torch.linalg.eigh(x.data, UPLO="L")
        return w, v

    def block_svd(
        self, out: tuple[Tensor, Tensor, Tensor], x: Tensor, *, full_matrices: bool
    ) -> tuple[Tensor, Tensor, Tensor]:
        u, s, vh = out
        u.data, s.data, vh.data = torch.linalg.svd(x.data, full_matrices=full_matrices)
        return u, s, vh

    def block_lu(
        self, out: tuple[Tensor, Tensor, Tensor], x: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]:
        p, low, up = out
        if x.dtype.kind == "c":
            p.data, low.data, up.data = _lu(x.data)
        else:
            p.data, low.data, up.data = torch.linalg.lu(x.data)
        return p, low, up


def _conv_any(
    a: torch.Tensor, w: torch.Tensor, strides: tuple[int, ...], dilation: tuple[int, ...],
    groups: int,
) -> torch.Tensor:  # fmt: skip
    """Grouped cross-correlation of any number of spatial axes (torch has 1-3): windows and
    one einsum. ``a`` is already dilated and padded."""
    ns = a.dim() - 2
    v = _windows(a, (1, 1, *w.shape[2:]), (1, 1, *strides), (1, 1, *dilation))
    drop: tuple[Any, ...] = (slice(None),) * (2 + ns) + (0, 0)
    v = v[drop]  # [N, C, *out, *K]
    n, c = a.shape[:2]
    o = w.shape[0]
    osp = v.shape[2 : 2 + ns]
    vg = v.reshape(n, groups, c // groups, *osp, *w.shape[2:])
    wg = w.reshape(groups, o // groups, c // groups, *w.shape[2:])
    sp, kk = "abcdefghij"[:ns], "klmnopqrst"[:ns]
    r = torch.einsum(f"NGC{sp}{kk},GOC{kk}->NGO{sp}", vg, wg)
    return r.reshape(n, o, *osp)
