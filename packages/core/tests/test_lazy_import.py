"""`import numerix` loads what an eager op needs; numerix.defn and numerix.random load on
first use of one of their names (PEP 562), each check in a fresh interpreter."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap

import numpy as np

import numerix as nx


def _fresh(code: str) -> list[str]:
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_import_numerix_and_an_eager_op_load_neither_defn_nor_random() -> None:
    out = _fresh("""
        import sys
        import numerix as nx
        lazy = ("numerix.defn", "numerix.defn.autodiff", "numerix.defn.jit", "numerix.random",
                "jax", "torch")
        print(sorted(m for m in lazy if m in sys.modules))
        x = nx.ones(3)
        print((x + x * 2.0).tolist(), x[1:].shape)
        print(sorted(m for m in lazy if m in sys.modules))
        nx.grad
        print(sorted(m for m in ("numerix.defn.autodiff", "numerix.random") if m in sys.modules))
        nx.random
        print("numerix.random" in sys.modules)
    """)
    assert out == [
        "[]", "[3.0, 3.0, 3.0] (2,)", "[]", "['numerix.defn.autodiff']", "True"
    ]  # fmt: skip


def test_lazy_names_are_the_functions_and_listed() -> None:
    autodiff, control, jit, trace = (
        importlib.import_module(f"numerix.defn.{m}")
        for m in ("autodiff", "control", "jit", "trace")
    )
    assert nx.grad is autodiff.grad and nx.vjp is autodiff.vjp
    assert nx.cond is control.cond and nx.while_loop is control.while_loop
    assert nx.jit is jit.jit and nx.defn is jit.defn and nx.trace is trace.trace
    assert callable(nx.defn)
    for name in ("defn", "jit", "grad", "random", "value_and_grad", "custom_vjp"):
        assert name in dir(nx) and name in nx.__all__
    missing = [n for n in nx.__all__ if not hasattr(nx, n)]
    assert missing == []
    try:
        nx.no_such_name  # noqa: B018
    except AttributeError as e:
        assert "module 'numerix' has no attribute 'no_such_name'" in str(e)
    else:
        raise AssertionError("numerix.no_such_name did not raise AttributeError")


def test_importing_the_defn_subpackage_first_keeps_the_decorator() -> None:
    # a compiler imports numerix.defn.jit before numerix.defn is ever read: Python binds
    # the subpackage as numerix's attribute `defn`, where numerix.defn is the decorator
    out = _fresh("""
        import numerix
        import numerix.defn.compilers
        import numerix.defn.jit
        print(type(numerix.defn).__name__)
        @numerix.defn
        def f(x):
            return x * 2
        print(f(numerix.tensor([1.0, 2.0])).tolist())
        from numerix import *
        print(type(defn).__name__, type(jit).__name__, type(random).__name__)
    """)
    assert out == ["function", "[2.0, 4.0]", "function function module"]


def test_jit_does_not_load_autodiff_until_a_transform_is_named() -> None:
    out = _fresh("""
        import sys
        import numerix as nx
        f = nx.jit(lambda a: a * 2.0 + 1.0)
        print(f(nx.ones(2)).tolist(), "numerix.defn.autodiff" in sys.modules)
        d = sys.modules["numerix.defn"]  # numerix.defn, the attribute, is the decorator
        print(sorted(n for n in ("grad", "stop_grad", "jit") if n in dir(d)))
        print("numerix.defn.autodiff" in sys.modules)
        from numerix.defn import grad
        print(grad(lambda a: nx.sum(a * a))(nx.ones(2)).tolist())
        print("numerix.defn.autodiff" in sys.modules, grad is d.grad is nx.grad)
        try:
            d.no_such_name
        except AttributeError as e:
            print(e)
    """)
    assert out == [
        "[3.0, 3.0] False",
        "['grad', 'jit', 'stop_grad']",
        "False",
        "[2.0, 2.0]",
        "True True",
        "module 'numerix.defn' has no attribute 'no_such_name'",
    ]


def test_a_named_compiler_loads_neither_the_auto_search_nor_control_flow() -> None:
    out = _fresh("""
        import sys
        import numerix as nx
        f = nx.jit(lambda a: a * 2.0 + 1.0, compiler="evaluator")
        print(f(nx.ones(2)).tolist(), sorted(m for m in ("numerix.defn.auto",
              "numerix.defn.control", "optree") if m in sys.modules))
        choice = f.explain(nx.ones(2))  # the Choice, made when asked
        print(choice.compiler, "|", choice.reason, "|", "numerix.defn.auto" in sys.modules)
        print(sys.modules["numerix.defn"].Choice is type(choice), f.explain(nx.ones(2)) is choice)
    """)
    assert out == [
        "[3.0, 3.0] []",
        "evaluator | jit(compiler='evaluator') names it | True",
        "True True",
    ]


def test_a_training_step_over_a_dict_of_parameters_is_traced_without_optree() -> None:
    # value_and_grad's trees of Python containers (a dict of parameters, a tuple of
    # results) are read and rebuilt without optree, as jit's are (its import is paid on
    # a new process's first call); a structure of another kind still goes through optree
    out = _fresh("""
        import sys
        import numerix as nx
        from collections import namedtuple
        def loss(p, x):
            return nx.sum(nx.tanh(x * p["w"] + p["b"]) ** 2)
        def step(p, x):
            v, g = nx.value_and_grad(loss)(p, x)
            return v, {k: p[k] - 0.1 * g[k] for k in p}
        p = {"w": nx.ones(3), "b": nx.zeros(3)}
        v, new = nx.jit(step, compiler="evaluator")(p, nx.ones(3))
        print(round(v.item(), 4), sorted(new), "optree" in sys.modules)
        P = namedtuple("P", "w b")
        g = nx.grad(lambda q: nx.sum(q.w * q.b))(P(nx.ones(2), nx.full((2,), 3.0)))
        print(type(g).__name__, g.w.tolist(), "optree" in sys.modules)
    """)
    want = round(float(3 * np.tanh(np.float32(1.0)) ** 2), 4)  # the loss at w=1, b=0, x=1
    assert out == [f"{want} ['b', 'w'] False", "P [3.0, 3.0] True"]
