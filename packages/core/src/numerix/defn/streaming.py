"""``numerix.stream``: chunks sent through a function compiled once, on a worker thread
(``EXLA.stream`` with ``Nx.Stream.send/recv/done``).

The caller sends chunks; a worker thread runs ``out, acc = fn(chunk, acc)`` on each, in
order, and queues ``out`` for :meth:`Stream.recv`; :meth:`Stream.done` returns the final
``acc``. Both queues are bounded: a caller that does not receive slows the worker, and a
worker that falls behind blocks the sender (back-pressure).

The queues are deques with one lock: a send or a receive that need not wait costs a
lock and an append (or a pop), and a side is woken only when it sleeps. Every wait is
taken in short slices, so that a Ctrl-C reaches the main thread and a failed worker is
noticed, whatever the timeout.
"""

from __future__ import annotations

import copy
import functools
import operator
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, NoReturn

from numerix._meeting import meeting_backend
from numerix._tensor import Tensor
from numerix.backend import Backend
from numerix.defn.compilers import Compiler
from numerix.defn.expr import format_type, unflatten
from numerix.defn.jit import _to_tensors
from numerix.defn.jit import compile as compile_fn
from numerix.defn.trace import NUMBER_DTYPES, Template, flatten, leaf_spec
from numerix.dtypes import DType
from numerix.errors import (
    ArgumentError,
    DTypeError,
    NumerixError,
    ShapeError,
    TracingError,
)

__all__ = ["stream", "Stream", "StreamFullError", "StreamEmptyError", "StreamClosedError"]

#: seconds a blocked send, recv or done waits before it looks again (for a Ctrl-C, a
#: failed worker, a closed stream); a wake-up comes at once, this only bounds a miss
_SLICE = 0.05
#: the worker's idle slice: it looks for a stream dropped without done()
_IDLE_SLICE = 0.1


class StreamFullError(NumerixError, queue.Full):
    """``send(block=False)`` (or a send's ``timeout``) found the stream's queue full: the
    worker has ``maxsize`` chunks to compute, or ``maxsize`` outputs wait for ``recv``."""


class StreamEmptyError(NumerixError, queue.Empty):
    """``recv(timeout=...)`` found no output within the timeout."""


class StreamClosedError(NumerixError, RuntimeError):
    """A send or a recv on a stream that ``done()`` closed, or a recv with nothing left to
    come."""


def _describe(leaves: list[tuple[Any, Any]], tree: Any) -> str:
    """``f32[16]``, or the tree of the leaves' types (``(f32[16], s64)``)."""
    names = [format_type(s, d) for s, d in leaves]
    if len(names) == 1 and tree is None:
        return names[0]
    return repr(unflatten(tree, names)).replace("'", "")


