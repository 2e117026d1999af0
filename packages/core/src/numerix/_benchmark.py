"""``numerix.benchmark``: benchmark and decide, in one call (Benchee's report, in Python).

Every job runs on every input; its first call is timed apart (the compilation of a
jitted function, the first kernels of a backend), then it warms up, then the jobs take
turns in short slices until each has run for ``time`` seconds, each call timed on its
own clock and every tensor it returns finished (``Backend.synchronize``) before the
clock stops, so an asynchronous backend is timed for its work, not its dispatch. The
result reports, per job and input, the calls per second, mean, standard deviation,
median, 99th percentile, minimum and maximum, the host memory one call allocates
(``tracemalloc``: Python's and numpy's allocations) and its device memory where the
backend can tell (:meth:`Backend.device_memory`), as a table (fastest first, "N×
slower"), JSON, a self-contained HTML page, or its charts alone (SVG).
"""

from __future__ import annotations

import gc
import html
import json
import math
import platform
import re
import statistics
import sys
import time as _time
import tracemalloc
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from numerix._tensor import Tensor
from numerix._version import __version__
from numerix.benchmarking import format_duration as _duration
from numerix.defn.jit import jit
from numerix.errors import ArgumentError
from numerix.ops.transfer import device_put
from numerix.ops.transfer import finish as _finish

__all__ = ["benchmark", "BenchmarkResult", "BenchmarkPlot"]

#: the length of one job's turn, in seconds, while the jobs take turns
_SLICE = 0.01


