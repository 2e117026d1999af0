"""The ops families load on first use: `import numerix` and a first `add` on binary load
creation, element-wise and transfer only; every other family loads when one of its names
is first used, by every path to it, and then works. Each check in a fresh interpreter."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

import numerix as nx
from numerix import _tensor

#: The families a first op does not load, by name.
LAZY = ("reduction", "linalg", "linalg_blocks", "shape", "indexing", "window", "conv", "sort",
        "composites", "fft", "einsum", "display")  # fmt: skip


def _fresh(code: str) -> list[str]:
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_the_first_add_on_binary_loads_no_lazy_family() -> None:
    out = _fresh(f"""
        import sys
        import numerix as nx
        x = nx.ones(4, dtype=nx.float32)
        y = nx.add(x, nx.asarray([1.0, 2.0, 3.0, 4.0], dtype=nx.float32))
        print(y.tolist(), y.dtype, y.backend.name)
        lazy = [f"numerix.ops.{{f}}" for f in {LAZY!r}] + ["numerix.nn", "numerix.random"]
        print(sorted(m for m in lazy if m in sys.modules))
    """)
    assert out == ["[2.0, 3.0, 4.0, 5.0] float32 binary", "[]"]


def test_the_lazy_tables_are_the_families_own_lists() -> None:
    from numerix import ops

    assert tuple(ops.LAZY_FAMILIES) == LAZY
    for family, names in ops.LAZY_FAMILIES.items():
        module = importlib.import_module(f"numerix.ops.{family}")
        # a name added to a family's __all__ goes into numerix.ops.LAZY_FAMILIES too
        assert names == tuple(module.__all__), family


# each family by another path to it: a Tensor method or operator, numerix.<name>,
# numerix.ops.<name>, `from numerix import <name>`; the result against numpy
USES = {
    "reduction": ("x.sum()", "a.sum()"),
    "linalg": ("x @ x", "a @ a"),
    "linalg_blocks": ("nx.ops.cholesky(x @ x.T + 4 * nx.eye(4, dtype=nx.float64))",
                      "np.linalg.cholesky(a @ a.T + 4 * np.eye(4))"),
    "shape": ("x.reshape(2, 8)", "a.reshape(2, 8)"),
    "indexing": ("x[1:3, nx.tensor([0, 2])]", "a[1:3, [0, 2]]"),
    "window": ("nx.window_sum(x, (2, 2))", "np.lib.stride_tricks.sliding_window_view(a, (2, 2)).sum((2, 3))"),
    "conv": ("__import__('numerix').conv(nx.reshape(x, (1, 1, 4, 4)), nx.ones((1, 1, 2, 2), dtype=nx.float64))",
             "np.lib.stride_tricks.sliding_window_view(a, (2, 2)).sum((2, 3))[None, None]"),
    "sort": ("nx.ops.sort(-x, axis=1)", "np.sort(-a, axis=1)"),
    "composites": ("nx.softmax(x)", "np.exp(a) / np.exp(a).sum(-1, keepdims=True)"),
    "fft": ("nx.fft.fft(x)", "np.fft.fft(a)"),
    "einsum": ("nx.einsum('ij,jk->ik', x, x)", "a @ a"),
    "display": ("nx.tensor(list(x.clip(0, 1).to_image().data[:8]))",
                "[137, 80, 78, 71, 13, 10, 26, 10]"),  # the PNG signature
}  # fmt: skip


@pytest.mark.parametrize("family", LAZY)
def test_a_family_loads_on_first_use_and_works(family: str) -> None:
    use, want = USES[family]
    out = _fresh(f"""
        import sys
        import numpy as np
        import numerix as nx
        a = np.arange(16.0).reshape(4, 4) / 10
        x = nx.from_numpy(a)
        name = "numerix.ops.{family}"
        print(name in sys.modules)
        r = {use}
        w = np.asarray({want})
        print(name in sys.modules, r.shape == w.shape, r.dtype.numpy_dtype == w.dtype)
        np.testing.assert_allclose(r.to_numpy(), w, rtol=1e-12, atol=1e-12)
        # every name of the family is bound on numerix.ops and for Tensor's methods: later
        # calls find an attribute
        ops, methods = vars(nx.ops), vars(sys.modules["numerix._tensor"]._ops)
        print(all(n in ops and methods[n] is ops[n] for n in nx.ops.LAZY_FAMILIES["{family}"]))
    """)
    assert out == ["False", "True True True", "True"]


def test_tensor_methods_reach_the_ops_through_a_plain_module() -> None:
    # CPython specialises `module.name` on an exact module without __getattr__ only
    ns = _tensor._ops
    assert type(ns) is types.ModuleType and "__getattr__" not in vars(ns)
    assert type(nx.ops) is not types.ModuleType and "__getattr__" in vars(nx.ops)
    x = nx.ones((2, 3))
    assert x.sum().item() == 6.0 and x.reshape(6).shape == (6,) and x[0].shape == (3,)
    for name in ("sum", "reshape", "getitem", "add", "matrix_transpose_T", "tensor"):
        assert vars(ns)[name] is getattr(nx.ops, name)
    assert set(nx.ops.__all__) <= set(vars(ns))


def test_a_family_imported_by_name_binds_its_ops_for_tensor_methods() -> None:
    # x[0] is served by the compiled fast path, which never calls the loader left in
    # Tensor's namespace: importing the family itself must bind its ops there
    out = _fresh("""
        import importlib
        import numerix as nx
        from numerix import _tensor
        importlib.import_module("numerix.ops.indexing")
        import numerix.ops.linalg
        x = nx.ones((2, 3))
        x[0]
        ns = vars(_tensor._ops)
        print([ns[n] is vars(nx.ops)[n] for n in ("getitem", "take", "matmul", "dot")])
    """)
    assert out == [str([True] * 4)]


def test_a_family_that_shares_its_name_with_an_op_keeps_the_op() -> None:
    # numerix.random imports numerix.ops.sort, which binds the submodule on numerix.ops
    out = _fresh("""
        import types
        import numerix as nx
        import numerix.ops.fft
        import numerix.random
        from numerix.ops import conv
        import numerix.ops.einsum
        print([isinstance(f, types.FunctionType) for f in (nx.ops.sort, nx.ops.fft, conv,
               nx.ops.einsum, nx.sort, nx.fft.fft)])
        print(nx.ops.sort(nx.tensor([3, 1, 2])).tolist())
        print(isinstance(nx.fft, types.ModuleType))  # the array API's fft extension
    """)
    assert out == [str([True] * 6), "[1, 2, 3]", "True"]


def test_a_fresh_process_meets_the_blocks_through_the_public_api() -> None:
    # the blocks' rules are in numerix.primitives: the registry answers before any op
    # loads, and grad, a compiled program and a backend's own block find them
    out = _fresh("""
        import sys
        import numpy as np
        import numerix as nx
        from numerix.primitives import BLOCKS
        print([BLOCKS[n].vjp is not None for n in ("softmax", "log_softmax", "svd", "qr")],
              "numerix.ops.composites" in sys.modules, "numerix.ops.linalg_blocks" in sys.modules)
        a = np.array([[4.0, 2.0], [2.0, 5.0]])
        g = nx.grad(lambda x: nx.sum(nx.cholesky(x)))(nx.from_numpy(a))
        s = nx.jit(lambda x: nx.log_softmax(x, axis=-1))(nx.from_numpy(a))
        print(g.shape, g.dtype, s.shape, s.dtype)
        np.testing.assert_allclose(s.to_numpy(), a - np.log(np.exp(a).sum(-1, keepdims=True)))
        h = 1e-6
        num = [(np.linalg.cholesky(a + h * e).sum() - np.linalg.cholesky(a - h * e).sum()) / (2 * h)
               for e in (np.array([[1.0, 0], [0, 0]]), np.array([[0, 0], [1.0, 0]]),
                         np.array([[0, 0], [0, 1.0]]))]
        got = g.to_numpy()
        np.testing.assert_allclose([got[0, 0], got[1, 0], got[1, 1]], num, rtol=1e-5)
        print(g.tolist()[0][1])
    """)
    assert out[0] == "[True, True, True, True] False False"
    assert out[1] == "(2, 2) float64 (2, 2) float64"
    assert out[2] == "0.0"  # the upper triangle is not read


def test_all_and_dir_list_every_public_name_and_each_resolves() -> None:
    out = _fresh("""
        import pickle, pydoc, sys
        import numerix as nx
        names = list(nx.__all__)
        listed = set(dir(nx))
        print(len(names) == len(set(names)), [n for n in names if n not in listed])
        print([n for n in names if getattr(nx, n, None) is None and n != "bool"])
        # numerix.fft is the fft extension module (numerix.ops.fft the function)
        print([n for n in nx.ops.__all__ if getattr(nx, n) is not getattr(nx.ops, n) and n != "fft"])
        print(set(nx.ops.__all__) <= set(dir(nx.ops)))
        f = pickle.loads(pickle.dumps(nx.softmax))
        print(f is nx.ops.softmax, "numerix.ops.composites" in sys.modules)
        print("softmax" in pydoc.render_doc(nx.ops, renderer=pydoc.plaintext))
        print(names)
    """)
    assert out[:5] == ["True []", "[]", "[]", "True", "True True"]
    assert out[5] == "True"
    # the content of numerix.__all__ is each family's __all__, the eager ones imported
    names = ast.literal_eval(out[6])
    families = ("creation", "elementwise", *LAZY[:9], "transfer", "fft", "einsum", "display")
    ops_names = [n for f in families for n in importlib.import_module(f"numerix.ops.{f}").__all__]
    assert names[-len(ops_names) :] == ops_names
    assert names == nx.__all__
    for n in ("softmax", "relu", "nn", "random", "jit", "Tensor", "float32", "add", "einsum"):
        assert n in names


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match=r"module 'numerix\.ops' has no attribute 'nope'"):
        nx.ops.nope  # noqa: B018
    with pytest.raises(AttributeError, match="module 'numerix' has no attribute 'nope'"):
        nx.nope  # noqa: B018


def test_the_import_check_counts_a_load_on_first_use(tmp_path: Path) -> None:
    # a family that imports a lazy name of numerix.ops, whose family imports it back: the
    # first use would find it half loaded; tools/check_imports.py counts the lazy load
    spec = importlib.util.spec_from_file_location(
        "check_imports", Path(__file__).resolve().parents[3] / "tools" / "check_imports.py"
    )
    assert spec is not None and spec.loader is not None
    checker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(checker)
    files = {
        "__init__.py": "",
        "ops/__init__.py": (
            "import importlib\n_FAMILY = {'g': 'b'}\n\n"
            "def __getattr__(name):\n"
            "    return getattr(importlib.import_module(f'{__name__}.{_FAMILY[name]}'), name)\n"
        ),
        "ops/a.py": "from numerix.ops import g\n",
        "ops/b.py": "from numerix.ops.a import f\n",
    }
    for rel, text in files.items():
        path = tmp_path / "packages/core/src/numerix" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (problem,) = checker.check(tmp_path)
    assert "import cycle among 3 modules: numerix.ops, numerix.ops.a, numerix.ops.b" in problem
    (tmp_path / "packages/core/src/numerix/ops/b.py").write_text("def f(): pass\n")
    assert checker.check(tmp_path) == []
