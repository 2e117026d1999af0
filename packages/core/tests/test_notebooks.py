"""The notebooks of docs/notebooks run top to bottom, so that none can go stale.

Each notebook is executed with nbclient in a fresh Jupyter kernel of this interpreter
(a ``python3`` kernelspec written for the test, pointing at ``sys.executable``), on the
binary backend, and on xla and torch where numerix-xla and numerix-torch are installed
(``NUMERIX_DEFAULT_BACKEND`` set in the kernel's environment, as a reader would set it,
and ``NUMERIX_DEFAULT_COMPILER`` to the backend's own compiler: evaluator for binary).
The notebooks assert their own results against numpy, so a failing cell fails the test,
with the cell's source and its error. They run on generated data (scikit-learn's bundled
digits written as IDX files): ``MNIST_DIR`` is removed from the kernel's environment.

The committed notebooks carry no outputs: they are rendered and executed from source.
"""

from __future__ import annotations

import json
import os
import re
import sys
from importlib import metadata
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

REPO = Path(__file__).resolve().parents[3]
FOLDER = REPO / "docs" / "notebooks"
NOTEBOOKS = sorted(FOLDER.glob("*.ipynb"))
#: the seeds' notebooks, ported (issue 33): the docs site links them by these names
SEEDS = {"matmul-from-foundations", "broadcasting", "compiler-vs-backend", "axon-mlp"}
#: a cell longer than this is stuck, not slow (the notebooks run in seconds)
CELL_TIMEOUT = 300
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _installed(dist: str) -> bool:
    try:
        metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return False
    return True


#: the default compiler set with each backend, as one would set the two together
COMPILERS = {"binary": "evaluator", "xla": "xla", "torch": "torch"}
BACKENDS = [
    pytest.param("binary", id="binary"),
    *(
        pytest.param(
            name,
            id=name,
            marks=pytest.mark.skipif(
                not _installed(f"numerix-{name}"), reason=f"numerix-{name} is not installed"
            ),
        )
        for name in ("xla", "torch")
    ),
]


def test_the_seeds_notebooks_are_there_without_outputs() -> None:
    assert SEEDS <= {p.stem for p in NOTEBOOKS}, sorted(p.name for p in NOTEBOOKS)
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        assert nb.metadata.kernelspec.name == "python3", path.name
        for i, cell in enumerate(nb.cells):
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, (
                    f"{path.name}: cell {i} was committed with its outputs; clear them "
                    f"(jupyter nbconvert --clear-output --inplace {path.relative_to(REPO)})"
                )
            assert "execution" not in cell.metadata, f"{path.name}: cell {i} keeps timings"


@pytest.fixture
def kernel_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A ``python3`` kernelspec running this interpreter, found first on JUPYTER_PATH;
    the environment the kernel starts with (the backend is added per test)."""
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": "Python 3", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    assert KernelSpecManager().get_kernel_spec("python3").argv[0] == sys.executable
    env = dict(os.environ)
    env.pop("MNIST_DIR", None)
    # One CPU thread per kernel, unless the environment says otherwise: the kernels run
    # beside pytest-xdist's workers on few cores, where torch's spinning thread pool
    # makes a softmax of two numbers take milliseconds instead of microseconds.
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(
    path: Path, backend: str, kernel_env: dict[str, str], tmp_path: Path
) -> None:
    nb = nbformat.read(path, as_version=4)
    workdir = tmp_path / "cwd"  # whatever a notebook writes lands here
    workdir.mkdir()
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(workdir)}},
        shutdown_kernel="immediate",  # no wait for the kernel's own exit
    )
    # the kernel's temporary folders go to the test's, which a killed kernel cannot clean
    env = {
        **kernel_env,
        "NUMERIX_DEFAULT_BACKEND": backend,
        "NUMERIX_DEFAULT_COMPILER": COMPILERS[backend],
        "TMPDIR": str(tmp_path),
    }
    try:
        client.execute(env=env)
    except CellExecutionError:
        pytest.fail(_failure(path, backend, nb), pytrace=False)
    # the notebook ran on the backend it was given
    first = next(c for c in nb.cells if c.cell_type == "code")
    shown = "".join(o.get("data", {}).get("text/plain", "") for o in first.outputs)
    assert shown.startswith(f"{backend}("), (path.name, shown)


def _failure(path: Path, backend: str, nb: nbformat.NotebookNode) -> str:
    """The failing cell of an executed notebook: its number, source and error."""
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.output_type == "error":
                trace = _ANSI.sub("", "\n".join(out.traceback))
                return (
                    f"{path.relative_to(REPO)} on {backend}: cell {i} failed\n"
                    f"--- source\n{cell.source}\n--- {out.ename}: {out.evalue}\n{trace}"
                )
    return f"{path.relative_to(REPO)} on {backend}: the execution failed without a cell error"