class _State:
    """What the stream and its worker share. The worker holds this, never the
    :class:`Stream`: a stream dropped without ``done()`` is collected, and its worker,
    told so, ends."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self.lock = threading.Lock()
        # one condition per sleeper; each is notified only while its flag says it waits
        self.work = threading.Condition(self.lock)  # the worker, for a chunk
        self.room = threading.Condition(self.lock)  # a sender, for room in `inq`
        self.outs = threading.Condition(self.lock)  # a receiver, for an output
        self.out_room = threading.Condition(self.lock)  # the worker, for room in `outq`
        self.worker_waits = False
        self.senders_wait = 0
        self.receivers_wait = 0
        self.worker_waits_room = False
        # chunks sent and not yet computed: the worker reads inq[0], computes it, then
        # pops it, so len(inq) counts the chunk it is computing too
        self.inq: deque[list[Any]] = deque()
        self.outq: deque[list[Any]] = deque()
        self.sent = 0
        self.computed = 0
        self.closing = False  # done() was called (or the stream was dropped)
        self.finished = False  # the worker has ended
        self.acc: list[Any] | None = None
        self.error: BaseException | None = None
        self.error_chunk = -1

    def wake_all(self) -> None:
        with self.lock:
            self.work.notify_all()
            self.room.notify_all()
            self.outs.notify_all()
            self.out_room.notify_all()


def _work(state: _State, run: Callable[[list[Any]], Any], acc: list[Any], n_out: int) -> None:
    """The worker thread: ``run`` on each chunk and the accumulator, in order, until the
    stream closes with nothing left to compute, or ``run`` raises."""
    inq, outq, maxsize = state.inq, state.outq, state.maxsize
    half = max(1, maxsize // 2)
    try:
        while True:
            if not inq:
                with state.lock:
                    state.worker_waits = True
                    try:
                        while not inq and not state.closing:
                            state.work.wait(_IDLE_SLICE)
                    finally:
                        state.worker_waits = False
                    if not inq:  # closing, every chunk computed
                        break
            leaves = inq[0]
            outs = run(leaves + acc)
            acc = outs[n_out:]
            if n_out:
                if len(outq) >= maxsize and not state.closing:
                    with state.lock:
                        state.worker_waits_room = True
                        try:
                            while len(outq) >= maxsize and not state.closing:
                                state.out_room.wait(_SLICE)
                        finally:
                            state.worker_waits_room = False
                if not state.closing:  # after done(), outputs not received are dropped
                    outq.append(outs[:n_out])
            inq.popleft()
            state.computed += 1
            # a sleeper is woken with half a queue to take, or when the worker is about
            # to sleep: a switch between threads costs more than a chunk of small work
            if state.receivers_wait and (len(outq) >= half or not inq):
                with state.lock:
                    state.outs.notify()
            if state.senders_wait and len(inq) <= half:
                with state.lock:
                    state.room.notify()
    except BaseException as e:  # re-raised in the caller; the thread ends quietly
        state.error = e
        state.error_chunk = state.computed
    finally:
        state.acc = acc
        state.finished = True
        state.wake_all()


def _reraise(state: _State, where: str) -> NoReturn:
    """Raise the worker's error in the caller: an exception of the same type and
    arguments, chained to the one the worker caught (its traceback shows where in
    ``fn`` or the program it was raised)."""
    err = state.error
    assert err is not None
    try:
        again = copy.copy(err)
    except Exception:
        again = None
    if type(again) is not type(err):
        again = err
    note = (
        f"{where}: numerix.stream's worker raised this computing chunk "
        f"{state.error_chunk} (counting from 0); the stream is closed"
    )
    add_note = getattr(again, "add_note", None)  # Python 3.11+
    if add_note is not None and again is not err:
        add_note(note)
    if again is err:
        raise err
    raise again.with_traceback(None) from err


class Stream:
    """A stream made by :func:`stream`: :meth:`send` chunks, :meth:`recv` outputs,
    :meth:`done` for the final accumulator. A context manager (``done()`` on exit)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        template: Any,
        init_acc: Any,
        compiler: str | Compiler | None,
        maxsize: int,
        compiler_options: dict[str, Any],
    ) -> None:
        import optree

        if type(maxsize) is not int or maxsize < 1:
            raise ArgumentError(f"stream: maxsize must be an int >= 1, got {maxsize!r}")
        self.fn = fn
        #: how many times ``fn`` was traced: 1, whatever the number of chunks
        self.trace_count = 0

        def step(chunk: Any, acc: Any) -> Any:
            self.trace_count += 1
            return fn(chunk, acc)

        c_leaves, c_tree = flatten(template, "stream")
        a_leaves, a_tree = flatten(init_acc, "stream")
        for x in c_leaves:
            if type(x) is not Tensor and type(x) is not Template:
                raise ArgumentError(
                    f"stream: the template must be numerix.template(shape, dtype)s or "
                    f"tensors (in tuples, lists, dicts), got a {type(x).__name__} ({x!r:.60})"
                )
        for x in a_leaves:
            leaf_spec(x, "stream")  # raises, naming the type
        self._compiled = compiled = compile_fn(
            step, template, init_acc, compiler=compiler, **compiler_options
        )
        graph = compiled.graph
        self.program = compiled.run
        specs = compiled.specs
        nc = len(c_leaves)
        self._specs = specs[:nc]
        self._c_tree = c_tree
        self._c_types = [(s.shape, s.dtype) for s in self._specs]
        self._single = c_tree.num_leaves == 1 and optree.treespec_is_leaf(c_tree)
        target = getattr(compiled.run, "backend", None) or meeting_backend("stream", specs)
        assert target is not None
        self.backend: Backend = target

        out = optree.tree_unflatten(graph.out_tree, list(range(len(graph.outputs))))
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            returned = _describe([(o.shape, o.dtype) for o in graph.outputs], graph.out_tree)
            raise TracingError(
                f"stream: fn(chunk, acc) must return a pair (out, acc), it returns {returned}"
            )
        out_idx, self._out_tree = optree.tree_flatten(out[0])
        acc_idx, got_tree = optree.tree_flatten(out[1])
        a_specs = [(s.shape, s.dtype) for s in specs[nc:]]
        got = [(graph.outputs[i].shape, graph.outputs[i].dtype) for i in acc_idx]
        if got_tree != a_tree or got != a_specs:
            raise TracingError(
                f"stream: fn returns an accumulator of {_describe(got, got_tree)} but init_acc "
                f"is {_describe(a_specs, a_tree)}; fn must return the accumulator's tree, "
                f"shapes and dtypes (cast with astype)"
            )
        self._acc_tree = a_tree
        self._rebuild_out = _rebuilder(self._out_tree)
        n_out = len(out_idx)
        # the outputs come first among the program's: (out, acc) flattened
        assert out_idx == list(range(n_out)), out_idx
        self._n_out = n_out
        acc = _to_tensors(list(a_leaves), specs[nc:], keep=target)
        self._state = state = _State(maxsize)
        self._thread = threading.Thread(
            target=_work,
            args=(state, compiled.run, acc, n_out),
            name=f"numerix.stream({getattr(fn, '__name__', 'fn')})",
            daemon=True,
        )
        self._thread.start()

    # ------------------------------------------------------------ send
    def _leaves(self, chunk: Any) -> list[Any]:
        """``chunk``'s leaves, checked against the template and on the program's backend."""
        if self._single and type(chunk) is Tensor:
            spec = self._specs[0]
            if chunk.shape == spec.shape and chunk.dtype is spec.dtype:
                if chunk.backend is self.backend:
                    return [chunk]
        leaves, tree = flatten(chunk, "stream.send")
        want = self._describe_template()
        if tree != self._c_tree:
            raise ShapeError(
                f"stream.send: the stream's template is {want}, got a chunk of another "
                f"structure ({self._describe_chunk(leaves, tree)}); send chunks of the "
                f"template's structure"
            )
        for i, (x, (shape, dtype)) in enumerate(zip(leaves, self._c_types)):
            where = "" if self._single else f" (leaf {i})"
            if type(x) is Tensor:
                if x.shape != shape:
                    raise ShapeError(
                        f"stream.send: the stream's template is {want}, got {x.describe()}"
                        f"{where}; the function is compiled for one shape: send chunks of "
                        f"shape {shape} (pad the last one), or start a stream per shape"
                    )
                if x.dtype is not dtype:
                    raise DTypeError(
                        f"stream.send: the stream's template is {want}, got {x.describe()}"
                        f"{where}; cast the chunk first: chunk.astype(numerix.{dtype.name})"
                    )
            elif type(x) in NUMBER_DTYPES:
                if shape != ():
                    raise ShapeError(
                        f"stream.send: the stream's template is {want}, got the Python "
                        f"{type(x).__name__} {x!r}{where}; send tensors of shape {shape}"
                    )
                if not _number_fits(x, dtype):
                    raise DTypeError(
                        f"stream.send: the stream's template is {want}, got the Python "
                        f"{type(x).__name__} {x!r}{where}, which {dtype.name} does not "
                        f"hold; send numerix.tensor(value, dtype=numerix.{dtype.name})"
                    )
            else:
                leaf_spec(x, "stream.send")  # raises, naming the type
        meeting_backend(
            "stream.send",
            [x if type(x) is Tensor else self._specs[i] for i, x in enumerate(leaves)],
            self.backend,
            noun="chunk leaf",
        )
        return _to_tensors(leaves, self._specs, keep=self.backend)

    def _describe_template(self) -> str:
        return _describe(self._c_types, None if self._single else self._c_tree)

    def _describe_chunk(self, leaves: list[Any], tree: Any) -> str:
        try:
            return _describe([leaf_spec(x, "stream.send") for x in leaves], tree)
        except NumerixError:
            return f"{len(leaves)} leaves"

    def send(self, chunk: Any, *, block: bool = True, timeout: float | None = None) -> None:
        """Queue ``chunk`` for the worker (``Nx.Stream.send``).

        ``chunk`` must match the template: its tree, each leaf's shape and dtype (a
        Python number stands for a 0-d leaf whose dtype holds it; numpy arrays are
        taken as tensors). With ``maxsize`` chunks waiting to be computed, ``send``
        waits for room (back-pressure), at most ``timeout`` seconds; with
        ``block=False`` it does not wait.

        :raises ShapeError: a chunk of another shape or structure than the template.
        :raises DTypeError: a chunk of another dtype than the template.
        :raises StreamFullError: the queue stayed full (``block=False`` or ``timeout``).
        :raises StreamClosedError: the stream is done.
        :raises Exception: what ``fn`` raised on the worker, for an earlier chunk.
        """
        state = self._state
        if state.closing or state.error is not None:
            self._refuse("send")
        leaves = self._leaves(chunk)
        inq = state.inq
        if len(inq) >= state.maxsize:
            self._wait_room(block, timeout)
        inq.append(leaves)
        state.sent += 1
        if state.worker_waits:
            with state.lock:
                state.work.notify()

    def _refuse(self, op: str) -> NoReturn:
        state = self._state
        if state.error is not None:
            _reraise(state, f"stream.{op}")
        raise StreamClosedError(
            f"stream.{op}: the stream is done (done() returned its accumulator); start a "
            f"new stream with numerix.stream(fn, template, init_acc)"
        )

    def _wait_room(self, block: bool, timeout: float | None) -> None:
        state = self._state
        if not block:
            raise StreamFullError(
                f"stream.send: the queue is full ({state.maxsize} chunks wait to be "
                f"computed, or their outputs to be received); recv() the outputs, or send "
                f"with block=True to wait (numerix.stream(..., maxsize=) sets the bound)"
            )
        deadline = None if timeout is None else time.monotonic() + timeout
        with state.lock:
            state.senders_wait += 1
            try:
                while len(state.inq) >= state.maxsize:
                    if state.closing or state.error is not None or state.finished:
                        break
                    left = _SLICE if deadline is None else deadline - time.monotonic()
                    if left <= 0:
                        raise StreamFullError(
                            f"stream.send: the queue stayed full for {timeout} s "
                            f"({state.maxsize} chunks wait to be computed, or their outputs "
                            f"to be received); recv() the outputs as you send"
                        )
                    state.room.wait(min(left, _SLICE))
            finally:
                state.senders_wait -= 1
        if state.closing or state.error is not None or state.finished:
            self._refuse("send")

    # ------------------------------------------------------------ recv
    def recv(self, *, timeout: float | None = None) -> Any:
        """The output of the oldest chunk not yet received (``Nx.Stream.recv``), waiting
        for it at most ``timeout`` seconds.

        Outputs come in the order the chunks were sent. When ``fn`` raised on the
        worker, the outputs of the chunks before come first, then ``recv`` raises
        what ``fn`` raised.

        :raises StreamEmptyError: no output within ``timeout``.
        :raises StreamClosedError: every chunk sent has been received, and none can
            come (the stream is done, or ``fn`` returns no output: ``(None, acc)``).
        """
        state = self._state
        outq = state.outq
        if not outq:
            self._wait_output(timeout)
        leaves = outq.popleft()
        if state.worker_waits_room:
            with state.lock:
                state.out_room.notify()
        return self._rebuild_out(leaves)

    def _wait_output(self, timeout: float | None) -> None:
        state = self._state
        if self._n_out == 0:
            raise StreamClosedError(
                "stream.recv: fn returns no output (its out is None or empty), so there "
                "is nothing to receive; call done() for the accumulator"
            )
        deadline = None if timeout is None else time.monotonic() + timeout
        with state.lock:
            state.receivers_wait += 1
            try:
                while not state.outq:
                    if state.error is not None:
                        _reraise(state, "stream.recv")
                    if state.finished or (state.closing and not state.inq):
                        raise StreamClosedError(
                            "stream.recv: the stream is done and every output it kept has "
                            "been received (outputs not received by done() are dropped)"
                        )
                    left = _SLICE if deadline is None else deadline - time.monotonic()
                    if left <= 0:
                        raise StreamEmptyError(
                            f"stream.recv: no output within {timeout} s ({len(state.inq)} "
                            f"chunk(s) wait to be computed); send a chunk first, or wait "
                            f"longer"
                        )
                    state.outs.wait(min(left, _SLICE))
            finally:
                state.receivers_wait -= 1

    # ------------------------------------------------------------ done
    def done(self, *, timeout: float | None = None) -> Any:
        """Wait for the chunks sent to be computed, stop the worker and return the final
        accumulator (``Nx.Stream.done``). Outputs not received are dropped. A second
        ``done()`` returns the same accumulator.

        :raises Exception: what ``fn`` raised on the worker (same type, chained).
        :raises StreamEmptyError: the worker did not finish within ``timeout`` seconds
            (the stream stays closing; call ``done()`` again).
        """
        state = self._state
        if not state.closing:
            with state.lock:
                state.closing = True
                state.work.notify_all()
                state.out_room.notify_all()
                state.room.notify_all()
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._thread.is_alive():
            left = _SLICE if deadline is None else deadline - time.monotonic()
            if left <= 0:
                raise StreamEmptyError(
                    f"stream.done: the worker did not finish within {timeout} s "
                    f"({len(state.inq)} chunk(s) left to compute)"
                )
            self._thread.join(min(left, _SLICE))
        state.outq.clear()
        if state.error is not None:
            _reraise(state, "stream.done")
        assert state.acc is not None
        return unflatten(self._acc_tree, state.acc)

    @property
    def pending(self) -> int:
        """Chunks sent and not yet computed."""
        return len(self._state.inq)

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, kind: Any, value: Any, tb: Any) -> None:
        if kind is None:
            self.done()
        else:  # the block's own error wins: stop the worker without waiting on its result
            self._state.closing = True
            self._state.wake_all()

    def __del__(self) -> None:
        state = getattr(self, "_state", None)
        if state is not None:
            state.closing = True  # the worker notices within its idle slice

    def __repr__(self) -> str:
        state = self._state
        status = "failed" if state.error else "done" if state.closing else "open"
        return (
            f"<numerix.stream of {getattr(self.fn, '__qualname__', self.fn)!r}: "
            f"{self._describe_template()}, {status}, {state.sent} sent, "
            f"{state.computed} computed>"
        )


