"""The value classes of the low layer: frozen, compared, hashed, printed and pickled by
their fields, as the dataclasses they replace were."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest

import numerix as nx
from numerix.backend import Option
from numerix.compiler import ArgSpec
from numerix.configuration._state import ConfigFile
from numerix.plugins import BackendEntry, BrokenPlugin, CompilerEntry, PluginEntry


def test_fields_cannot_be_assigned_or_deleted():
    o = Option("threads", 1, type=int, minimum=1)
    with pytest.raises(AttributeError, match="Option is frozen: cannot assign 'minimum'"):
        o.minimum = 2  # type: ignore[misc]
    with pytest.raises(AttributeError, match="Option is frozen: cannot delete 'name'"):
        del o.name  # type: ignore[misc]
    with pytest.raises(AttributeError):
        o.other = 1  # type: ignore[attr-defined]  # no field of that name either


def test_equality_hash_and_repr_by_fields():
    a = Option("mode", "fast", choices=("fast", "slow"))
    b = Option("mode", "fast", choices=("fast", "slow"))
    c = Option("mode", "slow", choices=("fast", "slow"))
    assert a == b and hash(a) == hash(b) and a != c
    assert len({a, b, c}) == 2
    assert repr(a) == (
        "Option(name='mode', default='fast', type=None, choices=('fast', 'slow'), "
        "minimum=None, fix='')"
    )
    # another class with the same fields is not equal
    assert ConfigFile(Path("x"), "user") != BrokenPlugin("x", None, "user")
    assert ArgSpec((2,), nx.float32, nx.get_backend("binary")) == ArgSpec(
        (2,), nx.float32, nx.get_backend("binary")
    )


def test_plugin_entries_compare_without_where_they_come_from():
    e = BackendEntry("mine", "pkg.mod:Cls", description="d")
    assert e.contract == 2  # the backend contract this core implements, by default
    assert CompilerEntry("c", "pkg:C").contract == 1
    f = e.from_distribution("numerix-mine", "0.3")
    assert (f.distribution, f.version) == ("numerix-mine", "0.3")
    assert (e.distribution, e.version) == (None, None)  # the original is unchanged
    assert f == e and hash(f) == hash(e)
    assert f != e.replace(target="pkg.mod:Other")
    assert BackendEntry("mine", "pkg.mod:Cls") != CompilerEntry("mine", "pkg.mod:Cls")
    with pytest.raises(TypeError, match="PluginEntry is abstract"):
        PluginEntry("x", "y")
    with pytest.raises(TypeError, match="BackendEntry has no field 'kind'"):
        e.replace(kind="compiler")


def test_copy_and_pickle_keep_every_field():
    f = BackendEntry("mine", "pkg.mod:Cls", 2, "d", "numerix-mine", "0.3")
    for g in (pickle.loads(pickle.dumps(f)), copy.copy(f), copy.deepcopy(f)):
        assert type(g) is BackendEntry and g == f
        assert (g.distribution, g.version, g.description) == ("numerix-mine", "0.3", "d")
    o = Option("threads", 1, type=int, minimum=1, fix="pass a positive int")
    assert pickle.loads(pickle.dumps(o)) == o