def _backends(value: Any, out: dict[int, Any]) -> dict[int, Any]:
    """The backends of the tensors in ``value`` (tuples, lists, dicts), by identity."""
    if type(value) is Tensor:
        out.setdefault(id(value.backend), value.backend)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _backends(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _backends(v, out)
    return out


def _job(name: str, job: Any) -> tuple[Callable[..., Any], str | None, str | None]:
    """The callable a job names, with its backend and compiler (None: as given)."""
    if callable(job):
        return job, None, None
    if isinstance(job, tuple) and len(job) == 3 and callable(job[0]):
        fn, backend, compiler = job
        if compiler is not None:
            fn = jit(fn, compiler=compiler)
        return fn, backend, compiler
    raise ArgumentError(
        f"benchmark: job {name!r} must be a callable or a (function, backend, compiler) "
        f"tuple, got {type(job).__name__}"
    )


def _placed(value: Any, backend: str | None) -> Any:
    """``value`` with its tensors (and numpy arrays) moved to ``backend``."""
    if backend is None:
        return value
    if type(value) is Tensor:
        return device_put(value, backend)
    if isinstance(value, tuple):
        return tuple(_placed(v, backend) for v in value)
    if isinstance(value, list):
        return [_placed(v, backend) for v in value]
    if isinstance(value, dict):
        return {k: _placed(v, backend) for k, v in value.items()}
    return value


def _bound(fn: Callable[..., Any], arg: Any) -> Callable[[], Any]:
    """``fn`` called on ``arg``."""
    return lambda: fn(arg)


class _Scenario:
    """One job on one input, while it is measured."""

    def __init__(self, job: str, input_name: str | None, call: Callable[[], Any]) -> None:
        self.job = job
        self.input = input_name
        self.call = call
        self.samples: list[float] = []
        self.repeat_medians: list[float] = []
        self.spent = 0.0
        self.first_call_s = 0.0
        self.memory_bytes: int | None = None
        self.device_memory_bytes: int | None = None
        #: the backends of the tensors the first call returned (where the work ran)
        self.backends: list[Any] = []

    def once(self) -> float:
        t0 = _time.perf_counter()
        _finish(self.call())
        return _time.perf_counter() - t0

    def first(self) -> None:
        t0 = _time.perf_counter()
        value = self.call()
        _finish(value)
        self.first_call_s = _time.perf_counter() - t0
        self.backends = list(_backends(value, {}).values())

    def device_peak(self) -> int | None:
        """The device memory one call allocates above what is in use before it, summed
        over the backends its tensors live on; None where none of them can tell (or a
        peak from before, that cannot be reset, hides this call's)."""
        before = []
        for b in self.backends:
            b.reset_device_memory_peak()
            before.append(b.device_memory())
        if all(m is None for m in before):
            return None
        value = self.call()
        _finish(value)
        total: int | None = None
        for b, m0 in zip(self.backends, before):
            m1 = b.device_memory()
            if m0 is None or m1 is None:
                continue
            (in_use0, peak0), (_, peak1) = m0, m1
            if peak1 <= peak0 and peak0 > in_use0:
                continue  # an older, higher peak: this call's is not known
            total = (total or 0) + max(peak1 - in_use0, 0)
        del value
        return total


class _Progress:
    """A transient progress bar on stderr (rich), or nothing."""

    def __init__(self, on: bool, total: float) -> None:
        self.bar: Any = None
        if not on:
            return
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self.task = self.bar.add_task("numerix.benchmark", total=total)
        self.bar.start()

    def show(self, description: str, advance: float = 0.0) -> None:
        if self.bar is not None:
            self.bar.update(self.task, description=description, advance=advance)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def benchmark(
    jobs: Mapping[str, Any],
    inputs: Mapping[str, Any] | None = None,
    *,
    time: float = 2.0,
    warmup: float = 0.5,
    memory: bool = True,
    repeat: int = 1,
    progress: bool | None = None,
) -> BenchmarkResult:
    """Time ``jobs`` (name → callable, or name → ``(function, backend, compiler)``) on
    each of ``inputs`` (name → the value passed as the job's one argument; None: jobs
    called with none), and return the comparison (Benchee's, for numerix).

    :param time: seconds each job runs on each input, measured (turns of 10 ms, the jobs
        interleaved so that a passing load falls on all alike).
    :param warmup: seconds each runs before, not measured (after its first call, which
        is timed apart as ``first_call_s``: a jitted function's compilation).
    :param memory: measure the memory one call allocates: on the host (``tracemalloc``)
        and on the device of the backends its tensors live on, where the backend can
        tell (:meth:`~numerix.backend.Backend.device_memory`; None otherwise).
    :param repeat: how many times the warm-up and the measurement run, one after the
        other; the figures are those of every call, and each repeat's median is kept
        (``repeat_medians_s``) to show the spread between them.
    :param progress: a transient progress bar on stderr while it runs; None (the
        default): when stderr is a terminal.

    A job given as ``(function, backend, compiler)`` runs ``numerix.jit(function,
    compiler=compiler)`` (the function as it is when ``compiler`` is None) on the inputs
    moved to ``backend`` (as they are when it is None).

    >>> import numpy as np
    >>> import numerix as nx
    >>> a = nx.tensor(np.ones((64, 64), np.float32))
    >>> r = nx.benchmark(
    ...     {"sum": lambda x: x.sum(), "matmul": lambda x: x @ x},
    ...     {"64x64": a},
    ...     time=0.05,
    ...     warmup=0.01,
    ... )
    >>> sorted(s["job"] for s in r.scenarios)
    ['matmul', 'sum']
    >>> r.table().splitlines()[4].split()  # doctest: +NORMALIZE_WHITESPACE
    ['Name', 'ips', 'average', 'deviation', 'median', '99th', '%', 'first', 'call', 'memory',
     'device', 'mem']
    >>> r.scenarios[0]["device_memory_bytes"] is None  # numpy's memory is the host's
    True
    """
    if not isinstance(jobs, Mapping) or not jobs:
        raise ArgumentError(
            f"benchmark: jobs must be a non-empty dict of name -> callable, got {jobs!r:.60}"
        )
    if inputs is not None and (not isinstance(inputs, Mapping) or not inputs):
        raise ArgumentError(
            f"benchmark: inputs must be None or a non-empty dict of name -> value, got "
            f"{inputs!r:.60}"
        )
    for what, v in (("time", time), ("warmup", warmup)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
            raise ArgumentError(f"benchmark: {what} must be seconds >= 0, got {v!r}")
    if time <= 0:
        raise ArgumentError(f"benchmark: time must be more than 0 seconds, got {time!r}")
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ArgumentError(
            f"benchmark: repeat must be an int >= 1 (how many times to measure), got {repeat!r}"
        )
    if progress is not None and not isinstance(progress, bool):
        raise ArgumentError(
            f"benchmark: progress must be True, False or None (when stderr is a terminal), "
            f"got {progress!r}"
        )
    scenarios: list[_Scenario] = []
    meta: dict[str, tuple[str | None, str | None]] = {}
    for name, job in jobs.items():
        fn, backend, compiler = _job(str(name), job)
        meta[str(name)] = (backend, compiler)
        if inputs is None:
            scenarios.append(_Scenario(str(name), None, fn))
        else:
            for input_name, value in inputs.items():
                arg = _placed(value, backend)
                scenarios.append(_Scenario(str(name), str(input_name), _bound(fn, arg)))
    if progress is None:
        progress = sys.stderr.isatty()
    bar = _Progress(progress, repeat * len(scenarios) * (warmup + time))
    try:
        for s in scenarios:  # first calls, one scenario after the other
            bar.show(f"first call: {s.job}")
            s.first()
        for r in range(repeat):
            _measure(scenarios, time, warmup, bar, f" ({r + 1}/{repeat})" if repeat > 1 else "")
        if memory:
            bar.show("memory")
            for s in scenarios:
                s.memory_bytes = _host_peak(s.call)
                s.device_memory_bytes = s.device_peak()
    finally:
        bar.stop()
    return BenchmarkResult([_stats(s, meta[s.job]) for s in scenarios], time, warmup, repeat=repeat)


def _measure(
    scenarios: list[_Scenario], time: float, warmup: float, bar: _Progress, tag: str
) -> None:
    """One repeat: each scenario warms up, then they take turns until each has run for
    ``time`` seconds; each keeps this repeat's median."""
    for s in scenarios:
        bar.show(f"warm-up{tag}: {s.job}")
        end = _time.perf_counter() + warmup
        while _time.perf_counter() < end:
            s.once()
        bar.show(f"warm-up{tag}: {s.job}", warmup)
    clock = _time.perf_counter
    start = [len(s.samples) for s in scenarios]
    for s in scenarios:
        s.spent = 0.0
    was_on = gc.isenabled()
    gc.disable()
    try:
        while any(s.spent < time for s in scenarios):
            for s in scenarios:
                if s.spent >= time:
                    continue
                turn_end = clock() + _SLICE
                samples, call = s.samples, s.call
                spent0 = s.spent
                while True:
                    t0 = clock()
                    _finish(call())
                    t1 = clock()
                    samples.append(t1 - t0)
                    s.spent += t1 - t0
                    if t1 >= turn_end or s.spent >= time:
                        break
                bar.show(f"measuring{tag}: {s.job}", min(s.spent, time) - min(spent0, time))
            gc.collect()  # between rounds, not inside a call's clock
    finally:
        if was_on:
            gc.enable()
    for s, n in zip(scenarios, start):
        s.repeat_medians.append(statistics.median(s.samples[n:]))


def _host_peak(call: Callable[[], Any]) -> int:
    """The host memory one call of ``call`` allocates at its peak (``tracemalloc``)."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        _finish(call())
        return max(tracemalloc.get_traced_memory()[1] - base, 0)
    finally:
        if started:
            tracemalloc.stop()


def _stats(s: _Scenario, meta: tuple[str | None, str | None]) -> dict[str, Any]:
    xs = sorted(s.samples)
    mean = statistics.fmean(xs)
    return {
        "job": s.job,
        "input": s.input,
        "backend": meta[0],
        "compiler": meta[1],
        "calls": len(xs),
        "ips": 1.0 / mean if mean > 0 else math.inf,
        "mean_s": mean,
        "std_s": statistics.stdev(xs) if len(xs) > 1 else 0.0,
        "median_s": statistics.median(xs),
        "p99_s": xs[min(len(xs) - 1, math.ceil(0.99 * len(xs)) - 1)],
        "min_s": xs[0],
        "max_s": xs[-1],
        "first_call_s": s.first_call_s,
        "memory_bytes": s.memory_bytes,
        "device_memory_bytes": s.device_memory_bytes,
        "repeat_medians_s": list(s.repeat_medians),
    }


# ---------------------------------------------------------------------------- the result
def _count(x: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g} {unit}"
    return f"{x:.3g}"


def _bytes(n: int | None) -> str:
    if n is None:
        return "—"
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


class BenchmarkResult:
    """What :func:`numerix.benchmark` measured: :attr:`scenarios` (one dict per job and
    input), and the ways to show them: :meth:`table`, :meth:`to_json`,
    :meth:`to_html`, :meth:`plot`, and the HTML page in Jupyter."""

    def __init__(
        self, scenarios: list[dict[str, Any]], time: float, warmup: float, *, repeat: int = 1
    ) -> None:
        #: one dict per job and input: calls, ips, mean_s, std_s, median_s, p99_s,
        #: min_s, max_s, first_call_s, memory_bytes, device_memory_bytes,
        #: repeat_medians_s, and the job's backend and compiler
        self.scenarios = scenarios
        self.time = time
        self.warmup = warmup
        self.repeat = repeat
        #: the machine and versions the figures were taken on
        self.machine = {
            "python": sys.version.split()[0],
            "numerix": __version__,
            "platform": platform.platform(),
            "processor": platform.machine(),
        }

    def groups(self) -> list[tuple[str | None, list[dict[str, Any]]]]:
        """The scenarios by input, each group fastest first (by median)."""
        order: dict[str | None, list[dict[str, Any]]] = {}
        for s in self.scenarios:
            order.setdefault(s["input"], []).append(s)
        return [(k, sorted(v, key=lambda s: s["median_s"])) for k, v in order.items()]

    def table(self) -> str:
        """The Benchee-style report: per input, each job's figures, fastest first, then
        the comparison ("N× slower")."""
        times = f", {self.repeat} times" if self.repeat > 1 else ""
        lines = [
            f"numerix.benchmark: {self.time:g} s per job, {self.warmup:g} s warm-up{times} "
            f"(Python {self.machine['python']}, numerix {self.machine['numerix']})"
        ]
        for input_name, rows in self.groups():
            if input_name is not None:
                lines += ["", f"##### With input {input_name} #####"]
            width = max(len("Name"), *(len(r["job"]) for r in rows))
            lines += [
                "",
                f"{'Name':<{width}}  {'ips':>9}  {'average':>10}  {'deviation':>9}  "
                f"{'median':>10}  {'99th %':>10}  {'first call':>10}  {'memory':>8}  "
                f"{'device mem':>10}",
            ]
            for r in rows:
                dev = 100 * r["std_s"] / r["mean_s"] if r["mean_s"] else 0.0
                lines.append(
                    f"{r['job']:<{width}}  {_count(r['ips']):>9}  {_duration(r['mean_s']):>10}  "
                    f"{'±' + format(dev, '.1f') + '%':>9}  {_duration(r['median_s']):>10}  "
                    f"{_duration(r['p99_s']):>10}  {_duration(r['first_call_s']):>10}  "
                    f"{_bytes(r['memory_bytes']):>8}  {_bytes(r.get('device_memory_bytes')):>10}"
                )
            if self.repeat > 1:
                lines += ["", "Median of each repeat:"]
                lines += [
                    f"{r['job']:<{width}}  "
                    + "  ".join(_duration(m) for m in r.get("repeat_medians_s", []))
                    for r in rows
                ]
            if len(rows) > 1:
                best = rows[0]
                lines += ["", "Comparison:", f"{best['job']:<{width}}  {_count(best['ips']):>9}"]
                for r in rows[1:]:
                    ratio = r["median_s"] / best["median_s"] if best["median_s"] else math.inf
                    lines.append(
                        f"{r['job']:<{width}}  {_count(r['ips']):>9} - {ratio:.2f}× slower "
                        f"+{_duration(r['median_s'] - best['median_s'])}"
                    )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        jobs = sorted({s["job"] for s in self.scenarios})
        return f"<numerix.benchmark of {', '.join(jobs)}: {len(self.scenarios)} scenario(s)>"

    def to_json(self) -> str:
        """The figures, the settings and the machine as JSON."""
        return json.dumps(
            {"time": self.time, "warmup": self.warmup, "repeat": self.repeat,
             "machine": self.machine, "scenarios": self.scenarios},
            indent=2,
        )  # fmt: skip

    def to_html(self, path: str | Path | None = None) -> str:
        """The report as one self-contained HTML page (its charts SVG, nothing fetched
        when it is viewed): a bar chart of the calls per second and a box plot of the
        call times per input, the table, the machine; written to ``path`` when given."""
        parts = [
            "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
            "<title>numerix.benchmark</title><style>",
            "body{font-family:system-ui,sans-serif;margin:2em;color:#222}",
            "table{border-collapse:collapse;margin:1em 0}td,th{padding:4px 10px;"
            "border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child"
            "{text-align:left}svg{display:block;margin:1em 0}pre{background:#f6f6f6;"
            "padding:1em}",
            "</style></head><body><h1>numerix.benchmark</h1>",
        ]
        for input_name, rows in self.groups():
            title = "all jobs" if input_name is None else f"input {input_name}"
            parts.append(f"<h2>{html.escape(title)}</h2>")
            parts.append(_bars(rows))
            parts.append(_boxes(rows))
            parts.append(_html_table(rows))
        parts.append("<h2>Report</h2><pre>" + html.escape(self.table()) + "</pre>")
        parts.append("<h2>Machine</h2><ul>")
        parts += [
            f"<li>{html.escape(k)}: {html.escape(str(v))}</li>" for k, v in self.machine.items()
        ]
        parts.append("</ul></body></html>")
        page = "\n".join(parts)
        if path is not None:
            Path(path).write_text(page, encoding="utf-8")
        return page

    def _repr_html_(self) -> str:
        return self.to_html()

    def plot(self, path: str | Path | None = None) -> BenchmarkPlot:
        """The charts :meth:`to_html` draws (per input, the calls per second and the call
        times), as one SVG image, which Jupyter displays; written to ``path`` (an
        ``.svg`` file) when given."""
        y, parts = 0, []
        for input_name, rows in self.groups():
            title = "all jobs" if input_name is None else f"input {input_name}"
            parts.append(
                f"<text x='0' y='{y + 16}' font-size='15' font-weight='bold'>"
                f"{html.escape(title)}</text>"
            )
            y += 24
            for chart in (_bars(rows), _boxes(rows)):
                parts.append(f"<g transform='translate(0,{y})'>{chart}</g>")
                y += _height(chart) + 8
        svg = (
            f"<svg xmlns='http://www.w3.org/2000/svg' width='{_W}' height='{y}' "
            f"font-family='system-ui,sans-serif'>" + "".join(parts) + "</svg>"
        )
        image = BenchmarkPlot(svg)
        if path is not None:
            image.save(path)
        return image


class BenchmarkPlot:
    """The charts of a :class:`BenchmarkResult` as one SVG image (:attr:`svg`), which
    Jupyter displays (``_repr_svg_``); :meth:`save` writes it to a file."""

    def __init__(self, svg: str) -> None:
        #: the SVG document
        self.svg = svg

    def save(self, path: str | Path) -> None:
        """Write the SVG to ``path``."""
        Path(path).write_text(self.svg, encoding="utf-8")

    def _repr_svg_(self) -> str:
        return self.svg

    def __str__(self) -> str:
        return self.svg

    def __repr__(self) -> str:
        return f"<numerix.benchmark charts: SVG, {len(self.svg)} characters>"


def _height(svg: str) -> int:
    """The height an SVG chart of this module declares."""
    m = re.search(r"height='(\d+)'", svg)
    return int(m.group(1)) if m else 0


_W, _ROW, _LEFT = 640, 28, 160
_COLORS = ("#4477aa", "#66ccee", "#228833", "#ccbb44", "#ee6677", "#aa3377", "#bbbbbb")


def _bars(rows: list[dict[str, Any]]) -> str:
    """A horizontal bar per job: its calls per second."""
    top = max(r["ips"] for r in rows if math.isfinite(r["ips"])) or 1.0
    h = _ROW * len(rows) + 30
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{_W}' height='{h}' "
           f"role='img' aria-label='calls per second'>"]  # fmt: skip
    for i, r in enumerate(rows):
        y = 20 + i * _ROW
        w = (_W - _LEFT - 90) * (min(r["ips"], top) / top)
        out.append(
            f"<text x='{_LEFT - 6}' y='{y + 15}' text-anchor='end' font-size='12'>"
            f"{html.escape(r['job'])}</text><rect x='{_LEFT}' y='{y}' width='{max(w, 1):.1f}' "
            f"height='{_ROW - 8}' fill='{_COLORS[i % len(_COLORS)]}'/>"
            f"<text x='{_LEFT + w + 6:.1f}' y='{y + 15}' font-size='12'>{_count(r['ips'])} ips"
            f"</text>"
        )
    out.append("<text x='0' y='12' font-size='12'>calls per second (more is better)</text>")
    out.append("</svg>")
    return "".join(out)


def _boxes(rows: list[dict[str, Any]]) -> str:
    """A box per job: its call times' minimum, median, 99th percentile and maximum (a
    log scale when they span more than a decade)."""
    lo = min(r["min_s"] for r in rows)
    hi = max(r["max_s"] for r in rows)
    log = hi > 10 * lo > 0

    def x(v: float) -> float:
        if hi <= lo:
            return _LEFT
        if log:
            return _LEFT + (_W - _LEFT - 20) * (math.log(v / lo) / math.log(hi / lo))
        return _LEFT + (_W - _LEFT - 20) * ((v - lo) / (hi - lo))

    h = _ROW * len(rows) + 40
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{_W}' height='{h}' "
           f"role='img' aria-label='call times'>"]  # fmt: skip
    for i, r in enumerate(rows):
        y = 20 + i * _ROW
        mid = y + (_ROW - 8) / 2
        color = _COLORS[i % len(_COLORS)]
        out.append(
            f"<text x='{_LEFT - 6}' y='{y + 15}' text-anchor='end' font-size='12'>"
            f"{html.escape(r['job'])}</text>"
            f"<line x1='{x(r['min_s']):.1f}' x2='{x(r['max_s']):.1f}' y1='{mid}' y2='{mid}' "
            f"stroke='{color}'/>"
            f"<rect x='{x(r['median_s']):.1f}' y='{y}' "
            f"width='{max(x(r['p99_s']) - x(r['median_s']), 1):.1f}' height='{_ROW - 8}' "
            f"fill='{color}' fill-opacity='0.5' stroke='{color}'/>"
            f"<line x1='{x(r['median_s']):.1f}' x2='{x(r['median_s']):.1f}' y1='{y}' "
            f"y2='{y + _ROW - 8}' stroke='#000' stroke-width='2'/>"
        )
    scale = "log scale" if log else "linear scale"
    out.append(
        f"<text x='0' y='12' font-size='12'>call time: min, median to 99th percentile, max "
        f"({scale}, {_duration(lo)} to {_duration(hi)})</text></svg>"
    )
    return "".join(out)


def _html_table(rows: list[dict[str, Any]]) -> str:
    best = rows[0]["median_s"]
    head = ("job", "ips", "average", "deviation", "median", "99th %", "first call", "memory",
            "device memory", "vs fastest")  # fmt: skip
    out = ["<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for r in rows:
        dev = 100 * r["std_s"] / r["mean_s"] if r["mean_s"] else 0.0
        ratio = r["median_s"] / best if best else math.inf
        cells = (r["job"], _count(r["ips"]), _duration(r["mean_s"]), f"±{dev:.1f}%",
                 _duration(r["median_s"]), _duration(r["p99_s"]), _duration(r["first_call_s"]),
                 _bytes(r["memory_bytes"]), _bytes(r.get("device_memory_bytes")),
                 "fastest" if r is rows[0] else f"{ratio:.2f}× slower")  # fmt: skip
        out.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    out.append("</table>")
    return "".join(out)
