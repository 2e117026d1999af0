"""numerix.benchmark: the figures are consistent with the calls made, every returned
tensor is finished inside the clock, the report orders and compares the jobs, the HTML
page is self-contained. Speeds are never asserted."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import numerix as nx
from numerix import _benchmark


def _quick(jobs, inputs=None, **kw):
    return nx.benchmark(jobs, inputs, time=kw.pop("time", 0.03), warmup=kw.pop("warmup", 0.005),
                        **kw)  # fmt: skip


def test_figures_agree_with_the_calls() -> None:
    calls = {"a": 0, "b": 0}

    def a() -> int:
        calls["a"] += 1
        return sum(range(50))

    def b() -> int:
        calls["b"] += 1
        return sum(range(5000))

    r = _quick({"a": a, "b": b})
    assert [s["job"] for s in r.scenarios] == ["a", "b"]
    for s in r.scenarios:
        # the measured calls, the first call, the warm-up and the memory call
        assert 1 <= s["calls"] <= calls[s["job"]] - 2
        assert s["min_s"] <= s["median_s"] <= s["p99_s"] <= s["max_s"]
        assert s["min_s"] <= s["mean_s"] <= s["max_s"] and s["std_s"] >= 0
        assert s["ips"] == pytest.approx(1 / s["mean_s"])
        assert s["first_call_s"] > 0 and s["memory_bytes"] is not None
        assert s["input"] is None and s["backend"] is None and s["compiler"] is None
        assert s["calls"] * s["mean_s"] >= 0.03 * 0.99  # it ran for its time


def test_every_tensor_returned_is_finished_inside_the_clock(monkeypatch) -> None:
    finished = []
    backend = nx.get_backend("binary")
    real = type(backend).synchronize

    def spy(self, x):
        finished.append(x.shape)
        return real(self, x)

    monkeypatch.setattr(type(backend), "synchronize", spy)
    x = nx.ones((3,))
    r = _quick({"tree": lambda: {"a": (x + 1, [x * 2]), "n": 3}})
    (s,) = r.scenarios
    # two tensors per call, every call (measured, first, warm-up, memory)
    assert len(finished) >= 2 * (s["calls"] + 2) and set(finished) == {(3,)}


def test_inputs_and_jobs_on_a_backend_and_compiler() -> None:
    seen = []

    def f(t):
        seen.append(type(t))
        return nx.tanh(t) * 2

    inputs = {"small": nx.ones((4,)), "large": nx.ones((256,))}
    r = _quick({"eager": f, "jit": (f, "binary", "evaluator")}, inputs)
    assert sorted((s["job"], s["input"]) for s in r.scenarios) == [
        ("eager", "large"), ("eager", "small"), ("jit", "large"), ("jit", "small")]  # fmt: skip
    jit_rows = [s for s in r.scenarios if s["job"] == "jit"]
    assert all(s["backend"] == "binary" and s["compiler"] == "evaluator" for s in jit_rows)
    groups = r.groups()
    assert [g for g, _ in groups] == ["small", "large"]
    for _, rows in groups:  # fastest first
        assert [x["median_s"] for x in rows] == sorted(x["median_s"] for x in rows)


def test_the_report_compares_fastest_first() -> None:
    r = _quick({"slow": lambda: sum(range(20000)), "fast": lambda: None})
    text = r.table()
    lines = text.splitlines()
    names = [ln.split()[0] for ln in lines if ln.startswith(("slow", "fast"))]
    assert names[:2] == ["fast", "slow"]  # the table, fastest first
    m = re.search(r"^slow .* - ([0-9.]+)× slower \+", text, re.M)
    assert m is not None and float(m.group(1)) > 1, text
    data = json.loads(r.to_json())
    assert {s["job"] for s in data["scenarios"]} == {"slow", "fast"}
    assert data["machine"]["numerix"] == nx.__version__ and data["time"] == 0.03
    assert "fast" in repr(r) and str(r) == text


def test_the_html_page_is_self_contained(tmp_path) -> None:
    r = _quick({"x<y": lambda n: np.ones(1000).sum() + n, "b": lambda n: n}, {"in&put": 0})
    path = tmp_path / "report.html"
    page = r.to_html(path)
    assert path.read_text(encoding="utf-8") == page and r._repr_html_() == page
    assert page.count("<svg") == 2  # a bar chart and a box plot for the one input
    assert "x&lt;y" in page and "in&amp;put" in page and "x<y" not in page
    # nothing fetched when viewed: no script, no stylesheet or image from elsewhere
    assert "<script" not in page and not re.search(r"(src|href)=['\"]?https?:", page)


def test_bad_calls_are_refused_by_name() -> None:
    with pytest.raises(nx.ArgumentError, match="non-empty dict"):
        nx.benchmark({})
    with pytest.raises(nx.ArgumentError, match="job 'x' must be a callable"):
        nx.benchmark({"x": 3})
    with pytest.raises(nx.ArgumentError, match="inputs must be None or a non-empty dict"):
        nx.benchmark({"x": lambda a: a}, [1, 2])
    with pytest.raises(nx.ArgumentError, match="time must be more than 0"):
        nx.benchmark({"x": lambda: 1}, time=0)
    with pytest.raises(nx.ArgumentError, match="warmup must be seconds >= 0"):
        nx.benchmark({"x": lambda: 1}, warmup=-1)
    with pytest.raises(ZeroDivisionError):  # a job's own error reaches the caller as it is
        nx.benchmark({"x": lambda: 1 / 0}, time=0.01)
    assert _benchmark._duration(1.5e-6) == "1.5 µs" and _benchmark._count(2500) == "2.5 K"


def test_repeat_measures_again_and_keeps_each_repeats_median() -> None:
    r = _quick({"a": lambda: sum(range(100))}, time=0.02, repeat=3)
    (s,) = r.scenarios
    assert len(s["repeat_medians_s"]) == 3 and all(m > 0 for m in s["repeat_medians_s"])
    # every repeat ran for its time: the figures are those of all the calls
    assert s["calls"] * s["mean_s"] >= 3 * 0.02 * 0.99
    assert s["min_s"] <= min(s["repeat_medians_s"]) <= max(s["repeat_medians_s"]) <= s["max_s"]
    assert "Median of each repeat:" in r.table() and json.loads(r.to_json())["repeat"] == 3
    assert len(_quick({"a": lambda: 1}).scenarios[0]["repeat_medians_s"]) == 1


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "3", None])
def test_a_bad_repeat_is_refused_by_name(bad) -> None:
    with pytest.raises(nx.ArgumentError, match=r"benchmark: repeat must be an int >= 1"):
        nx.benchmark({"x": lambda: 1}, time=0.01, repeat=bad)


def test_device_memory_is_none_where_the_backend_cannot_tell() -> None:
    x = nx.ones((8,))
    (s,) = _quick({"host": lambda: x + 1}).scenarios
    assert s["device_memory_bytes"] is None and s["memory_bytes"] is not None
    lines = _quick({"host": lambda: x + 1}).table().splitlines()
    assert lines[2].split()[-2:] == ["device", "mem"] and lines[3].split()[-1] == "—"


def test_device_memory_comes_from_the_backend_of_the_returned_tensors(monkeypatch) -> None:
    backend = nx.get_backend("binary")
    cls = type(backend)
    state = {"in_use": 1000, "peak": 5000, "resets": 0}

    def device_memory(self):
        return state["in_use"], state["peak"]

    def reset(self):
        state["resets"] += 1
        state["peak"] = state["in_use"]

    def job():
        state["peak"] = max(state["peak"], state["in_use"] + 4096)  # one call's buffers
        return nx.ones((2,))

    monkeypatch.setattr(cls, "device_memory", device_memory)
    monkeypatch.setattr(cls, "reset_device_memory_peak", reset)
    r = _quick({"dev": job, "none": lambda: 3})
    rows = {s["job"]: s for s in r.scenarios}
    assert rows["dev"]["device_memory_bytes"] == 4096 and state["resets"] == 1
    assert rows["none"]["device_memory_bytes"] is None  # no tensor returned: no backend
    assert "4 KB" in r.table() and "4 KB" in r.to_html()
    # a library that cannot reset its peak: an older, higher peak hides the call's
    monkeypatch.setattr(cls, "reset_device_memory_peak", lambda self: None)
    state["peak"] = 10**9
    assert _quick({"dev": job}).scenarios[0]["device_memory_bytes"] is None
    assert _quick({"dev": job}, memory=False).scenarios[0]["device_memory_bytes"] is None


def test_plot_is_the_html_pages_charts_as_one_svg(tmp_path) -> None:
    r = _quick({"a": lambda n: n + 1, "b&c": lambda n: n * 2}, {"one": 1, "two": 2})
    chart = r.plot()
    svg = chart._repr_svg_()
    assert svg.startswith("<svg xmlns='http://www.w3.org/2000/svg'") and str(chart) == svg
    assert svg.count("<svg") == 1 + 4  # the outer image, two charts per input
    page = r.to_html()
    for inner in re.findall(r"<svg .*?</svg>", page, re.S):
        assert inner in svg  # the same charts as the page
    assert "input one" in svg and "b&amp;c" in svg
    assert re.search(r"^<svg [^>]*height='(\d+)'", svg) is not None
    path = tmp_path / "charts.svg"
    assert r.plot(path).svg == svg and path.read_text(encoding="utf-8") == svg


def test_progress_is_drawn_on_request_and_off_when_not_a_terminal(monkeypatch, capsys) -> None:
    import rich.progress

    shown = []
    real = rich.progress.Progress.update

    def update(self, task, **kw):
        shown.append(kw.get("description"))
        return real(self, task, **kw)

    monkeypatch.setattr(rich.progress.Progress, "update", update)
    _quick({"job-a": lambda: 1}, repeat=2, progress=True)
    assert "first call: job-a" in shown and "measuring (2/2): job-a" in shown
    assert "warm-up (1/2): job-a" in shown
    capsys.readouterr()
    shown.clear()
    _quick({"job-a": lambda: 1})  # progress=None: stderr is captured, not a terminal
    assert shown == [] and capsys.readouterr().err == ""
    with pytest.raises(nx.ArgumentError, match="progress must be True, False or None"):
        nx.benchmark({"x": lambda: 1}, time=0.01, progress="yes")
