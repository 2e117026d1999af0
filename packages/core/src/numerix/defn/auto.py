"""``jit(fn, compiler="auto")``: time the compilers that can serve a call, keep the fastest.

On the first call of a new signature, :class:`~numerix.defn.jit.Jitted` traces the
function once and hands the graph here: every installed compiler serving the arguments'
backend compiles it (a compiler that refuses the graph drops out, with its reason),
runs it once (its first call: what it compiles lazily), then the candidates take turns,
one call each on the call's own arguments, every returned tensor finished inside its
clock: at least five rounds, then until one candidate's median is clearly the best (a
fifth faster than every other's) or the rounds have taken half as long as the
compilations and first calls did; and never past the ``[defn] auto_budget`` seconds (one round at
least). The fastest
median wins; the jitted function keeps that compiler's program for the signature, so a
cached call runs exactly as if the winner had been named.

:class:`Choice` says why (``f.explain(*args)``): each candidate's compile time, first
call, median and calls. With ``[compile] cache_dir`` set, the choice is kept in
``<cache_dir>/numerix-auto/``, keyed by the graph's fingerprint, the arguments' types and
backends, the candidates and numerix's version: another process compiles only the
winner. A function with hooks is not timed (its hooks would run once per timed call):
the backend's own compiler is taken, else the evaluator.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from numerix import plugins
from numerix._version import __version__
from numerix.backend import Backend
from numerix.compiler import ArgSpec, Executable
from numerix.configuration import effective_settings
from numerix.defn.compilers import AUTO, compilers_serving, untimed
from numerix.defn.expr import HOOK, Graph
from numerix.defn.graph import fingerprint
from numerix.errors import ArgumentError, first_line
from numerix.ops.transfer import finish

__all__ = ["AUTO", "Choice", "budget", "choose", "given", "untimed"]

#: rounds of one call per candidate before the search may stop on a clear winner
_MIN_ROUNDS = 5
#: the most rounds, whatever the budget
_MAX_ROUNDS = 200
#: a winner is clear when every other median is this much slower
_CLEAR = 1.2


@dataclass
class Choice:
    """Which compiler a jitted function's signature runs with, and why
    (``f.explain(*args)``).

    :ivar compiler: the compiler's name.
    :ivar reason: one sentence: how it was chosen.
    :ivar rows: one dict per candidate timed: ``compiler``, ``compile_s``,
        ``first_call_s``, ``calls``, ``median_s``, ``min_s``, and ``status``
        (``"chosen"``, ``"timed"``, or why it dropped out).
    :ivar search_s: seconds the search took (compilations, first calls, rounds).
    :ivar saved: the file the choice was read from or written to (``[compile]
        cache_dir``), or None.
    """

    compiler: str
    reason: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    search_s: float = 0.0
    saved: str | None = None

    def table(self) -> str:
        """The candidates as a table, fastest first, then the choice and its reason."""
        lines = []
        if self.rows:
            timed = sorted(self.rows, key=lambda r: r.get("median_s") or float("inf"))
            best = timed[0].get("median_s")
            width = max(len("compiler"), *(len(r["compiler"]) for r in timed))
            lines.append(
                f"{'compiler':<{width}}  {'compile':>9}  {'first call':>10}  {'median':>9}  "
                f"{'calls':>5}  status"
            )
            for r in timed:
                med = r.get("median_s")
                vs = ""
                if med is not None and best and r["status"] != "chosen":
                    vs = f" ({med / best:.2f}× slower)"
                lines.append(
                    f"{r['compiler']:<{width}}  {_duration(r.get('compile_s')):>9}  "
                    f"{_duration(r.get('first_call_s')):>10}  {_duration(med):>9}  "
                    f"{r.get('calls', 0):>5}  {r['status']}{vs}"
                )
        lines.append(f"chosen: {self.compiler} ({self.reason})")
        if self.search_s:
            lines.append(f"search: {_duration(self.search_s)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _duration(s: float | None) -> str:
    # imported here: statistics and timeit (numerix.benchmarking's) cost a jitted
    # function's first call a millisecond, and only a table needs them
    from numerix.benchmarking import format_duration

    return "—" if s is None else format_duration(s)


def given(name: str, how: str) -> Choice:
    """The choice of a function whose compiler was named (no search)."""
    return Choice(name, how)


def budget() -> float:
    """``[defn] auto_budget`` here: the most seconds a search times its candidates."""
    s = effective_settings()
    return 0.2 if s is None else float(s.defn.auto_budget)


def _has_hooks(graph: Graph) -> bool:
    return any(n.op == HOOK for n in graph.walk())


def _key(graph: Graph, specs: Sequence[ArgSpec], names: Sequence[str]) -> str:
    """What a saved choice is filed under: the graph, the arguments, the candidates."""
    h = hashlib.sha256()
    h.update(f"numerix {__version__}\n".encode())
    h.update(",".join(names).encode())
    for s in specs:
        h.update(f"\n{s.shape} {s.dtype} {s.backend}".encode())
    h.update(b"\n")
    h.update((fingerprint(graph) or graph.listing()).encode())
    return h.hexdigest()


def _folder() -> str | None:
    s = effective_settings()
    cache_dir = None if s is None else s.compile.cache_dir
    if cache_dir is None:
        return None
    return os.path.join(os.path.abspath(os.path.expanduser(cache_dir)), "numerix-auto")


def _read(path: str, names: Sequence[str]) -> Choice | None:
    """The choice kept at ``path``, if it is there, readable and still a candidate."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        name = data["compiler"]
        rows = list(data.get("rows", []))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent, or not a file numerix wrote: search again
    if name not in names:
        return None
    return Choice(name, "chosen by an earlier search, kept in the compile cache", rows, 0.0, path)


