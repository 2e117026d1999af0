"""``[backends.xla] x64``: JAX's process-wide 64-bit mode is changed only when a 64-bit
tensor is made on xla, as the setting says: unset, with one warning at the user's line;
true, without; false, never (every path that would make a 64-bit array on xla raises
UnsupportedDTypeError). Importing numerix, loading or listing the backend, the CLI and a
priority list that picks another backend leave JAX alone.

JAX's mode is process-wide, so each case runs in a fresh interpreter, from a script file
whose lines the warnings are checked against."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import jax
import numpy as np
import pytest

import numerix as nx
from numerix_xla.backend import X64Warning
from numerix_xla.plugin import xla_settings

_SCRIPT = textwrap.dedent(
    """
    import json, sys, warnings
    import jax
    import numpy as np
    if sys.argv[1] == "user-on":
        jax.config.update("jax_enable_x64", True)
    import numerix as nx
    from numerix.configuration import ConfigWarning
    from numerix_xla import _x64

    r = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = nx.tensor(np.array([1.5, -2.0], np.float32))  # the first use: xla, the default
        b = nx.tensor(np.array([3, 4], np.int32), backend="xla:host:0")  # the second
        r["f32"] = (a * 2 + 1).tolist()
        r["i32"] = (b + 1).tolist()
        r["mode_32"] = bool(jax.config.jax_enable_x64)
        r["user_dtype_32"] = str(jax.numpy.array(1.0).dtype)
        wide = None
        try:
            with nx.default_backend("xla"):
                wide = nx.tensor([1, 2])  # LINE-WIDE
        except nx.errors.UnsupportedDTypeError:
            pass
        r["wide"] = [wide.dtype.name, str(wide.data.dtype)] if wide is not None else None
    r["warnings"] = [
        [w.category.__name__, issubclass(w.category, ConfigWarning), str(w.message),
         w.filename, w.lineno]
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
        if sys.argv[1] == "fresh":  # each path meets JAX's mode off, as numerix found it
            jax.config.update("jax_enable_x64", False)
            _x64._turned_on = False
        try:
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always")
                t = fn()
            out[name] = ["ok", t.dtype.name, str(t.data.dtype), t.backend.name,
                         bool(jax.config.jax_enable_x64),
                         sorted({w.category.__name__ for w in said})]
        except Exception as e:
            out[name] = ["raised", type(e).__name__, str(e)]
    r["paths"] = out
    if sys.argv[1] == "fresh" and r["mode"]:
        jax.config.update("jax_enable_x64", False)  # the program turns it off again
        try:
            nx.tensor(np.array([0.5]), backend="xla")
            r["after_off"] = ["ok"]
        except Exception as e:
            r["after_off"] = ["raised", type(e).__name__, str(e)]
    print(json.dumps(r))
    """
)
_LINE_WIDE = next(i for i, s in enumerate(_SCRIPT.splitlines(), 1) if "LINE-WIDE" in s)


def _run(tmp_path: Path, case: str, x64: str | None, paths: bool = False,
         **env_vars: str) -> tuple[dict, str]:  # fmt: skip
    script = tmp_path / "user_program.py"
    script.write_text(_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    env.pop("NUMERIX_BACKENDS__XLA__X64", None)
    env["NUMERIX_DEFAULT_BACKEND"] = "xla"
    env.update(env_vars)
    if x64 is not None:
        env["NUMERIX_BACKENDS__XLA__X64"] = x64
    out = subprocess.run([sys.executable, str(script), case, "paths" if paths else "-"], env=env,
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1]), str(script)


def _common(r: dict) -> None:
    assert r["f32"] == [4.0, -3.0] and r["i32"] == [4, 5]
    assert r["wide"] in (["int64", "int64"], None)


def test_unset_the_first_64_bit_tensor_on_xla_turns_the_mode_on_with_one_warning(tmp_path):
    r, script = _run(tmp_path, "fresh", None, paths=True)
    _common(r)
    # 32-bit tensors on xla, the backend loaded and chosen: JAX's mode untouched
    assert r["mode_32"] is False and r["user_dtype_32"] == "float32"
    assert r["cache_size"] == 512 and r["claimed"] is None
    assert r["mode"] is True and r["user_dtype"] == "float64"
    assert len(r["warnings"]) == 1, r["warnings"]
    name, is_config_warning, message, filename, lineno = r["warnings"][0]
    assert name == "X64Warning" and is_config_warning
    # at the user's line, under numerix's context manager (not contextlib's)
    assert (filename, lineno) == (script, _LINE_WIDE)
    assert "int64 tensors on xla need JAX's 64-bit mode (jax_enable_x64)" in message
    # the advice agrees with the default: unset, and true or false silences it
    assert "[backends.xla] x64 is unset: set it to true (NUMERIX_BACKENDS__XLA__X64=1)" in message
    assert "to false (NUMERIX_BACKENDS__XLA__X64=0)" in message
    # every path that makes a 64-bit array turns the mode on, keeps its dtype in JAX's
    # data too, and says so
    for path, res in r["paths"].items():
        assert res[0] == "ok", (path, res)
        assert res[3] == "xla" and res[2] == nx.dtypes.as_dtype(res[1], "t").numpy_dtype.name
        assert res[4] is True and res[5] == ["X64Warning"], (path, res)
    # turned off by the program after numerix turned it on: refused, never turned on again
    assert r["after_off"][:2] == ["raised", "UnsupportedDTypeError"], r["after_off"]
    assert "turned off by the program after numerix turned it on" in r["after_off"][2]


def test_set_true_turns_the_mode_on_at_the_first_64_bit_tensor_without_a_warning(tmp_path):
    # (and the kernel cache's bound, read from the settings when the backend loads)
    r, _ = _run(tmp_path, "fresh", "1", NUMERIX_BACKENDS__XLA__KERNEL_CACHE_SIZE="7")
    _common(r)
    assert r["mode_32"] is False and r["user_dtype_32"] == "float32"
    assert r["mode"] is True and r["warnings"] == []
    assert r["cache_size"] == 7


def test_jax_mode_already_on_is_left_alone_without_a_warning(tmp_path):
    r, _ = _run(tmp_path, "user-on", None)
    _common(r)
    assert r["mode"] is True and r["warnings"] == []


def test_set_false_leaves_jax_alone_and_refuses_every_64_bit_path(tmp_path):
    r, _ = _run(tmp_path, "fresh", "false", paths=True)
    assert r["f32"] == [4.0, -3.0] and r["i32"] == [4, 5] and r["wide"] is None
    assert r["mode"] is False and r["user_dtype"] == "float32" and r["warnings"] == []
    # the kit reports the 64-bit dtypes as not claimed
    wide = {"float64", "int64", "uint64", "complex128"}
    assert r["claimed"] == sorted(d.name for d in nx.dtypes.ALL_DTYPES if d.name not in wide)
    for path, res in r["paths"].items():
        # never a silent narrowing (a float64 tensor holding float32 data): a named error
        assert res[0] == "raised", (path, res)
        assert res[1] == "UnsupportedDTypeError", (path, res)
        assert "is off, as [backends.xla] x64 = false (NUMERIX_BACKENDS__XLA__X64=0)" in res[2]
        assert "set [backends.xla] x64 = true" in res[2] and "xla(host:0)" in res[2], res
        assert any(d in res[2] for d in ("float64", "int64", "uint64", "complex128")), res


_CHAIN = textwrap.dedent(
    """
    import json, warnings
    warnings.simplefilter("error")
    import jax
    import numerix as nx
    t, i = nx.tensor([1.0]), nx.tensor([1, 2])
    loaded = nx.configuration.resolve_backend("xla")  # loaded, listed, not chosen
    print(json.dumps([t.backend.name, i.dtype.name, str(jax.numpy.array(1.0).dtype),
                      bool(jax.config.jax_enable_x64)]))
    """
)


def test_a_priority_list_that_picks_another_backend_leaves_jax_alone(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_ENABLE_X64",
                                                            "NUMERIX_BACKENDS__XLA__X64")}  # fmt: skip
    env["NUMERIX_DEFAULT_BACKEND"] = "xla:cuda,torch:cuda,binary"
    out = subprocess.run([sys.executable, "-c", _CHAIN], env=env, capture_output=True,
                         text=True, timeout=600, cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == ["binary", "int64", "float32", False]


@pytest.mark.parametrize(
    "argv",
    [["info"], ["doctor"], ["bench", "matmul", "--backend", "xla", "--rows", "8", "--repeat",
                            "1", "--warmup", "0", "--no-raw"]],
    ids=["info", "doctor", "bench"],
)  # fmt: skip
def test_the_cli_leaves_jax_alone(tmp_path, argv):
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_ENABLE_X64",
                                                            "NUMERIX_BACKENDS__XLA__X64")}  # fmt: skip
    env.pop("NUMERIX_DEFAULT_BACKEND", None)
    out = subprocess.run([sys.executable, "-W", "error::numerix.configuration.ConfigWarning",
                          "-m", "numerix", *argv], env=env, capture_output=True, text=True,
                         timeout=600, cwd=tmp_path)  # fmt: skip
    assert "X64Warning" not in out.stderr and "Traceback" not in out.stderr, out.stderr[-3000:]
    assert out.returncode in (0, 1), out.stderr[-3000:]


def test_the_default_is_unset_as_the_warning_says():
    field = xla_settings().model_fields["x64"]
    assert field.default is None
    with nx.config(backends={"xla": {"x64": None}}) as s:
        assert s.backends.xla.x64 is None


def test_the_warning_points_at_the_users_line_under_a_context_manager():
    # in this process: JAX's mode off for the block, as numerix found it, then restored
    from numerix_xla import _x64

    was, turned = bool(jax.config.jax_enable_x64), _x64._turned_on
    jax.config.update("jax_enable_x64", False)
    _x64._turned_on = False
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with nx.config(backends={"xla": {"x64": None}}), nx.default_backend("xla"):
                t = nx.tensor(np.array([0.25, 0.5]))
        assert t.dtype is nx.float64 and bool(jax.config.jax_enable_x64)
    finally:
        jax.config.update("jax_enable_x64", was)
        _x64._turned_on = turned
    said = [w for w in caught if w.category is X64Warning]
    assert len(said) == 1, [str(w.message) for w in caught]
    assert said[0].filename == __file__, said[0].filename


def test_the_setting_is_typed():
    with pytest.raises(nx.ConfigError, match="x64"):
        with nx.config(backends={"xla": {"x64": "sometimes"}}):
            pass
    with nx.config(backends={"xla": {"x64": False}}) as s:
        assert s.backends.xla.x64 is False


_THIRTY_TWO_BIT = textwrap.dedent(
    """
    import json, warnings
    warnings.simplefilter("error")
    import jax
    import numerix as nx
    from numerix import random
    with nx.default_backend("xla"):
        k = random.key(3)
        x = random.normal(k, (4, 4))
        for f in (
            lambda: random.normal(k, (5,), dtype="float16"),
            lambda: random.truncated_normal(k, -1.0, 1.0, (5,)),
            lambda: random.uniform(k, (5,), minval=-3.0, maxval=2.0),
            lambda: random.randint(k, (5,), 0, 10, dtype="int32"),
            lambda: random.gumbel(k, (5,)),
            lambda: random.exponential(k, (5,)),
            lambda: random.bernoulli(k, 0.3, (5,)),
            lambda: nx.jit(lambda k: random.normal(k, (3,)), compiler="xla")(k),
            lambda: nx.softmax(x @ x).sum() + nx.var(x),
            lambda: nx.grad(lambda a: nx.logaddexp(a, a).sum())(x),
        ):
            f()
    print(json.dumps(bool(jax.config.jax_enable_x64)))
    """
)


def test_a_32_bit_program_on_xla_leaves_jax_alone(tmp_path):
    # numerix's own compositions make no 64-bit tensor for 32-bit work: normal's erf_inv
    # runs XLA's own (block xla_erf_inv), randint's int bounds take the draw's dtype
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_ENABLE_X64",
                                                            "NUMERIX_BACKENDS__XLA__X64")}  # fmt: skip
    env.pop("NUMERIX_DEFAULT_BACKEND", None)
    out = subprocess.run([sys.executable, "-c", _THIRTY_TWO_BIT], env=env, capture_output=True,
                         text=True, timeout=600, cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) is False
