"""What any Python tensor wrapper costs: the floor under numerix's eager overhead.

    python benchmarks/wrapper_floor.py               # every installed backend, 9 rounds
    python benchmarks/wrapper_floor.py --backend binary --rounds 15 --json

Four candidates per row, their rounds interleaved: the raw library (numpy, torch,
jax.numpy); **the thinnest wrapper Python allows**, a class of one slot whose operators
and functions call the raw op and wrap its result, with no check, no dtype rule, no
broadcasting rule and no dispatch; **the least checked wrapper**, four slots like
numerix's Tensor (data, shape, dtype, backend) and, per op, only the identity checks a
same-dtype, same-shape, same-backend call needs before the raw op, all inline (no
layer, no rule, no kernel context); and numerix on the backend that wraps the library.

The rows are ``benchmarks/ops.py``'s small rows and its loop of small mixed ops (add,
``* 1.0001``, ``[1:3]``, sum, 2×2 ``@``, exp, maximum, reshape). The thin wrapper's
ratio to the raw library is what a Python-level front end cannot go under, whatever it
does; the checked wrapper's is what one that checks its operands at all cannot go
under. numerix's layers (public op, plan, backend kernel, kernel context), rules and
dispatch come on top of it. Each result is checked
against the raw library before it is timed; nothing here is asserted anywhere.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import numpy as np

import numerix as nx
from numerix.benchmarking import interleave, summary

# ops.py lies beside this script (the script's folder is first on sys.path)
from ops import Side, _loop, numerix_side, raw_side, run_parser, run_settings


class Thin:
    """One slot; every operator calls the raw op and wraps what it returns."""

    __slots__ = ("a",)

    def __init__(self, a: Any) -> None:
        self.a = a

    def __add__(self, o: Any) -> Thin:
        return Thin(self.a + o.a)

    def __mul__(self, s: Any) -> Thin:
        return Thin(self.a * s)

    def __matmul__(self, o: Any) -> Thin:
        return Thin(self.a @ o.a)

    def __getitem__(self, k: Any) -> Thin:
        return Thin(self.a[k])

    def reshape(self, shape: Any) -> Thin:
        return Thin(self.a.reshape(shape))


_new = object.__new__


class Checked:
    """numerix's Tensor's four slots; each op checks its operands' identity inline."""

    __slots__ = ("backend", "data", "dtype", "shape")

    data: Any
    shape: tuple[int, ...]
    dtype: Any
    backend: str

    def _like(self, data: Any, shape: tuple[int, ...]) -> Checked:
        r = _new(Checked)
        r.data, r.shape, r.dtype, r.backend = data, shape, self.dtype, self.backend
        return r

    def _same(self, o: Any) -> bool:
        return (type(o) is Checked and o.dtype is self.dtype and o.shape == self.shape
                and o.backend is self.backend)  # fmt: skip

    def __add__(self, o: Any) -> Checked:
        if not self._same(o):
            raise TypeError("add: operands differ")
        return self._like(self.data + o.data, self.shape)

    def __mul__(self, s: Any) -> Checked:
        if type(s) is not float:
            raise TypeError("multiply: not a Python float")
        return self._like(self.data * s, self.shape)

    def __matmul__(self, o: Any) -> Checked:
        a, b = self.shape, o.shape
        if not (type(o) is Checked and o.dtype is self.dtype and o.backend is self.backend
                and len(a) == 2 and len(b) == 2 and a[1] == b[0]):  # fmt: skip
            raise TypeError("matmul: operands differ")
        return self._like(self.data @ o.data, (a[0], b[1]))

    def __getitem__(self, k: Any) -> Checked:
        d = self.data[k]
        return self._like(d, tuple(d.shape))

    def reshape(self, shape: tuple[int, ...]) -> Checked:
        return self._like(self.data.reshape(shape), shape)


def checked_side(raw: Side) -> Side:
    m = raw.mod

    def arr(a: np.ndarray) -> Checked:
        d = raw.arr(a)
        r = _new(Checked)
        r.data, r.shape, r.dtype, r.backend = d, tuple(d.shape), d.dtype, raw.label
        return r

    def maximum(t: Checked, u: Checked) -> Checked:
        if not t._same(u):
            raise TypeError("maximum: operands differ")
        return t._like(m.maximum(t.data, u.data), t.shape)

    mod = SimpleNamespace(
        sum=lambda t: t._like(m.sum(t.data), ()),
        exp=lambda t: t._like(m.exp(t.data), t.shape),
        maximum=maximum,
    )
    return Side(f"checked wrapper over {raw.label}", mod, arr, lambda r: raw.to_np(r.data),
                lambda r: raw.sync(r.data), raw.concat, raw.softmax)  # fmt: skip


