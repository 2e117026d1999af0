"""bfloat16 on binary without ml_dtypes at the first op: the kind check the kernels use
tells bfloat16 from every other dtype, and a process loads ml_dtypes only when a
bfloat16 array is made."""

from __future__ import annotations

import subprocess
import sys

import ml_dtypes
import numpy as np

import numerix as nx
from numerix import dtypes
from numerix_binary._bf16 import BF16_KIND, is_half, numpy_bfloat16


def test_bfloat16_alone_has_the_kind_the_kernels_check():
    assert np.dtype(ml_dtypes.bfloat16).kind == BF16_KIND
    assert numpy_bfloat16() == np.dtype(ml_dtypes.bfloat16)
    others = [d for d in dtypes.ALL_DTYPES if d is not dtypes.bfloat16]
    assert others and all(d.numpy_dtype.kind != BF16_KIND for d in others)
    halves = {d.name for d in dtypes.ALL_DTYPES if is_half(d.numpy_dtype)}
    assert halves == {"float16", "bfloat16"}


def test_ml_dtypes_is_loaded_by_the_first_bfloat16_array_only():
    code = (
        "import sys, numerix as nx\n"
        "x = nx.tensor([1.5, 2.25, 3.0]); (x + x).sum(); nx.sort(x); x.max()\n"
        "print('ml_dtypes' in sys.modules)\n"
        "b = nx.tensor([1.5, 2.25, 3.0], dtype=nx.bfloat16)\n"
        "print('ml_dtypes' in sys.modules)\n"
        "print(b.sum().dtype, b.sum().item(), nx.sort(-b).tolist(), (b * b).dtype)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.splitlines() == [
        "False",
        "True",
        "bfloat16 6.75 [-3.0, -2.25, -1.5] bfloat16",
    ]


def test_a_bfloat16_array_made_elsewhere_is_held_and_computed():
    a = np.array([1.0, 2.0, 4.0], dtype=ml_dtypes.bfloat16)
    t = nx.from_numpy(a)
    assert t.dtype is nx.bfloat16
    s = nx.sum(t)
    assert s.dtype is nx.bfloat16 and s.item() == 7.0
