"""Libraries that speak the array API run on numerix tensors: scikit-learn's estimators
with ``array_api_dispatch``, SciPy's functions with ``SCIPY_ARRAY_API=1``, and the plain
numpy paths scikit-learn takes without the flag (docs/array-api.md)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numerix as nx
from numerix import plugins

sklearn = pytest.importorskip("sklearn", reason="scikit-learn is in the core's test extra")
scipy = pytest.importorskip("scipy", reason="SciPy is in the core's test extra")
pytest.importorskip("array_api_compat", reason="in the core's test extra: scikit-learn's dispatch")

BACKENDS = [b for b in ("binary", "xla", "torch") if b in plugins.backend_entries()]

# run in a fresh process: SciPy reads SCIPY_ARRAY_API once, at its import
CLIENT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import numerix as nx
    import scipy.fft, scipy.special
    import sklearn
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    backend = sys.argv[1]
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(np.int64)
    Xt, yt = nx.tensor(X, backend=backend), nx.tensor(y, backend=backend)
    out = {}
    with sklearn.config_context(array_api_dispatch=True):
        lda = LinearDiscriminantAnalysis().fit(Xt, yt)
        pred = lda.predict(Xt)
        pca = PCA(n_components=2, svd_solver="full").fit(Xt)
        proj = pca.transform(Xt)
    ref_lda = LinearDiscriminantAnalysis().fit(X, y)
    ref_pca = PCA(n_components=2, svd_solver="full").fit(X)
    out["lda_type"] = type(pred).__name__
    out["lda_backend"] = pred.backend.name
    out["lda_agree"] = float(np.mean(np.asarray(pred) == ref_lda.predict(X)))
    out["lda_coef"] = float(np.max(np.abs(np.asarray(lda.coef_) - ref_lda.coef_)))
    out["pca_backend"] = proj.backend.name
    # components are defined up to sign: compare the absolute projections
    out["pca_proj"] = float(np.max(np.abs(np.abs(np.asarray(proj)) - np.abs(ref_pca.transform(X)))))
    out["pca_var"] = float(np.max(np.abs(np.asarray(pca.explained_variance_)
                                         - ref_pca.explained_variance_)))
    lse = scipy.special.logsumexp(Xt, axis=1)
    out["lse_backend"] = lse.backend.name
    out["lse"] = float(np.max(np.abs(np.asarray(lse) - scipy.special.logsumexp(X, axis=1))))
    f = scipy.fft.fft(Xt, axis=0)
    out["fft_backend"] = f.backend.name
    out["fft"] = float(np.max(np.abs(np.asarray(f) - np.fft.fft(X, axis=0))))
    print(json.dumps(out))
    """
)


@pytest.mark.parametrize("backend", BACKENDS)
def test_scikit_learn_and_scipy_run_on_tensors_and_give_numpys_answers(backend: str) -> None:
    env = {**os.environ, "SCIPY_ARRAY_API": "1", "NUMERIX_BACKENDS__XLA__X64": "1"}
    run = subprocess.run(
        [sys.executable, "-c", CLIENT, backend], capture_output=True, text=True, env=env,
        timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-4000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["lda_type"] == "Tensor" and got["lda_backend"] == backend, got
    assert got["lda_agree"] == 1.0 and got["lda_coef"] < 1e-8, got
    assert got["pca_backend"] == backend and got["pca_proj"] < 1e-8 and got["pca_var"] < 1e-8
    assert got["lse_backend"] == backend and got["lse"] < 1e-12, got
    assert got["fft_backend"] == backend and got["fft"] < 1e-10, got


@pytest.mark.parametrize("backend", BACKENDS)
def test_scikit_learns_plain_paths_take_tensors_as_numpy_arrays(backend: str) -> None:
    from sklearn.preprocessing import StandardScaler

    # float32 on xla: float64 would switch JAX's 64-bit mode on for this whole process
    dt = np.float32 if backend == "xla" else np.float64
    x = np.random.default_rng(1).normal(size=(8, 3)).astype(dt)
    t = nx.tensor(x, backend=backend)
    got = StandardScaler().fit_transform(t)
    assert isinstance(got, np.ndarray) and got.dtype == dt
    np.testing.assert_array_equal(got, StandardScaler().fit_transform(x))
    assert np.may_share_memory(t, np.zeros(3)) is False
    if backend == "binary":  # the host array itself: no copy
        assert np.may_share_memory(t, t) and np.shares_memory(t, np.asarray(t))
    buf = io.BytesIO()
    np.save(buf, t)
    buf.seek(0)
    back = np.load(buf)
    assert back.dtype == dt and np.array_equal(back, x)
    buf = io.BytesIO()
    np.savez(buf, a=t, b=[t, t])
    buf.seek(0)
    loaded = np.load(buf)
    assert np.array_equal(loaded["a"], x) and loaded["b"].shape == (2, 8, 3)
