"""The typed contract (numerix.primitives.contract) says what the registry says, and mypy
refuses a backend whose method differs from it."""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from numerix.primitives import REGISTRY, REQUIRED, REQUIRED_FOR_COMPLEX, Primitive, contract

P = inspect.Parameter


def _own_methods(cls: type) -> dict[str, Any]:
    return {k: v for k, v in vars(cls).items() if inspect.isfunction(v) and not k.startswith("__")}


def _where(p: Primitive) -> type:
    if p.name in REQUIRED:
        return contract.RequiredCore
    if p.name in REQUIRED_FOR_COMPLEX:
        return contract.ComplexParts
    return contract.FullContract


def test_each_protocol_holds_its_primitives_and_no_other() -> None:
    expected: dict[type, set[str]] = {
        contract.RequiredCore: {*REQUIRED, "to_numpy"},
        contract.ComplexParts: set(REQUIRED_FOR_COMPLEX),
        contract.FullContract: {p.name for p in REGISTRY if not p.required},
    }
    for cls, names in expected.items():
        assert set(_own_methods(cls)) == names, cls.__name__
    assert contract.FullContract.__bases__[:2] == (contract.RequiredCore, contract.ComplexParts)


@pytest.mark.parametrize("name", REGISTRY.names())
def test_method_matches_the_declaration(name: str) -> None:
    p = REGISTRY[name]
    method = _own_methods(_where(p))[name]
    assert " ".join((inspect.getdoc(method) or "").split()) == " ".join(p.doc.split())  # wrapped
    params = list(inspect.signature(method).parameters.values())[1:]  # after self
    kinds = [(q.name, q.kind) for q in params]
    if name == "from_numpy":  # the host's array, not a tensor
        assert kinds == [("out", P.POSITIONAL_ONLY), ("array", P.POSITIONAL_ONLY)]
        return
    want = [("out", P.POSITIONAL_ONLY)]
    want += [
        (i[1:], P.VAR_POSITIONAL) if i.startswith("*") else (i, P.POSITIONAL_ONLY) for i in p.inputs
    ]
    want += [(k, P.KEYWORD_ONLY) for k in p.params]  # never the rules-only out_params
    assert kinds == want
    for q in params:
        annotation = "Any" if q.kind is P.KEYWORD_ONLY else "Tensor"
        assert q.annotation == annotation, (name, q.name)
    assert inspect.signature(method).return_annotation == "Tensor"


def test_host_exchange() -> None:
    sig = inspect.signature(contract.RequiredCore.to_numpy)
    assert [(q.name, q.kind) for q in sig.parameters.values()] == [
        ("self", P.POSITIONAL_ONLY),
        ("x", P.POSITIONAL_ONLY),
    ]
    assert sig.return_annotation == "np.ndarray"


#: Backend classes, one right and the others each wrong in one way, assigned to
#: FullContract; mypy must refuse exactly the wrong ones (the line of each ``return b``).
_PROBE = """
from __future__ import annotations

from typing import Any

from numerix._tensor import Tensor
from numerix.backend import Backend
from numerix.primitives.contract import FullContract


class Right(Backend):
    def reduce(self, out: Tensor, a: Tensor, *, kind: str, axes: Any, keepdims: bool) -> Tensor:
        return out

    def concatenate(self, out: Tensor, *parts: Tensor, axis: int) -> Tensor:
        return out


class Misspelled(Backend):
    def reduce(self, out: Tensor, x: Tensor, *, kind: Any, axis: Any, keepdims: Any) -> Tensor:
        return out


class MissingParam(Backend):
    def transpose(self, out: Tensor, x: Tensor) -> Tensor:
        return out


class ExtraInput(Backend):
    def add(self, out: Tensor, x1: Tensor, x2: Tensor, x3: Tensor) -> Tensor:
        return out


class NotASequence(Backend):
    def concatenate(self, out: Tensor, xs: list[Tensor], *, axis: int) -> Tensor:
        return out


def right(b: Right) -> FullContract:
    return b  # RIGHT


def misspelled(b: Misspelled) -> FullContract:
    return b  # WRONG reduce


def missing_param(b: MissingParam) -> FullContract:
    return b  # WRONG transpose


def extra_input(b: ExtraInput) -> FullContract:
    return b  # WRONG add


def not_a_sequence(b: NotASequence) -> FullContract:
    return b  # WRONG concatenate
"""

_CONFIG = """
[mypy]
follow_imports = silent
show_error_codes = True
[mypy-ml_dtypes.*]
ignore_missing_imports = True
"""


def test_mypy_refuses_a_method_that_differs(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent(_PROBE), encoding="utf-8")
    (tmp_path / "mypy.ini").write_text(_CONFIG, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--cache-dir", "cache",
         "--no-error-summary", "probe.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    report = run.stdout + run.stderr
    assert run.returncode == 1, report
    lines = probe.read_text(encoding="utf-8").splitlines()
    marked = {i + 1: line.split("#", 1)[1].split() for i, line in enumerate(lines) if "# " in line}
    errors = [ln for ln in report.splitlines() if ": error:" in ln]
    refused = {int(ln.split(":")[1]) for ln in errors}
    assert all(ln.startswith("probe.py:") for ln in errors), report
    assert refused == {n for n, mark in marked.items() if mark[0] == "WRONG"}, report
    for n, mark in marked.items():
        if mark[0] == "WRONG":  # the note names the method that conflicts
            assert f"probe.py:{n}: note:         def {mark[1]}(" in report, report
