"""Several processes through ``[backends.torch.distributed]`` (a gloo process group on
loopback, bounded by a timeout): numerix.distributed's collectives, and a data-parallel
gradient (each process's half of the batch, the gradients averaged with all_reduce)
equal to the whole batch's gradient in one process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import numpy as np

RUN = """
import json, sys
import numpy as np
import numerix as nx
from numerix import distributed

rng = np.random.default_rng(0)
w = rng.standard_normal((6, 3)).astype(np.float32)
xs = rng.standard_normal((8, 6)).astype(np.float32)

def loss(w, x):
    return nx.mean(nx.tanh(nx.dot(x, w)) ** 2)

grad = nx.jit(nx.grad(loss), compiler="torch")
if sys.argv[1] == "many":
    me, n = distributed.process_index("torch"), distributed.process_count("torch")
    rows = nx.tensor(xs[me * 4:(me + 1) * 4], backend="torch")
    g = distributed.all_reduce(grad(nx.tensor(w, backend="torch"), rows)) / n
    mine = nx.tensor(np.array([me + 1.0, -me], np.float32), backend="torch")
    out = {"index": me, "count": n, "sum": distributed.all_reduce(mine).tolist(),
           "min": distributed.all_reduce(mine, "min").tolist(),
           "gather": distributed.all_gather(mine).tolist(),
           "ints": distributed.all_reduce(nx.tensor([me, 5], dtype=nx.int32,
                                                    backend="torch")).tolist()}
else:
    g = grad(nx.tensor(w, backend="torch"), nx.tensor(xs, backend="torch"))
    out = {}
out["grad"] = g.to_numpy().tolist()
print(json.dumps(out))
"""


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_two_processes_average_their_gradients_and_agree() -> None:
    port = _port()
    base = {k: v for k, v in os.environ.items() if not k.startswith("NUMERIX_")}
    procs = []
    for rank in range(2):
        env = {
            **base,
            "NUMERIX_BACKENDS__TORCH__DISTRIBUTED__INIT_METHOD": f"tcp://127.0.0.1:{port}",
            "NUMERIX_BACKENDS__TORCH__DISTRIBUTED__WORLD_SIZE": "2",
            "NUMERIX_BACKENDS__TORCH__DISTRIBUTED__RANK": str(rank),
            "NUMERIX_BACKENDS__TORCH__DISTRIBUTED__TIMEOUT": "60",
        }
        procs.append(subprocess.Popen([sys.executable, "-c", RUN, "many"], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))  # fmt: skip
    outs = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=180)
            assert p.returncode == 0, err[-3000:]
            outs.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for p in procs:
            p.kill()
    one = subprocess.run([sys.executable, "-c", RUN, "one"], env=base, capture_output=True,
                         text=True, timeout=180)  # fmt: skip
    assert one.returncode == 0, one.stderr[-3000:]
    whole = np.array(json.loads(one.stdout.strip().splitlines()[-1])["grad"])
    assert sorted(o["index"] for o in outs) == [0, 1] and {o["count"] for o in outs} == {2}
    for got in outs:
        assert got["sum"] == [3.0, -1.0] and got["min"] == [1.0, -1.0]
        assert got["gather"] == [[1.0, 0.0], [2.0, -1.0]] and got["ints"] == [1, 10]
        np.testing.assert_allclose(np.array(got["grad"]), whole, rtol=1e-5, atol=1e-7)
    assert outs[0]["grad"] == outs[1]["grad"]
