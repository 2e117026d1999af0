"""Several processes, one computation: two processes on this machine join through
``[backends.xla.distributed]`` (loopback only, bounded by a timeout), spread a batch over
their devices, run one data-parallel step, and agree with each other and with one
process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import numpy as np

STEP = """
import json, sys
import numpy as np
import numerix as nx

rng = np.random.default_rng(0)
w = rng.standard_normal((6, 3)).astype(np.float32)
xs = rng.standard_normal((8, 6)).astype(np.float32)

def loss(w, x):
    return nx.mean(nx.tanh(nx.dot(x, w)) ** 2)

def step(w, x):
    value, g = nx.value_and_grad(loss)(w, x)
    return value, w - 0.5 * g

if sys.argv[1] == "many":
    everywhere = nx.get_backend("xla", devices="all")
    batch, rep = nx.sharding("all", axis=0), nx.sharding("all")
    f = nx.jit(step, compiler="xla", in_shardings=(rep, batch))
    value, w2 = f(nx.tensor(w), nx.tensor(xs))
    x = nx.device_put(nx.tensor(xs), batch)
    me = nx.distributed.process_index("xla")
    mine = nx.tensor(np.array([me + 1.0, -me], np.float32), backend="xla")
    out = {"devices": everywhere.device_count, "backend": repr(value.backend),
           "x_local_rows": sum(s.data.shape[0] for s in x.data.addressable_shards),
           "x": x.to_numpy().tolist(), "index": me,
           "count": nx.distributed.process_count("xla"),
           "sum": nx.distributed.all_reduce(mine).to_numpy().tolist(),
           "max": nx.distributed.all_reduce(mine, "max").to_numpy().tolist(),
           "gather": nx.distributed.all_gather(mine).to_numpy().tolist()}
else:
    value, w2 = nx.jit(step, compiler="xla")(nx.tensor(w, backend="xla"), nx.tensor(xs, backend="xla"))
    out = {}
out.update(loss=value.item(), w=w2.to_numpy().tolist())
print(json.dumps(out))
"""


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_two_processes_run_one_sharded_step_and_agree() -> None:
    port = _port()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("NUMERIX_", "XLA_FLAGS"))}
    procs = []
    for pid in range(2):
        env = {
            **base,
            "JAX_PLATFORMS": "cpu",
            "NUMERIX_BACKENDS__XLA__DISTRIBUTED__COORDINATOR_ADDRESS": f"127.0.0.1:{port}",
            "NUMERIX_BACKENDS__XLA__DISTRIBUTED__NUM_PROCESSES": "2",
            "NUMERIX_BACKENDS__XLA__DISTRIBUTED__PROCESS_ID": str(pid),
            "NUMERIX_BACKENDS__XLA__DISTRIBUTED__INITIALIZATION_TIMEOUT": "60",
        }
        procs.append(subprocess.Popen([sys.executable, "-c", STEP, "many"], env=env,
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
    one = subprocess.run([sys.executable, "-c", STEP, "one"], env={**base, "JAX_PLATFORMS": "cpu"},
                         capture_output=True, text=True, timeout=180)  # fmt: skip
    assert one.returncode == 0, one.stderr[-3000:]
    single = json.loads(one.stdout.strip().splitlines()[-1])
    for got in outs:
        # every process sees both processes' devices, holds half the batch, and gathers it
        assert got["devices"] == 2 and got["backend"] == "xla(host:0..1)"
        assert got["x_local_rows"] == 4
        np.testing.assert_array_equal(np.array(got["x"]), np.array(outs[0]["x"]))
        np.testing.assert_allclose(got["loss"], single["loss"], rtol=1e-6)
        np.testing.assert_allclose(np.array(got["w"]), np.array(single["w"]), rtol=1e-5, atol=1e-6)
    assert outs[0]["loss"] == outs[1]["loss"]
    # numerix.distributed's collectives: each process's own tensor, combined in both
    assert sorted(o["index"] for o in outs) == [0, 1] and {o["count"] for o in outs} == {2}
    for got in outs:
        assert got["sum"] == [3.0, -1.0] and got["max"] == [2.0, 0.0]
        assert got["gather"] == [[1.0, 0.0], [2.0, -1.0]]


def test_a_process_that_cannot_reach_the_coordinator_gets_a_named_error() -> None:
    # JAX's own client would end the process (a fatal error in its runtime); numerix
    # reaches the coordinator from Python first and raises ConfigError
    code = (
        "import numerix as nx\n"
        "try:\n    nx.ones(2, backend='xla')\n"
        "except nx.ConfigError as e:\n    print('ConfigError:', e)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMERIX_", "XLA_FLAGS"))}
    env.update({
        "JAX_PLATFORMS": "cpu",
        "NUMERIX_BACKENDS__XLA__DISTRIBUTED__COORDINATOR_ADDRESS": f"127.0.0.1:{_port()}",
        "NUMERIX_BACKENDS__XLA__DISTRIBUTED__NUM_PROCESSES": "2",
        "NUMERIX_BACKENDS__XLA__DISTRIBUTED__PROCESS_ID": "1",
        "NUMERIX_BACKENDS__XLA__DISTRIBUTED__INITIALIZATION_TIMEOUT": "1",
    })  # fmt: skip
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert "process 1 of 2" in run.stdout and "did not answer in 1 s" in run.stdout, run.stdout


_JOIN = (
    "import numerix as nx\n"
    "try:\n    nx.ones(2, backend='xla')\n"
    "except nx.ConfigError as e:\n    print('ConfigError:', e)\n"
)


def _joining(port: int, pid: int, count: int, timeout: int) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMERIX_", "XLA_FLAGS"))}
    env.update({
        "JAX_PLATFORMS": "cpu",
        "NUMERIX_BACKENDS__XLA__DISTRIBUTED__COORDINATOR_ADDRESS": f"127.0.0.1:{port}",
        "NUMERIX_BACKENDS__XLA__DISTRIBUTED__NUM_PROCESSES": str(count),
        "NUMERIX_BACKENDS__XLA__DISTRIBUTED__PROCESS_ID": str(pid),
        "NUMERIX_BACKENDS__XLA__DISTRIBUTED__INITIALIZATION_TIMEOUT": str(timeout),
    })  # fmt: skip
    return subprocess.Popen([sys.executable, "-c", _JOIN], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


def test_process_0_waiting_for_processes_that_never_come_gets_a_named_error() -> None:
    # JAX's runtime ended process 0 (SIGABRT) when the others did not register in time;
    # the processes meet from Python first, and process 0 raises ConfigError
    p = _joining(_port(), 0, 3, 1)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err[-2000:]
    assert "process 0 of 3" in out and "process(es) 1, 2 did not join in 1 s" in out, out


def test_processes_started_with_different_counts_are_refused_by_name() -> None:
    port = _port()
    zero = _joining(port, 0, 2, 20)
    one = _joining(port, 1, 3, 20)
    try:
        outs = [p.communicate(timeout=120) for p in (zero, one)]
    finally:
        zero.kill()
        one.kill()
    assert zero.returncode == 0 and one.returncode == 0, outs[0][1][-2000:] + outs[1][1][-2000:]
    assert "process 1 was started with num_processes=3" in outs[0][0], outs[0]
    assert "process 0 refused this process: process 0 has num_processes=2" in outs[1][0], outs[1]
