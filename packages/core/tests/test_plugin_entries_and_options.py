"""One plugin-entry type (backends and compilers), one options validator (a table of
:class:`numerix.backend.Option` a backend or compiler declares), the declared hook
``numerix bench`` reads, and the kernels the core shares between backends."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import numerix as nx
from numerix.backend import Backend, Option, check_options, clamp_starts, option_table
from numerix.cli import main
from numerix.defn.compilers import Compiler
from numerix.errors import ArgumentError, BackendOptionError
from numerix.plugins import (
    COMPILER_CONTRACT_VERSION,
    CompilerEntry,
    PluginEntry,
    backend_entries,
    compiler_entries,
    register_compiler,
    unregister_compiler,
)
from numerix.primitives._registry import CONTRACT_VERSION
from numerix_binary.backend import BinaryBackend

# ---------------------------------------------------------------- plugin entries


def test_backend_and_compiler_entries_are_one_type_told_apart_by_kind() -> None:
    from numerix.plugins import BackendEntry

    b = BackendEntry("mine", "pkg.mod:Mine")
    c = CompilerEntry("mine", "pkg.mod:MineCompiler", description="d")
    assert isinstance(b, PluginEntry) and isinstance(c, PluginEntry)
    assert (b.kind, b.contract) == ("backend", CONTRACT_VERSION)
    assert (c.kind, c.contract) == ("compiler", COMPILER_CONTRACT_VERSION)
    assert BackendEntry("mine", "pkg.mod:Mine", 7).contract == 7
    stamped = c.from_distribution("numerix-mine", "1.2")
    assert type(stamped) is CompilerEntry
    assert (stamped.distribution, stamped.version, stamped.description) == (
        "numerix-mine",
        "1.2",
        "d",
    )
    assert stamped == c  # where it came from is not part of what it declares
    with pytest.raises(TypeError, match="PluginEntry is abstract"):
        PluginEntry("mine", "pkg.mod:Mine")


def test_the_projects_plugins_declare_their_entries_with_their_distribution() -> None:
    # binary always; xla and torch where installed (core and binary alone on the other
    # Pythons of CI)
    backends, compilers = backend_entries(), compiler_entries()
    assert "binary" in backends
    for name in ("binary", "xla", "torch"):
        if name in backends:
            entry = backends[name]
            assert entry.kind == "backend" and entry.distribution == f"numerix-{name}"
        if name != "binary" and name in compilers:
            assert compilers[name].kind == "compiler"
            assert compilers[name].distribution == f"numerix-{name}"
    assert compilers["evaluator"].kind == "compiler"
    assert compilers["evaluator"].distribution == "numerix"


# ---------------------------------------------------------------- the options validator

TABLE = (
    Option("client", "host", choices=("host", "cuda", "rocm")),
    Option(
        "device_id", lambda options: 3 if options["client"] == "cuda" else 0, type=int, minimum=0
    ),
    Option("mode", "fast", choices=("fast",), fix="this library has one mode"),
    Option("threads", None, type=int, minimum=1),
    Option("tag", "x"),
)


def test_defaults_fill_in_and_a_computed_default_sees_the_options_before_it() -> None:
    assert check_options("backend 'b'", TABLE, {}) == {
        "client": "host", "device_id": 0, "mode": "fast", "threads": None, "tag": "x",
    }  # fmt: skip
    got = check_options("backend 'b'", TABLE, {"client": "cuda", "threads": 4, "tag": [1]})
    assert (got["device_id"], got["threads"], got["tag"]) == (3, 4, [1])
    # None for a computed default means the default; for a plain None default, None
    assert (
        check_options("backend 'b'", TABLE, {"client": "cuda", "device_id": None})["device_id"] == 3
    )
    assert check_options("backend 'b'", TABLE, {"device_id": 5})["device_id"] == 5


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"clinet": "host"},
            "backend 'b' does not take option(s) 'clinet'; it accepts: client, device_id, "
            "mode, threads, tag; did you mean 'client'?",
        ),
        (
            {"memory": 1, "tag": 2},
            "backend 'b' does not take option(s) 'memory'; it accepts: client, device_id, "
            "mode, threads, tag",
        ),
        (
            {"client": "cdua"},
            "backend 'b': unknown client 'cdua'; clients are host, cuda, rocm; did you mean "
            "'cuda'?",
        ),
        ({"client": 1}, "backend 'b': unknown client 1; clients are host, cuda, rocm"),
        (
            {"mode": "slow"},
            "backend 'b': mode must be 'fast', got 'slow'; this library has one mode",
        ),
        ({"device_id": -1}, "backend 'b': device_id must be a non-negative int or None, got -1"),
        (
            {"device_id": True},
            "backend 'b': device_id must be a non-negative int or None, got True",
        ),
        ({"device_id": "0"}, "backend 'b': device_id must be a non-negative int or None, got '0'"),
        ({"threads": 0}, "backend 'b': threads must be a positive int or None, got 0"),
    ],
)
def test_each_refusal_names_the_owner_the_option_and_the_fix(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(BackendOptionError) as e:
        check_options("backend 'b'", TABLE, options)
    assert str(e.value) == message


def test_a_plain_type_and_a_refused_value_of_a_choice_with_a_true_value() -> None:
    table = (Option("flag", False, type=bool), Option("level", 1, choices=(1, 2)))
    assert check_options("o", table, {"flag": True})["flag"] is True
    with pytest.raises(BackendOptionError, match=r"^o: flag must be True or False, got 1$"):
        check_options("o", table, {"flag": 1})
    # True == 1 in Python: a bool is not one of the int choices
    with pytest.raises(BackendOptionError, match=r"^o: unknown level True; levels are 1, 2$"):
        check_options("o", table, {"level": True})


class Tabled(BinaryBackend):
    """A third-party backend declaring its options through the table."""

    name = "tabled"
    accepted_options = (
        Option("device", "cpu", choices=("cpu",)),
        Option("threads", 1, type=int, minimum=1),
        Option("precision", "high", choices=("high", "low")),
    )
    spec_fields = ("device", "threads")

    __slots__ = ()


class Legacy(Tabled):
    """A subclass declaring a plain ``default_options`` mapping replaces the table."""

    name = "legacy"
    default_options = {"device": "cpu", "colour": "blue"}

    __slots__ = ()


@pytest.fixture
def tabled() -> Any:
    nx.register_backend("tabled", Tabled, replace=True)
    nx.register_backend("legacy", Legacy, replace=True)
    yield
    nx.unregister_backend("tabled")
    nx.unregister_backend("legacy")


def test_a_third_party_backend_declares_its_options_in_a_table(tabled: None) -> None:
    assert Tabled.default_options == {"device": "cpu", "threads": 1, "precision": "high"}
    be = nx.get_backend("tabled", threads=4)
    assert be.options == {"device": "cpu", "threads": 4, "precision": "high"}
    assert nx.get_backend("tabled") is nx.get_backend("tabled", threads=1, precision="high")
    t = nx.tensor([1.0, 2.0], backend="tabled:cpu:2")
    assert t.backend.options["threads"] == 2
    np.testing.assert_array_equal((t + t).to_numpy(), np.array([2.0, 4.0], np.float32))
    with pytest.raises(BackendOptionError, match=r"backend 'tabled': threads must be a positive"):
        nx.get_backend("tabled", threads=0)
    with pytest.raises(
        BackendOptionError,
        match=r"backend 'tabled': unknown precision 'hihg'; precisions are high, low; "
        r"did you mean 'high'\?",
    ):
        nx.get_backend("tabled", precision="hihg")
    with pytest.raises(
        BackendOptionError, match=r"does not take option\(s\) 'thread'.*did you mean 'threads'"
    ):
        nx.tensor([1], backend="tabled", thread=2)


def test_a_default_options_mapping_alone_still_declares_untyped_options(tabled: None) -> None:
    assert [o.name for o in option_table(Legacy)] == ["device", "colour"]
    assert nx.get_backend("legacy", colour=3).options == {"device": "cpu", "colour": 3}
    with pytest.raises(BackendOptionError, match=r"'legacy' does not take option\(s\) 'threads'"):
        nx.get_backend("legacy", threads=2)
    # the base declares nothing
    assert option_table(Backend) == ()


class TabledCompiler(Compiler):
    name = "tabledc"
    accepted_options = (Option("level", 1, type=int, minimum=0, fix="0 turns it off"),)


def test_a_compiler_declares_its_options_in_the_same_table() -> None:
    c = TabledCompiler()
    assert TabledCompiler.default_options == {"level": 1}
    assert c.validate_options({}) == {"level": 1}
    with pytest.raises(
        ArgumentError, match=r"^jit: compiler 'tabledc': level must be a non-negative int, got -1; "
        r"0 turns it off$",
    ):  # fmt: skip
        c.validate_options({"level": -1})
    with pytest.raises(ArgumentError, match=r"did you mean 'level'\?"):
        c.validate_options({"levle": 2})


# ---------------------------------------------------------------- the CLI's declared hook


def test_the_bench_reads_the_declared_hook_and_a_backend_without_one_has_no_raw_row(
    tabled: None, capsys: pytest.CaptureFixture[str]
) -> None:
    class NoRaw(Tabled):
        name = "noraw"
        __slots__ = ()

        def bench_raw_matmul(self, x_np: np.ndarray, w_np: np.ndarray) -> None:
            return None

    assert Backend.bench_raw_matmul(nx.get_backend("binary"), np.ones(1), np.ones(1)) is None
    nx.register_backend("noraw", NoRaw)
    try:
        argv = ["bench", "matmul", "--repeat", "2", "--warmup", "1", "--rows", "50", "--json",
                "--backend", "noraw", "--backend", "tabled", "--no-compiled"]  # fmt: skip
        code = main(argv)
    finally:
        nx.unregister_backend("noraw")
    out = capsys.readouterr().out
    assert code == 0, out
    names = [r["name"] for r in json.loads(out)["rows"]]
    # tabled inherits binary's hook (numpy, host: the row names no device); noraw has none
    assert names == ["noraw (cpu)", "tabled (cpu)", "numpy (raw)"]


# ---------------------------------------------------------------- shared kernels


def test_clamp_starts_is_xlas_rule() -> None:
    assert clamp_starts([-3, 2, 9, 1], (5, 5, 5, 0), (2, 2, 2, 0)) == [0, 2, 3, 0]
    assert clamp_starts([np.int64(4)], (4,), (4,)) == [0]
    assert clamp_starts([], (), ()) == []


def test_run_time_registration_of_either_kind_refuses_a_taken_name_or_replaces_it() -> None:
    class Other(Tabled):
        name = "tabled"
        __slots__ = ()

    nx.register_backend("tabled", Tabled, replace=True)
    register_compiler("tabledc", TabledCompiler, replace=True)
    try:
        with pytest.raises(nx.PluginError, match=r"^register_backend: backend 'tabled' is alr"):
            nx.register_backend("tabled", Other)
        with pytest.raises(nx.PluginError, match=r"^register_compiler: compiler 'tabledc' is "):
            register_compiler("tabledc", TabledCompiler)
        assert type(nx.get_backend("tabled")) is Tabled
        nx.register_backend("tabled", Other, replace=True)
        assert type(nx.get_backend("tabled")) is Other  # the cached instance went too
        with pytest.raises(nx.PluginError, match=r"compiler 'future': built for compiler cont"):
            register_compiler("future", TabledCompiler, contract=99)
        assert "future" not in compiler_entries()
    finally:
        nx.unregister_backend("tabled")
        unregister_compiler("tabledc")


def test_pad_plan_places_the_input_and_crops_negative_edges() -> None:
    from numerix.backend import pad_plan

    full, place, crop = pad_plan((3, 2), ((1, -1, 1), (0, 2, 0)))
    assert full == [6, 4]
    assert place == (slice(1, 6, 2), slice(0, 2, 1)) and crop == (slice(0, 5), slice(0, 4))
    r = np.zeros(full)
    r[place] = np.arange(6.0).reshape(3, 2) + 1
    np.testing.assert_array_equal(
        r[crop], np.array([[0, 0, 0, 0], [1, 2, 0, 0], [0, 0, 0, 0], [3, 4, 0, 0], [0, 0, 0, 0]])
    )
    assert pad_plan((0,), ((2, 1, 3),)) == ([3], (slice(2, 2, 4),), (slice(0, 3),))
