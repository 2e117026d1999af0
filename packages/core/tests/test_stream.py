"""``numerix.stream``: chunks through a function compiled once, on a worker thread
(``EXLA.stream``). numpy, run chunk by chunk in the same order, is the oracle."""

from __future__ import annotations

import queue
import threading

import numpy as np
import pytest

import numerix as nx
from numerix import plugins
from numerix.defn.streaming import StreamClosedError, StreamEmptyError, StreamFullError

OTHERS = [b for b in ("xla", "torch") if b in plugins.backend_entries()]
needs_others = pytest.mark.skipif(
    not OTHERS,
    reason="runs the stream on xla and torch: neither numerix-xla nor numerix-torch is installed",
)


def double_and_add(chunk: nx.Tensor, acc: nx.Tensor) -> tuple[nx.Tensor, nx.Tensor]:
    return chunk * 2, acc + chunk


def check(got: nx.Tensor, want: np.ndarray) -> None:
    assert type(got) is nx.Tensor
    assert got.dtype.name == want.dtype.name, (got.dtype, want.dtype)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.to_numpy(), want)


def run_stream(backend: str, compiler: str, n: int, lag: int = 3) -> None:
    """``n`` chunks of f32[16] through ``double_and_add``, received ``lag`` behind."""
    rng = np.random.default_rng(0)
    chunks = rng.standard_normal((n, 16)).astype(np.float32)
    init = nx.zeros((16,), dtype=nx.float32, backend=backend)
    s = nx.stream(double_and_add, nx.template((16,), nx.float32), init, compiler=compiler)
    outs = []
    for i in range(n):
        s.send(nx.tensor(chunks[i], backend=backend))
        if i >= lag:
            outs.append(s.recv())
    outs += [s.recv() for _ in range(min(lag, n))]
    acc = s.done()
    assert s.trace_count == 1
    want = np.zeros(16, np.float32)
    for c in chunks:  # the same additions, in the same order, in float32
        want += c
    check(acc, want)
    assert acc.backend is nx.get_backend(backend)
    assert len(outs) == n
    for i in (0, 1, n // 2, n - 1):
        check(outs[i], chunks[i] * 2)
    np.testing.assert_array_equal(np.stack([o.to_numpy() for o in outs]), chunks * 2)


def test_ten_thousand_chunks_on_binary_with_the_evaluator() -> None:
    run_stream("binary", "evaluator", 10_000)


@needs_others
@pytest.mark.parametrize("backend", OTHERS)
def test_every_other_backend_with_its_compiler(backend: str) -> None:
    run_stream(backend, backend, 500)
    run_stream(backend, "evaluator", 50)


def test_the_seeds_example_numbers_as_chunks_and_accumulator() -> None:
    """EXLA's docs: ``{acc, tensor + acc}`` over 1..5 from 0 sends 0..4, returns 15."""
    s = nx.stream(lambda t, acc: (acc, t + acc), nx.template((), nx.int64), 0)
    got = []
    for i in range(1, 6):
        s.send(i)
        got.append(s.recv().item())
    assert got == [0, 1, 3, 6, 10]
    check(s.done(), np.array(15, np.int64))


def test_a_tree_of_chunks_and_of_accumulators() -> None:
    def fn(chunk: dict[str, nx.Tensor], acc: tuple[nx.Tensor, nx.Tensor]) -> tuple[object, ...]:
        total, count = acc
        return {"mean": chunk["x"].mean()}, (total + chunk["x"] * chunk["w"], count + 1)

    template = {"x": nx.template((4,), nx.float64), "w": nx.template((4,), nx.float64)}
    init = (nx.zeros((4,), dtype=nx.float64), nx.tensor(0, dtype=nx.int32))
    rng = np.random.default_rng(1)
    xs, ws = rng.random((20, 4)), rng.random((20, 4))
    with nx.stream(fn, template, init) as s:
        for x, w in zip(xs, ws):
            s.send({"x": nx.tensor(x), "w": w})  # a numpy leaf is taken as a tensor
            out = s.recv()
            assert list(out) == ["mean"]
            check(out["mean"], np.array(x.mean()))
    total, count = s.done()  # done() again, after the with block's
    want = np.zeros(4)
    for x, w in zip(xs, ws):
        want += x * w
    check(total, want)
    check(count, np.array(20, np.int32))


def test_chunks_of_another_shape_dtype_or_structure_are_refused_at_send() -> None:
    s = nx.stream(double_and_add, nx.template((16,), nx.float32), nx.zeros((16,)))
    with pytest.raises(nx.ShapeError, match=r"stream\.send: the stream's template is f32\[16\], "
                       r"got .*f32\[8\].*send chunks of shape \(16,\)"):  # fmt: skip
        s.send(nx.zeros((8,)))
    with pytest.raises(nx.DTypeError, match=r"stream\.send: the stream's template is f32\[16\], "
                       r"got .*f64\[16\].*astype\(numerix\.float32\)"):  # fmt: skip
        s.send(nx.zeros((16,), dtype=nx.float64))
    with pytest.raises(nx.ShapeError, match=r"stream\.send: .* another structure"):
        s.send((nx.zeros((16,)), nx.zeros((16,))))
    with pytest.raises(nx.ShapeError, match=r"stream\.send: .* got the Python float 1\.0"):
        s.send(1.0)
    s.send(nx.ones((16,)))  # the refused chunks left nothing behind
    check(s.recv(), np.full(16, 2, np.float32))
    check(s.done(), np.ones(16, np.float32))

    n = nx.stream(lambda t, a: (None, a + t), nx.template((), nx.int8), nx.tensor(0, nx.int8))
    with pytest.raises(nx.DTypeError, match=r"the Python int 300, which int8 does not hold"):
        n.send(300)
    with pytest.raises(nx.DTypeError, match=r"the Python float 0\.5"):
        n.send(0.5)
    n.done()


def test_fn_must_return_a_pair_with_the_accumulators_types() -> None:
    t = nx.template((3,), nx.float32)
    with pytest.raises(nx.TracingError, match=r"stream: fn\(chunk, acc\) must return a pair"):
        nx.stream(lambda c, a: a + c, t, nx.zeros((3,)))
    with pytest.raises(nx.TracingError, match=r"accumulator of f64\[3\] but init_acc is f32\[3\]"):
        nx.stream(lambda c, a: (c, (a + c).astype(nx.float64)), t, nx.zeros((3,)))
    with pytest.raises(nx.ArgumentError, match=r"the template must be numerix\.template"):
        nx.stream(double_and_add, 3, nx.zeros((3,)))
    with pytest.raises(nx.ArgumentError, match=r"maxsize must be an int >= 1, got 0"):
        nx.stream(double_and_add, t, nx.zeros((3,)), maxsize=0)


def gated(gate: threading.Event, started: threading.Event) -> object:
    """``double_and_add`` whose every run waits for ``gate`` (a hook on the worker)."""

    def wait(_: nx.Tensor) -> None:
        started.set()
        assert gate.wait(10), "the test never opened the gate"

    def fn(chunk: nx.Tensor, acc: nx.Tensor) -> tuple[nx.Tensor, nx.Tensor]:
        return nx.hook(chunk, wait) * 2, acc + chunk

    return fn


def test_a_full_queue_blocks_or_raises_when_told_not_to_block() -> None:
    gate, started = threading.Event(), threading.Event()
    s = nx.stream(gated(gate, started), nx.template((2,), nx.float32), nx.zeros((2,)), maxsize=2)
    s.send(nx.ones((2,)))
    assert started.wait(10)  # the worker holds chunk 0 at the gate
    s.send(nx.ones((2,)))
    assert s.pending == 2
    with pytest.raises(StreamFullError, match=r"stream\.send: the queue is full \(2 chunks"):
        s.send(nx.ones((2,)), block=False)
    with pytest.raises(queue.Full):  # StreamFullError is a queue.Full
        s.send(nx.ones((2,)), timeout=0.05)
    with pytest.raises(StreamEmptyError, match=r"no output within 0\.05 s"):
        s.recv(timeout=0.05)
    sent = threading.Event()

    def send_blocked() -> None:  # waits for room, then goes through
        s.send(nx.full((2,), 3.0))
        sent.set()

    t = threading.Thread(target=send_blocked)
    t.start()
    assert not sent.wait(0.1)  # blocked: the queue is full
    gate.set()
    t.join(10)
    assert sent.is_set()
    assert [s.recv().tolist() for _ in range(3)] == [[2.0, 2.0], [2.0, 2.0], [6.0, 6.0]]
    check(s.done(), np.full(2, 5, np.float32))


def test_a_receiver_that_lags_blocks_the_sender() -> None:
    s = nx.stream(double_and_add, nx.template((), nx.float32), nx.zeros(()), maxsize=1)
    s.send(nx.tensor(1.0))
    s.send(nx.tensor(2.0))  # the worker computes chunk 0 and holds its output
    with pytest.raises(StreamFullError):
        s.send(nx.tensor(3.0), timeout=0.2)  # no recv: nothing moves
    assert s.recv().item() == 2.0
    assert s.recv().item() == 4.0
    check(s.done(), np.array(3, np.float32))


class ChunkError(ValueError):
    pass


def test_an_exception_in_fn_is_raised_in_the_caller_chained() -> None:
    def check_chunk(v: nx.Tensor) -> None:
        if v.item() == 3:
            raise ChunkError("chunk 3 is bad")

    def fn(chunk: nx.Tensor, acc: nx.Tensor) -> tuple[nx.Tensor, nx.Tensor]:
        return nx.hook(chunk, check_chunk), acc + chunk

    s = nx.stream(fn, nx.template((), nx.int64), 0, maxsize=8)
    for i in range(4):  # a later send could already meet the worker's error: not sent
        s.send(i)
    assert [s.recv().item() for _ in range(3)] == [0, 1, 2]  # the outputs before it first
    with pytest.raises(ChunkError, match="chunk 3 is bad") as info:
        s.recv()
    assert type(info.value.__cause__) is ChunkError  # the worker's, with its traceback
    assert info.value.__cause__.__traceback__ is not None
    notes = getattr(info.value, "__notes__", ["computing chunk 3"])
    assert any("computing chunk 3" in n for n in notes)
    with pytest.raises(ChunkError):
        s.send(6)
    with pytest.raises(ChunkError):
        s.done()
    with pytest.raises(ChunkError):  # never lost: every later call says it
        s.done()
    assert not s._thread.is_alive()


def test_an_exception_unblocks_a_waiting_sender() -> None:
    gate, started = threading.Event(), threading.Event()
    wait = gated(gate, started)

    def fn(chunk: nx.Tensor, acc: nx.Tensor) -> tuple[nx.Tensor, nx.Tensor]:
        out, acc = wait(chunk, acc)  # type: ignore[operator]
        return nx.hook(out, lambda v: 1 / 0), acc

    s = nx.stream(fn, nx.template((), nx.float32), nx.zeros(()), maxsize=1)
    s.send(nx.tensor(1.0))
    assert started.wait(10)
    threading.Timer(0.1, gate.set).start()
    with pytest.raises(ZeroDivisionError):
        s.send(nx.tensor(2.0))  # waited for room; the worker failed instead
    with pytest.raises(ZeroDivisionError):
        s.done()


def test_send_and_recv_after_done_are_refused() -> None:
    s = nx.stream(double_and_add, nx.template((3,), nx.float32), nx.zeros((3,)))
    s.send(nx.ones((3,)))
    s.send(nx.ones((3,)))
    acc = s.done()  # the outputs not received are dropped
    check(acc, np.full(3, 2, np.float32))
    assert s.done() is acc
    with pytest.raises(StreamClosedError, match=r"stream\.send: the stream is done"):
        s.send(nx.ones((3,)))
    with pytest.raises(StreamClosedError, match=r"stream\.recv: the stream is done"):
        s.recv()
    assert not s._thread.is_alive()
    assert "done, 2 sent, 2 computed" in repr(s)


def test_a_function_with_no_output_needs_no_recv() -> None:
    s = nx.stream(lambda c, a: (None, a + c.sum()), nx.template((5,), nx.int32), 0, maxsize=2)
    for i in range(50):  # far more than the queue holds
        s.send(nx.full((5,), i, dtype=nx.int32))
    with pytest.raises(StreamClosedError, match=r"fn returns no output"):
        s.recv()
    check(s.done(), np.array(5 * sum(range(50)), np.int64))  # sum widens int32, as numpy


def test_a_producer_and_a_consumer_thread() -> None:
    n = 2000
    s = nx.stream(double_and_add, nx.template((), nx.int64), nx.tensor(0), maxsize=3)
    got: list[int] = []

    def consume() -> None:
        for _ in range(n):
            got.append(s.recv(timeout=30).item())

    t = threading.Thread(target=consume)
    t.start()
    for i in range(n):
        s.send(i)
    t.join(60)
    assert got == [2 * i for i in range(n)]
    check(s.done(), np.array(sum(range(n)), np.int64))


def test_the_stream_is_exported_lazily() -> None:
    from numerix.defn import stream

    assert nx.stream is stream
    assert "stream" in nx.__all__
