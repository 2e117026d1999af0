"""``[backends.xla] x64``: JAX's process-wide 64-bit mode is changed only as the setting
says, with a one-time warning when numerix turns it on unasked; with it off, every path
that would make a 64-bit array on xla raises UnsupportedDTypeError.

JAX's mode is process-wide, so each case runs in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import numerix as nx

_SCRIPT = textwrap.dedent(
    """
    import json, sys, warnings
    import jax
    import numpy as np
    if sys.argv[1] == "user-on":
        jax.config.update("jax_enable_x64", True)
    import numerix as nx
    from numerix.configuration import ConfigWarning

    r = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = nx.tensor(np.array([1.5, -2.0], np.float32))  # the first use: xla, the default
        b = nx.tensor(np.array([3, 4], np.int32), backend="xla:host:0")  # the second
        r["f32"] = (a * 2 + 1).tolist()
        r["i32"] = (b + 1).tolist()
    r["warnings"] = [
        [w.category.__name__, issubclass(w.category, ConfigWarning), str(w.message),
         w.filename == "<string>"]
        for w in caught if issubclass(w.category, ConfigWarning)
    ]
    r["mode"] = bool(jax.config.jax_enable_x64)
    r["cache_size"] = sys.modules["numerix_xla._kernels"].CACHE_SIZE
    claimed = type(a.backend).supported_dtypes  # what the kit reads
    r["claimed"] = None if claimed is None else sorted(d.name for d in claimed)
    r["user_dtype"] = str(jax.numpy.array(1.0).dtype)

    f64 = nx.tensor(np.array([1.0, 2.0]), backend="binary")
    paths = {
        "tensor(float64)": lambda: nx.tensor(np.array([0.1, 0.2]), backend="xla"),
        "tensor(int list)": lambda: nx.tensor([1, 2], backend="xla"),
        "zeros float64": lambda: nx.zeros((2,), dtype="float64", backend="xla"),
        "full complex128": lambda: nx.full((2,), 1j, dtype="complex128", backend="xla"),
        "arange int64": lambda: nx.arange(3, backend="xla"),
        "iota uint64": lambda: nx.iota((3,), dtype="uint64", backend="xla"),
        "eye float64": lambda: nx.eye(2, dtype="float64", backend="xla"),
        "linspace float64": lambda: nx.linspace(0, 1, 3, dtype="float64", backend="xla"),
        "astype float64": lambda: a.astype("float64"),
        "astype int64": lambda: b.astype("int64"),
        "promotion with numpy float64": lambda: a + np.array([1.0, 2.0]),
        "promotion with binary float64": lambda: a + f64,
        "transfer float64": lambda: nx.backend_transfer(f64, "xla"),
        "from_numpy uint64": lambda: nx.from_numpy(np.array([1, 2], np.uint64), backend="xla"),
        "argmax": lambda: nx.argmax(a),
        "argsort": lambda: nx.argsort(a),
        "sum int32": lambda: nx.sum(b),
        "jit[xla] float64 argument": lambda: nx.jit(lambda t: t * 2, compiler="xla")(f64),
        "jit[xla] float64 constant": lambda: nx.jit(
            lambda t: nx.sum(t + nx.tensor(np.array([0.5, 1.5]), backend="binary")),
            compiler="xla")(a),
        "jit[xla] astype inside": lambda: nx.jit(lambda t: t.astype(nx.float64),
                                                 compiler="xla")(a),
        "jit[evaluator] astype inside": lambda: nx.jit(lambda t: t.astype(nx.float64))(a),
    }
    out = {}
    for name, fn in (paths.items() if sys.argv[2] == "paths" else ()):
        try:
            t = fn()
            out[name] = ["ok", t.dtype.name, str(t.data.dtype), t.backend.name]
        except Exception as e:
            out[name] = ["raised", type(e).__name__, str(e)]
    r["paths"] = out
    print(json.dumps(r))
    """
)


def _run(case: str, x64: str | None, paths: bool = False, **env_vars: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    env.pop("NUMERIX_BACKENDS__XLA__X64", None)
    env["NUMERIX_DEFAULT_BACKEND"] = "xla"
    env.update(env_vars)
    if x64 is not None:
        env["NUMERIX_BACKENDS__XLA__X64"] = x64
    out = subprocess.run([sys.executable, "-c", _SCRIPT, case, "paths" if paths else "-"], env=env, capture_output=True,
                         text=True, timeout=600)  # fmt: skip
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _common(r: dict) -> None:
    assert r["f32"] == [4.0, -3.0] and r["i32"] == [4, 5]


def test_unset_numerix_turns_the_mode_on_with_one_warning_naming_the_setting():
    r = _run("fresh", None, paths=True)
    _common(r)
    assert r["cache_size"] == 512 and r["claimed"] is None
    assert r["mode"] is True and r["user_dtype"] == "float64"
    assert len(r["warnings"]) == 1, r["warnings"]
    name, is_config_warning, message, at_user_line = r["warnings"][0]
    assert name == "X64Warning" and is_config_warning and at_user_line
    assert "jax_enable_x64" in message and "[backends.xla] x64" in message
    assert "NUMERIX_BACKENDS__XLA__X64" in message
    # 64-bit dtypes work: every path keeps its dtype, in JAX's data too
    for path, res in r["paths"].items():
        assert res[0] == "ok", (path, res)
        assert res[3] == "xla" and res[2] == nx.dtypes.as_dtype(res[1], "t").numpy_dtype.name


def test_set_true_turns_the_mode_on_without_a_warning():
    # (and the kernel cache's bound, read from the settings when the backend loads)
    r = _run("fresh", "1", NUMERIX_BACKENDS__XLA__KERNEL_CACHE_SIZE="7")
    _common(r)
    assert r["mode"] is True and r["warnings"] == []
    assert r["cache_size"] == 7


def test_jax_mode_already_on_is_left_alone_without_a_warning():
    r = _run("user-on", None)
    _common(r)
    assert r["mode"] is True and r["warnings"] == []


def test_set_false_leaves_jax_alone_and_refuses_every_64_bit_path():
    r = _run("fresh", "false", paths=True)
    _common(r)
    assert r["mode"] is False and r["user_dtype"] == "float32" and r["warnings"] == []
    # the kit reports the 64-bit dtypes as not claimed
    wide = {"float64", "int64", "uint64", "complex128"}
    assert r["claimed"] == sorted(d.name for d in nx.dtypes.ALL_DTYPES if d.name not in wide)
    for path, res in r["paths"].items():
        # never a silent narrowing (a float64 tensor holding float32 data): a named error
        assert res[0] == "raised", (path, res)
        assert res[1] == "UnsupportedDTypeError", (path, res)
        assert "[backends.xla] x64 = true" in res[2] and "xla(host:0)" in res[2], (path, res)
        assert any(d in res[2] for d in ("float64", "int64", "uint64", "complex128")), res


def test_the_setting_is_typed():
    with pytest.raises(nx.ConfigError, match="x64"):
        with nx.config(backends={"xla": {"x64": "sometimes"}}):
            pass
    with nx.config(backends={"xla": {"x64": False}}) as s:
        assert s.backends.xla.x64 is False
