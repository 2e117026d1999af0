"""The largest shape a tensor may take, on every backend and for every op taking a shape.

The rule (numerix._shapes.check_size): the elements, and for an empty shape the product
of its non-zero extents, at most 2**59 - 1, numpy's limit at the widest dtype. XLA aborts
the process past it even on an empty shape, so xla runs in a subprocess: an abort fails
the test instead of killing pytest.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix import _shapes, plugins

BIG = 2**62
EMPTY_BIG = (BIG, 0)

# op name in the message -> a call making the shape (BIG, 0) on backend b
CASES: dict[str, Callable[[str], Any]] = {
    "zeros": lambda b: nx.zeros(EMPTY_BIG, backend=b),
    "ones": lambda b: nx.ones(EMPTY_BIG, backend=b),
    "empty": lambda b: nx.empty(EMPTY_BIG, backend=b),
    "full": lambda b: nx.full(EMPTY_BIG, 2, backend=b),
    "iota": lambda b: nx.iota(EMPTY_BIG, backend=b),
    "eye": lambda b: nx.eye(BIG, 0, backend=b),
    "random.uniform": lambda b: nx.random.uniform(nx.random.key(0), EMPTY_BIG, backend=b),
    "random.normal": lambda b: nx.random.normal(nx.random.key(0), EMPTY_BIG, backend=b),
    "reshape": lambda b: nx.reshape(nx.zeros((0,), backend=b), EMPTY_BIG),
    "broadcast_to": lambda b: nx.broadcast_to(nx.zeros((1, 0), backend=b), EMPTY_BIG),
    "tile": lambda b: nx.tile(nx.zeros((0,), backend=b), (BIG, 1)),
    "pad": lambda b: nx.pad(nx.zeros((0, 0), backend=b), ((BIG, 0), (0, 0))),
}
# four valid (2**58, 0) inputs joined into (2**60, 0)
JOINED: dict[str, Callable[[str], Any]] = {
    "concatenate": lambda b: nx.concatenate([nx.zeros((2**58, 0), backend=b)] * 4),
}


# xla is checked in a child process (an abort there must fail the test, not end pytest)
IN_PROCESS = [b for b in ("binary", "torch") if b in plugins.backend_entries()]


def _message(op: str, shape: tuple[int, ...]) -> str:
    n = 1
    for d in shape:
        n *= d or 1
    s = str(shape).replace("(", r"\(").replace(")", r"\)")
    return (
        rf"^{op}: shape {s} is empty, but its non-zero extents multiply to {n}, more than "
        r"any tensor can hold \(at most 2\*\*59 - 1"
    )


@pytest.mark.parametrize("backend", IN_PROCESS)
@pytest.mark.parametrize("op", sorted(CASES))
def test_an_empty_shape_past_the_limit_is_a_shape_error(op: str, backend: str) -> None:
    with pytest.raises(nx.ShapeError, match=_message(op, EMPTY_BIG)):
        CASES[op](backend)


@pytest.mark.parametrize("backend", IN_PROCESS)
def test_joining_valid_empty_tensors_past_the_limit_is_refused(backend: str) -> None:
    with pytest.raises(nx.ShapeError, match=_message("concatenate", (2**60, 0))):
        JOINED["concatenate"](backend)
    with pytest.raises(nx.ShapeError, match=_message("stack", (4, 2**58, 0))):
        nx.stack([nx.zeros((2**58, 0), backend=backend)] * 4)


# the compiled Tensor.reshape takes the target its Python plan gives, which checks it
@pytest.mark.parametrize("backend", IN_PROCESS)
def test_tensor_reshape_method_refuses_too(backend: str) -> None:
    with pytest.raises(nx.ShapeError, match=_message("reshape", EMPTY_BIG)):
        nx.zeros((0,), backend=backend).reshape(EMPTY_BIG)


@pytest.mark.parametrize("backend", IN_PROCESS)
def test_non_empty_shapes_past_the_limit_name_the_op(backend: str) -> None:
    with pytest.raises(nx.ShapeError, match=r"^arange: shape \(4611686018427387904,\) has "):
        nx.arange(BIG, backend=backend)
    with pytest.raises(nx.ShapeError, match=r"^tile: shape \(9223372036854775808,\) has "):
        nx.tile(nx.zeros((2,), backend=backend), (BIG,))
    with pytest.raises(nx.ShapeError, match=r"^pad: shape \(4611686018427387905,\) has "):
        nx.pad(nx.zeros((1,), backend=backend), ((BIG, 0),))


# numpy is the oracle at the widest dtype: it refuses a complex128 shape exactly when
# 16 bytes times the product of its non-zero extents overflow a signed 64-bit count
EDGES = [
    (2**59 - 1, 0),
    (2**59, 0),
    (0, 2**59),
    (0, 2**59 - 1),
    (2**31, 2**28 - 1, 0),
    (2**31, 2**28, 0),
    (0, 2**63 - 1),
    (3, 0, 2**58),
]


@pytest.mark.parametrize("shape", EDGES, ids=str)
@pytest.mark.parametrize("backend", IN_PROCESS)
def test_the_limit_is_numpys_at_complex128(shape: tuple[int, ...], backend: str) -> None:
    try:
        want = np.zeros(shape, dtype=np.complex128)
    except ValueError:
        with pytest.raises(nx.ShapeError, match=_message("zeros", shape)):
            nx.zeros(shape, dtype=nx.complex128, backend=backend)
        # the same shape is refused for every dtype, so that no cast makes it
        with pytest.raises(nx.ShapeError, match=_message("zeros", shape)):
            nx.zeros(shape, dtype=nx.int8, backend=backend)
        return
    got = nx.zeros(shape, dtype=nx.complex128, backend=backend)
    assert (got.shape, got.dtype) == (want.shape, nx.complex128)
    assert got.astype(nx.complex64).shape == want.shape


def test_the_limit_is_2_to_59_minus_1() -> None:
    assert _shapes.MAX_ELEMENTS == 2**59 - 1 == (2**63 - 1) // 16


# ---------------------------------------------------------------- xla, in a subprocess

_XLA_SCRIPT = r"""
import json, sys
sys.path[:0] = [sys.argv[1]]
import numerix as nx
from test_shape_limits import CASES, JOINED
out = {}
for op, f in {**CASES, **JOINED}.items():
    try:
        r = f("xla")
        out[op] = ["returned", str(r.shape)]
    except Exception as e:
        out[op] = [type(e).__name__, str(e)]
    print(json.dumps({op: out[op]}), flush=True)