def _write(path: str, choice: Choice) -> None:
    """Keep ``choice`` at ``path`` (written whole, then renamed: a reader never sees half)."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"compiler": choice.compiler, "reason": choice.reason,
                       "rows": choice.rows, "numerix": __version__}, f)  # fmt: skip
        os.replace(tmp, path)
        choice.saved = path
    except OSError:
        pass  # a cache that cannot be written is a cache that is not kept


def _not_outrun(names: Sequence[str]) -> tuple[list[str], list[dict[str, Any]]]:
    """``names`` without the compilers another of them outruns (``CompilerEntry(
    outruns=...)``), and a row for each of those, saying which one does."""
    entries = plugins.compiler_entries()
    by: dict[str, str] = {}
    for n in names:
        for o in getattr(entries.get(n), "outruns", ()):
            if o in names and o not in by and n not in by:
                by[o] = n
    rows = [
        {"compiler": o, "status": f"not timed: {n} outruns it (as {n}'s plugin declares)"}
        for o, n in sorted(by.items())
    ]
    return [n for n in names if n not in by], rows


@dataclass
class _Candidate:
    name: str
    run: Executable | None = None
    row: dict[str, Any] = field(default_factory=dict)
    samples: list[float] = field(default_factory=list)


def choose(
    graph: Graph,
    specs: Sequence[ArgSpec],
    leaves: Sequence[Any],
    backend: Backend,
    compile_with: Callable[[str], Executable],
) -> tuple[Executable, Choice]:
    """The program of the fastest compiler serving ``backend`` for ``graph``, timed on
    ``leaves`` (the call's arguments, as tensors), and why.

    :param compile_with: compiles ``graph`` with the compiler of that name (the jitted
        function's own way, so that its options, donation excepted, apply).
    """
    serving = compilers_serving(backend)
    if not serving:  # pragma: no cover - the evaluator serves every backend
        raise ArgumentError(f"jit: no installed compiler serves {backend}")
    names, outrun = _not_outrun(serving)
    start = time.perf_counter()
    folder = _folder()
    path = None if folder is None else os.path.join(folder, _key(graph, specs, names) + ".json")
    if path is not None:
        kept = _read(path, names)
        if kept is not None:
            return compile_with(kept.compiler), kept
    if len(names) == 1:
        if outrun:
            why = ", ".join(r["compiler"] for r in outrun)
            rows = [{"compiler": names[0], "status": "chosen"}, *outrun]
            choice = Choice(
                names[0], f"nothing else to time on {backend}: it outruns {why}, as its "
                "plugin declares",
                rows,
            )  # fmt: skip
        else:
            choice = Choice(names[0], f"the only installed compiler serving {backend}")
        return compile_with(names[0]), choice
    if _has_hooks(graph):
        choice = Choice(
            untimed(backend),
            "the function has hooks, which would run once per timed call: not timed; the "
            "backend's own compiler, else the evaluator",
        )
        return compile_with(choice.compiler), choice

    import statistics  # a search alone needs it (see _duration)

    candidates = [_Candidate(n) for n in names]
    failures: list[BaseException] = []
    for c in candidates:
        t0 = time.perf_counter()
        try:
            c.run = compile_with(c.name)
            c.row["compile_s"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            finish(c.run(list(leaves)))
            c.row["first_call_s"] = time.perf_counter() - t0
        except Exception as e:  # a compiler that cannot take this graph drops out
            c.run = None
            c.row["status"] = f"dropped: {first_line(e)}"
            failures.append(e)
    alive = [c for c in candidates if c.run is not None]
    if not alive:
        raise failures[0]
    clock = time.perf_counter
    # past five rounds, the rounds take no longer than half what the compilations and
    # first calls took (a search costs about one and a half times what trying each
    # candidate once costs), and never longer than the budget
    now = clock()
    hard = now + budget()
    deadline = min(hard, now + 0.5 * (now - start))
    rounds = 0
    while len(alive) > 1:
        for c in alive:
            args = list(leaves)
            t0 = clock()
            finish(c.run(args))  # type: ignore[misc]
            c.samples.append(clock() - t0)
        rounds += 1
        if rounds >= _MAX_ROUNDS or clock() >= hard:
            break
        if rounds >= _MIN_ROUNDS:
            if clock() >= deadline:
                break
            medians = sorted(statistics.median(c.samples) for c in alive)
            if medians[0] * _CLEAR < medians[1]:
                break
    for c in alive:
        c.row["calls"] = len(c.samples)
        if c.samples:
            c.row["median_s"] = statistics.median(c.samples)
            c.row["min_s"] = min(c.samples)
        c.row["status"] = "timed"
    best = min(alive, key=lambda c: c.row.get("median_s", 0.0))
    best.row["status"] = "chosen"
    rows = [{"compiler": c.name, **c.row} for c in candidates] + outrun
    if len(alive) == 1:
        reason = "the only compiler that took the function"
    else:
        reason = f"the fastest median over {rounds} round(s) of one call each"
    choice = Choice(best.name, reason, rows, time.perf_counter() - start)
    if path is not None:
        _write(path, choice)
    assert best.run is not None
    return best.run, choice