def _rebuilder(tree: Any) -> Callable[[list[Any]], Any]:
    """What turns an output's leaves into its tree (a bare tensor: the leaf itself)."""
    import optree

    if optree.treespec_is_leaf(tree):
        return operator.itemgetter(0)
    return functools.partial(optree.tree_unflatten, tree)


def _number_fits(x: Any, dtype: DType) -> bool:
    """Whether a Python number stands for a 0-d tensor of ``dtype`` without a change of
    kind (bool for bool; int for an integer that holds it, a float or a complex dtype;
    float for a float or complex dtype; complex for a complex dtype)."""
    t = type(x)
    k = dtype.kind
    if t is bool:
        return k == "b"
    if t is int:
        if k in "iu":
            from numerix import dtypes

            lo, hi = dtypes.int_range(dtype)
            return bool(lo <= x <= hi)
        return k in "fc"
    if t is float:
        return k in "fc"
    return k == "c"


def stream(
    fn: Callable[..., Any],
    template: Any,
    init_acc: Any,
    *,
    compiler: str | Compiler | None = None,
    maxsize: int = 32,
    **compiler_options: Any,
) -> Stream:
    """Stream chunks through ``fn`` compiled once (``EXLA.stream``, ``Nx.Stream``).

    ``fn(chunk, acc)`` returns ``(out, acc)``. It is traced and compiled once, for a
    chunk shaped as ``template`` and an accumulator shaped as ``init_acc``; a worker
    thread then runs it on each chunk sent, in order, carrying the accumulator, while
    the caller goes on (preparing the next chunk overlaps with the device's work).

    :param template: the chunk: a :func:`numerix.template` or a tensor (its shape and
        dtype), or a tuple, list or dict of them.
    :param init_acc: the initial accumulator: a tree of tensors and Python numbers;
        ``fn`` must return an accumulator of the same tree, shapes and dtypes.
    :param compiler: a compiler name or instance, as for :func:`numerix.jit`; any
        compiler serving the backend.
    :param maxsize: the bound of each queue: chunks waiting to be computed, and
        outputs waiting for :meth:`Stream.recv`. A full queue blocks ``send``.
    :param compiler_options: options for the compiler.

    Outputs are received with :meth:`Stream.recv`, in order; those not received when
    :meth:`Stream.done` is called are dropped. A function returning ``(None, acc)``
    queues no output: send, then ``done()``.

    >>> import numerix as nx
    >>> def running(chunk, acc):
    ...     acc = acc + chunk.sum()
    ...     return acc, acc
    >>> with nx.stream(running, nx.template((3,), nx.int64), 0) as s:
    ...     for i in range(3):
    ...         s.send(nx.arange(3) + i)
    ...         print(s.recv().item())
    3
    9
    18
    >>> s.done().item()
    18

    A chunk of another shape is refused at ``send``:

    >>> s = nx.stream(running, nx.template((3,), nx.int64), 0)
    >>> s.send(nx.arange(4))
    Traceback (most recent call last):
    ...
    numerix.errors.ShapeError: stream.send: the stream's template is s64[3], got ...
    """
    return Stream(fn, template, init_acc, compiler, maxsize, compiler_options)