if sys.argv[2:] == ["method"]:
    try:
        nx.zeros((0,), backend="xla").reshape((2**62, 0))
        print(json.dumps({"reshape": ["returned", ""]}))
    except Exception as e:
        print(json.dumps({"reshape": [type(e).__name__, str(e)]}))
"""


@pytest.mark.parametrize("speedups", ["0", "1"])
def test_xla_refuses_instead_of_aborting(speedups: str) -> None:
    pytest.importorskip("numerix_xla")
    env = dict(os.environ, NUMERIX_SPEEDUPS=speedups)
    here = os.path.dirname(__file__)
    p = subprocess.run(
        [sys.executable, "-c", _XLA_SCRIPT, here], env=env, capture_output=True, text=True
    )
    assert p.returncode == 0, p.stderr[-2000:]
    seen = {}
    for line in p.stdout.splitlines():
        seen.update(json.loads(line))
    assert sorted(seen) == sorted({**CASES, **JOINED})
    for op, (kind, text) in seen.items():
        assert kind == "ShapeError", (op, kind, text)
        assert re.match(_message(op, (2**60, 0) if op in JOINED else EMPTY_BIG), text), text


def test_xla_tensor_reshape_method_refuses_instead_of_aborting() -> None:
    pytest.importorskip("numerix_xla")
    p = subprocess.run(
        [sys.executable, "-c", _XLA_SCRIPT, os.path.dirname(__file__), "method"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    kind, text = json.loads(p.stdout.splitlines()[-1])["reshape"]
    assert kind == "ShapeError" and re.match(_message("reshape", EMPTY_BIG), text), text