def thin_side(raw: Side) -> Side:
    m = raw.mod
    mod = SimpleNamespace(
        sum=lambda t: Thin(m.sum(t.a)),
        exp=lambda t: Thin(m.exp(t.a)),
        maximum=lambda t, u: Thin(m.maximum(t.a, u.a)),
    )
    return Side(f"thin wrapper over {raw.label}", mod, lambda a: Thin(raw.arr(a)),
                lambda r: raw.to_np(r.a), lambda r: raw.sync(r.a), raw.concat, raw.softmax)  # fmt: skip


def cases(loop_ops: int) -> list[tuple[str, list[np.ndarray], Any]]:
    rng = np.random.default_rng(0)
    v4, u4 = (rng.standard_normal(4, dtype=np.float32) for _ in range(2))
    m4, n4 = (rng.standard_normal((4, 4), dtype=np.float32) for _ in range(2))
    w = rng.standard_normal((2, 2), dtype=np.float32)
    return [
        ("add f32[4] + f32[4]", [v4, u4], lambda s, a, b: a + b),
        ("multiply f32[4] * 1.0001", [v4], lambda s, a: a * 1.0001),
        ("exp f32[4][4]", [m4], lambda s, a: s.mod.exp(a)),
        ("slice f32[4][4][1:3]", [m4], lambda s, a: a[1:3]),
        ("matmul f32[4][4] @ f32[4][4]", [m4, n4], lambda s, a, b: a @ b),
        (f"loop of {loop_ops:,} small ops", [v4, u4, w],
         lambda s, a, b, c: _loop(s, a, b, c, loop_ops)),
    ]  # fmt: skip


def bench(backend: str, rounds: int, min_time: float, loop_ops: int) -> list[dict[str, Any]]:
    raw = raw_side(backend)
    sides = [raw, thin_side(raw), checked_side(raw), numerix_side(backend)]
    rows = []
    for name, inputs, body in cases(loop_ops):
        args = [[s.arr(i) for i in inputs] for s in sides]
        want = np.asarray(raw.to_np(body(raw, *args[0])))
        for s, a in zip(sides[1:], args[1:], strict=True):
            got = np.asarray(s.to_np(body(s, *a)))
            if got.shape != want.shape or got.dtype != want.dtype or not np.allclose(got, want):
                raise SystemExit(f"wrapper_floor.py: {backend}: {name}: {s.label} disagrees")
        calls = [
            lambda f=body, s=s, a=a: s.sync(f(s, *a))  # type: ignore[misc]
            for s, a in zip(sides, args, strict=True)
        ]
        raw_t, thin_t, checked_t, nx_t = (
            summary(t) for t in interleave(calls, rounds, min_time=min_time)
        )
        rows.append({"backend": backend, "name": name, "raw": raw.label,
                     "raw_s": raw_t, "thin_s": thin_t, "checked_s": checked_t, "numerix_s": nx_t,
                     "thin_ratio": thin_t["median_s"] / raw_t["median_s"],
                     "checked_ratio": checked_t["median_s"] / raw_t["median_s"],
                     "numerix_ratio": nx_t["median_s"] / raw_t["median_s"]})  # fmt: skip
    return rows


def _cell(t: dict[str, float]) -> str:
    us = 1e6
    return f"{t['median_s'] * us:,.2f} ({t['min_s'] * us:,.2f}–{t['max_s'] * us:,.2f})"


def main(argv: list[str] | None = None) -> int:
    args = run_parser(__doc__.split("\n\n")[0]).parse_args(argv)
    rounds, min_time, loop_ops, backends = run_settings(args)
    rows = [r for b in backends for r in bench(b, rounds, min_time, loop_ops)]
    if args.json:
        print(json.dumps({"numerix": nx.__version__, "rounds": rounds, "rows": rows}, indent=1))
        return 0
    print(
        f"µs per call, median (min–max) of {rounds} interleaved rounds; ratios to the raw library"
    )
    for r in rows:
        print(f"{r['backend']:7s} {r['name']:30s} raw {_cell(r['raw_s']):>26s} "
              f"thin {_cell(r['thin_s']):>26s} ×{r['thin_ratio']:.2f} "
              f"checked {_cell(r['checked_s']):>26s} ×{r['checked_ratio']:.2f} "
              f"numerix {_cell(r['numerix_s']):>26s} ×{r['numerix_ratio']:.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
