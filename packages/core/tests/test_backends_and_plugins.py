"""Defaults, backend specs, transfers, mixing rules and plugin loading."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from typing import Any, ClassVar

import numpy as np
import pytest

import numerix as nx
from numerix import plugins
from numerix.ops import _core
from numerix_binary.backend import BinaryBackend


class FakeDevice(BinaryBackend):
    """A non-host backend with numbered devices, computing with numpy: enough to test the
    mixing rules and transfers without an accelerator."""

    name = "fakedev"
    default_options: ClassVar[dict[str, Any]] = {"device": "cpu", "device_id": 0}
    spec_fields = ("device", "device_id")
    is_host = False

    def device_name(self) -> str:
        return f"{self.options['device']}:{self.options['device_id']}"

    @classmethod
    def is_available(cls, **options: Any) -> bool:
        return options.get("device", "cpu") == "cpu"

    def from_numpy(self, out: Any, array: np.ndarray) -> Any:
        out.data = np.array(array, copy=True)
        return out

    def from_dlpack(self, out: Any, source: Any) -> None:
        return None


@pytest.fixture
def fakedev():
    nx.register_backend("fakedev", FakeDevice, replace=True)
    yield
    nx.unregister_backend("fakedev")


# ---------------------------------------------------------------- defaults


def test_default_backend_is_binary():
    b = nx.get_default_backend()
    assert b.name == "binary" and b.device == "cpu"
    assert nx.tensor([1]).backend is b
    assert repr(b) == "binary(cpu)"


def test_backend_instances_are_singletons():
    assert nx.get_backend("binary") is nx.get_backend("binary", device="cpu")
    assert nx.get_backend("binary") is nx.get_default_backend()


def test_default_backend_context_scopes_and_restores(fakedev):
    before = nx.get_default_backend()
    with nx.default_backend("fakedev", device_id=1) as b:
        assert b.device == "cpu:1"
        t = nx.ones((2,))
        assert t.backend is b
        assert repr(t).startswith("Tensor<f32[2] fakedev(cpu:1)>")
    assert nx.get_default_backend() is before


def test_spec_strings_and_tuples(fakedev):
    a = nx.tensor([1.0], backend="fakedev:cpu:1")
    b = nx.tensor([1.0], backend=("fakedev", {"device_id": 1}))
    assert a.backend is b.backend
    assert a.device == "cpu:1"


def test_set_default_backend_is_context_local(fakedev):
    seen = {}

    def worker():
        nx.set_default_backend("fakedev")
        seen["thread"] = nx.get_default_backend().name

    th = threading.Thread(target=worker)
    th.start()
    th.join()
    assert seen["thread"] == "fakedev"
    assert nx.get_default_backend().name == "binary"


def test_set_global_default_backend(fakedev):
    try:
        nx.set_global_default_backend("fakedev")
        out = {}
        th = threading.Thread(target=lambda: out.setdefault("b", nx.get_default_backend().name))
        th.start()
        th.join()
        assert out["b"] == "fakedev"
    finally:
        nx.set_global_default_backend("binary")
    assert nx.get_default_backend().name == "binary"


def test_priority_list_picks_first_available(fakedev):
    with nx.default_backend(["nosuch:gpu", "fakedev:tpu", "fakedev", "binary"]) as b:
        assert b.name == "fakedev"
    with nx.default_backend(["nosuch", "binary"]) as b:
        assert b.name == "binary"


def test_priority_list_nothing_available():
    with pytest.raises(nx.BackendNotFoundError, match="none of the backends in the priority list"):
        nx.set_default_backend(["nosuch", "other"])


def test_unknown_backend_lists_installed():
    with pytest.raises(
        nx.BackendNotFoundError, match=r"no backend named 'nosuch'; installed backends: .*binary"
    ):
        nx.tensor([1], backend="nosuch")


def test_unknown_backend_suggests_install(core_only):
    from numerix.plugins import install_command

    with pytest.raises(nx.BackendNotFoundError) as e:
        nx.get_backend("xla")
    assert str(e.value).endswith(f". Install it with: {install_command('numerix-xla')}")


def test_unknown_option_is_refused():
    with pytest.raises(
        nx.BackendOptionError,
        match=r"backend 'binary' does not take option\(s\) 'client'; it accepts: device",
    ):
        nx.tensor([1], backend="binary", client="cuda")
    with pytest.raises(nx.BackendOptionError, match="device must be 'cpu'"):
        nx.get_backend("binary", device="cuda")


def test_too_many_spec_fields():
    with pytest.raises(nx.BackendNotFoundError, match="takes at most 1"):
        nx.tensor([1], backend="binary:cpu:0")


def test_bad_spec_type():
    with pytest.raises(nx.BackendNotFoundError, match="cannot read 42 as a backend"):
        nx.set_default_backend(42)


# ---------------------------------------------------------------- mixing and transfers


def test_binary_operands_move_to_the_other_backend(fakedev):
    f = nx.tensor([1.0, 2.0], backend="fakedev")
    h = nx.tensor([10.0, 20.0])
    for r in (f + h, h + f, nx.where(h > 15, f, h), nx.concatenate([h, f])):
        assert r.backend is f.backend
    assert (f + h).tolist() == [11.0, 22.0]
    assert (f + np.array([1.0, 1.0], np.float32)).backend is f.backend


def test_mixed_devices_raise_with_the_fix(fakedev):
    a = nx.tensor([1.0], backend="fakedev:cpu:0")
    b = nx.tensor([1.0], backend="fakedev:cpu:1")
    msg = (
        r"add: operands live on different backends or devices \(operand 0: f32\[1\] "
        r"fakedev\(cpu:0\), operand 1: f32\[1\] fakedev\(cpu:1\)\); move them to one first, "
        r"e.g. numerix.backend_transfer\(t, 'fakedev', device='cpu', device_id=0\)"
    )
    with pytest.raises(nx.BackendMismatchError, match=msg):
        a + b
    with pytest.raises(nx.BackendMismatchError, match=r"^dot: "):
        nx.dot(a, b)


def test_backend_transfer_round_trip(fakedev):
    h = nx.arange(6, dtype=nx.int16).reshape(2, 3)
    f = nx.backend_transfer(h, "fakedev", device_id=1)
    assert f.backend.device == "cpu:1" and f.dtype is nx.int16 and f.shape == (2, 3)
    back = f.to("binary")
    assert back.backend is h.backend
    np.testing.assert_array_equal(back.to_numpy(), h.to_numpy())
    assert nx.backend_transfer(h, "binary") is h


def test_backend_copy_shares_no_memory():
    a = np.arange(4.0, dtype=np.float32)
    t = nx.tensor(a)
    c = nx.backend_copy(t)
    assert not np.shares_memory(c.to_numpy(), t.to_numpy())
    np.testing.assert_array_equal(c.to_numpy(), a)


def test_binary_adopts_numpy_arrays_without_copy():
    a = np.ones((1000, 10), np.float32)
    t = nx.tensor(a)
    assert np.shares_memory(t.to_numpy(), a)


def test_backend_deallocate():
    t = nx.tensor([1.0, 2.0])
    nx.backend_deallocate(t)
    with pytest.raises(nx.NumerixError, match="deallocated"):
        t + 1
    with pytest.raises(nx.NumerixError, match="deallocated"):
        t.to_numpy()


def test_dlpack_exchange():
    t = nx.tensor([1.5, 2.5], dtype=nx.float64)
    a = np.from_dlpack(t)
    np.testing.assert_array_equal(a, [1.5, 2.5])
    back = nx.tensor(a)
    assert back.dtype is nx.float64


# ---------------------------------------------------------------- plugins


def test_binary_is_registered_through_its_entry_point():
    entries = plugins.backend_entries()
    e = entries["binary"]
    assert e.distribution == "numerix-binary"
    assert e.target == "numerix_binary.backend:BinaryBackend"
    assert any(d == "numerix-binary" for _, d, _ in plugins.loaded_plugins())


def test_register_backend_twice_needs_replace(fakedev):
    with pytest.raises(nx.PluginError, match="already registered"):
        nx.register_backend("fakedev", FakeDevice)


def test_register_refuses_other_contract():
    with pytest.raises(nx.PluginError, match="built for backend contract 99"):
        nx.register_backend("future", FakeDevice, contract=99)
    assert "future" not in plugins.backend_entries()


def test_backend_target_that_fails_to_import():
    nx.register_backend("broken", "numerix_no_such_module:Backend")
    try:
        with pytest.raises(
            nx.PluginError, match=r"backend 'broken' .* failed to load: ModuleNotFoundError"
        ):
            nx.tensor([1], backend="broken")
    finally:
        nx.unregister_backend("broken")


def test_target_that_is_not_a_backend():
    nx.register_backend("notabackend", dict)  # type: ignore[arg-type]
    try:
        with pytest.raises(nx.PluginError, match="is not a numerix Backend class"):
            nx.get_backend("notabackend")
    finally:
        nx.unregister_backend("notabackend")


def test_registering_does_not_import_the_target(tmp_path, monkeypatch):
    (tmp_path / "numerix_lazy_probe.py").write_text(
        textwrap.dedent("""
        from numerix_binary.backend import BinaryBackend
        class Probe(BinaryBackend):
            name = "probe"
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    nx.register_backend("probe", "numerix_lazy_probe:Probe")
    try:
        assert "numerix_lazy_probe" not in sys.modules
        assert nx.get_backend("probe").name == "probe"
        assert "numerix_lazy_probe" in sys.modules
    finally:
        nx.unregister_backend("probe")


def test_broken_entry_point_is_listed_not_raised(tmp_path):
    # a distribution whose plugin module raises on import: numerix still imports,
    # the other plugins still load, and the broken one is listed with its reason
    site = tmp_path / "site"
    site.mkdir()
    (site / "numerix_broken_plugin.py").write_text("raise RuntimeError('boom at import')\n")
    dist = site / "numerix_broken_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: numerix-broken-plugin\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text("[numerix.plugins]\nbroken = numerix_broken_plugin\n")
    code = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(site)!r})
        import numerix as nx
        from numerix import plugins
        print(nx.tensor([1, 2]).tolist())
        print(sorted(plugins.backend_entries()))
        print([(b.name, b.distribution, b.reason) for b in plugins.broken_plugins()])
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = r.stdout.splitlines()
    assert lines[0] == "[1, 2]"
    assert "'binary'" in lines[1]
    assert "('broken', 'numerix-broken-plugin', 'RuntimeError: boom at import')" in lines[2]


def test_a_backend_built_for_contract_1_is_refused() -> None:
    # contract 2 made each reduction family one primitive with a kind: a backend whose
    # kernels are sum, window_max, cumulative_sum ... is refused, not broken at its first op
    with pytest.raises(
        nx.PluginError,
        match=r"^register_backend: backend 'contract1': built for backend contract 1, this "
        r"numerix implements contract 2",
    ):
        nx.register_backend("contract1", BinaryBackend, contract=1)
    assert "contract1" not in plugins.backend_entries()
    # the refusal says what changed since contract 1
    with pytest.raises(nx.PluginError) as e:
        nx.register_backend("contract1", BinaryBackend, contract=1)
    assert "(in contract 2, the reductions (sum, prod, max, min, all, any)" in str(e.value)
    assert "one primitive per family with a kind parameter" in str(e.value)


def test_plugin_entries_for_another_contract_or_a_taken_name(tmp_path):
    # one plugin: a backend and a compiler built for contract 99 (refused, listed as
    # broken), and a second compiler called 'evaluator' (the first one is kept, a warning)
    site = tmp_path / "site"
    site.mkdir()
    (site / "numerix_future_plugin.py").write_text(
        textwrap.dedent("""
        from numerix.hookspecs import hookimpl
        from numerix.plugins import BackendEntry, CompilerEntry

        @hookimpl
        def numerix_backends():
            return [BackendEntry("future", "numerix_future_plugin:B", contract=99)]

        @hookimpl
        def numerix_compilers():
            return [CompilerEntry("futurec", "numerix_future_plugin:C", contract=99),
                    CompilerEntry("evaluator", "numerix_future_plugin:C", contract=1)]
        """)
    )
    dist = site / "numerix_future_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: numerix-future-plugin\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text("[numerix.plugins]\nfuture = numerix_future_plugin\n")
    code = textwrap.dedent(f"""
        import sys, warnings; sys.path.insert(0, {str(site)!r})
        from numerix import plugins
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            comps = plugins.compiler_entries()
        print(sorted(plugins.backend_entries()), sorted(comps), comps["evaluator"].target)
        for b in plugins.broken_plugins():
            print(b.name, "|", b.distribution, "|", b.reason)
        print([str(x.message) for x in w])
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = r.stdout.splitlines()
    assert "'future'" not in lines[0] and "'futurec'" not in lines[0]
    assert lines[0].endswith("numerix.defn.evaluator:Evaluator")
    assert (
        "future | numerix-future-plugin | built for backend contract 99, this numerix "
        "implements contract 2" in lines[1]
    )
    assert "futurec | numerix-future-plugin | built for compiler contract 99" in lines[2]
    assert "two plugins provide compiler 'evaluator'" in lines[3]
    assert "numerix-future-plugin; using the first" in lines[3]


def test_import_numerix_does_not_import_heavy_or_plugin_modules():
    code = (
        "import sys, numerix; print(sorted(m for m in ('jax', 'torch', 'numerix_binary.backend', "
        "'pluggy', 'pydantic', 'rich') if m in sys.modules))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"


def test_first_op_on_binary_does_not_import_pluggy():
    # the project's own plugin is loaded alone; pluggy comes with full discovery only
    code = (
        "import sys, numerix as nx; nx.add(nx.ones(4), nx.ones(4)); print('pluggy' in sys.modules)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "False"


@pytest.mark.parametrize(
    "options",
    [{}, {"tryfirst": True}, {"trylast": True, "specname": "numerix_backends"},
     {"wrapper": True}, {"hookwrapper": True, "optionalhook": True}],
)  # fmt: skip
def test_hook_markers_set_what_pluggys_markers_set(options):
    import pluggy

    from numerix import hookspecs

    def ours() -> None: ...

    def theirs() -> None: ...

    if options:
        hookspecs.hookimpl(**options)(ours)
        pluggy.HookimplMarker("numerix")(**options)(theirs)
    else:
        hookspecs.hookimpl(ours)
        pluggy.HookimplMarker("numerix")(theirs)
    assert ours.numerix_impl == theirs.numerix_impl  # type: ignore[attr-defined]

    def spec_ours() -> None: ...

    def spec_theirs() -> None: ...

    hookspecs.hookspec(spec_ours)
    pluggy.HookspecMarker("numerix")(spec_theirs)
    assert spec_ours.numerix_spec == spec_theirs.numerix_spec  # type: ignore[attr-defined]
    # and pluggy reads our marks: the specification registers, the implementation is called
    pm = pluggy.PluginManager("numerix")
    pm.add_hookspecs(hookspecs)

    class Plugin:
        @staticmethod
        @hookspecs.hookimpl
        def numerix_compilers() -> list[str]:
            return ["marked"]

    pm.register(Plugin())
    assert pm.hook.numerix_compilers() == [["marked"]]


# ---------------------------------------------------------------- clear_caches


class CachingBackend(BinaryBackend):
    name = "caching"
    cleared: ClassVar[int] = 0

    @classmethod
    def clear_caches(cls) -> None:
        cls.cleared += 1


def test_clear_caches_asks_every_loaded_backend() -> None:
    nx.register_backend("caching", CachingBackend, replace=True)
    try:
        x = nx.tensor([1.0, 2.0], backend="caching")  # loads the class
        before = CachingBackend.cleared
        nx.clear_caches()
        assert CachingBackend.cleared == before + 1
        # nothing a tensor needs is lost: it still computes
        assert (x + 1).tolist() == [2.0, 3.0]
    finally:
        nx.unregister_backend("caching")
    # an unregistered backend is not asked any more
    nx.clear_caches()
    assert CachingBackend.cleared == before + 1


def _dist(site: Any, module: str, dist_name: str, source: str) -> None:
    (site / f"{module}.py").write_text(textwrap.dedent(source))
    info = site / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist_name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[numerix.plugins]\n{module} = {module}\n")


def test_a_backend_subclass_is_registered_under_its_own_name_only(tmp_path, monkeypatch):
    # a subclass that inherits binary's name would be keyed as binary: it would take over
    # backend="binary" tensors, or backend="boom" would hand back binary itself
    class Boom(BinaryBackend):
        def exp(self, out: Any, x: Any) -> Any:
            raise RuntimeError("boom's kernel")

    msg = (
        r"^register_backend: backend 'boom': class .*Boom has name 'binary' \(inherited from "
        r"BinaryBackend\), and a backend's name is its identity .*; set name = 'boom' in "
    )
    with pytest.raises(nx.PluginError, match=msg):
        nx.register_backend("boom", Boom)
    with pytest.raises(nx.PluginError, match=msg):
        nx.register_backend("boom", Boom, replace=True)
    with pytest.raises(nx.BackendNotFoundError):
        nx.get_backend("boom")
    # binary's tensors stay binary's, before and after the refused registration
    t = nx.tensor([0.0], backend="binary")
    assert type(t.backend) is BinaryBackend and nx.exp(t).tolist() == [1.0]

    Boom.name = "boom"  # what the message asks for
    nx.register_backend("boom", Boom)
    try:
        b = nx.tensor([0.0], backend="boom")
        assert type(b.backend) is Boom and repr(b.backend) == "boom(cpu)"
        with pytest.raises(RuntimeError, match="boom's kernel"):
            nx.exp(b)
        t = nx.tensor([0.0], backend="binary")
        assert type(t.backend) is BinaryBackend and nx.exp(t).tolist() == [1.0]
        assert nx.get_backend("binary") is not nx.get_backend("boom")
    finally:
        nx.unregister_backend("boom")

    # a "module:Class" target is checked when it loads
    (tmp_path / "numerix_nameless_probe.py").write_text(
        "from numerix_binary.backend import BinaryBackend\n"
        "class Nameless(BinaryBackend):\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    nx.register_backend("nameless", "numerix_nameless_probe:Nameless")
    try:
        with pytest.raises(
            nx.PluginError,
            match=r"^get_backend: backend 'nameless': class Nameless has name 'binary' "
            r"\(inherited from BinaryBackend\)",
        ):
            nx.tensor([1.0], backend="nameless")
    finally:
        nx.unregister_backend("nameless")


def test_a_misspelt_hook_is_a_named_error(tmp_path):
    # a marked function under a name no hook has, and a plain function (in a plugin
    # object) named like one: pluggy alone would let both by, and the backends they meant
    # to name would never exist
    site = tmp_path / "site"
    site.mkdir()
    _dist(
        site,
        "nxp_marked",
        "nxp-marked",
        """
        from numerix.hookspecs import hookimpl
        from numerix.plugins import BackendEntry

        @hookimpl
        def numerix_backend():
            return [BackendEntry("marked", "numerix_binary.backend:BinaryBackend")]
        """,
    )
    _dist(
        site,
        "nxp_object",
        "nxp-object",
        """
        from numerix.plugins import BackendEntry

        class Plugin:
            def numerix_register_backend(self):
                return [BackendEntry("plain", "numerix_binary.backend:BinaryBackend")]

            def helper(self):
                return 1

        plugin = Plugin()
        """,
    )
    (site / "nxp_object-0.1.dist-info" / "entry_points.txt").write_text(
        "[numerix.plugins]\nnxp_object = nxp_object:plugin\n"
    )
    code = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(site)!r})
        import numerix as nx
        from numerix import plugins
        for b in sorted(plugins.broken_plugins(), key=lambda b: b.name):
            print(b.name, "|", b.distribution, "|", b.reason)
        print(sorted(plugins.backend_entries()))
        try:
            nx.tensor([1], backend="nxp_marked")
        except nx.NumerixError as e:
            print(type(e).__name__, e)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    hooks = "The hooks are numerix_backends, numerix_compilers, numerix_settings_models"
    assert lines[0] == (
        "nxp_marked | nxp-marked | PluginError: 'numerix_backend' is not a numerix hook; did "
        f"you mean 'numerix_backends'? {hooks}; rename it, or take the numerix_ prefix off a "
        "function that is not a hook"
    )
    assert lines[1].startswith(
        "nxp_object | nxp-object | PluginError: 'numerix_register_backend' is not a numerix "
        "hook; did you mean 'numerix_backends'?"
    )
    assert "marked" not in lines[2] and "plain" not in lines[2]
    assert lines[3].startswith(
        "PluginError get_backend: backend 'nxp_marked': the plugin providing it (nxp-marked) "
        "is broken: PluginError: 'numerix_backend' is not a numerix hook"
    ), lines[3]


def test_misbehaving_plugins_are_listed_broken_and_never_fatal(tmp_path):
    # a hook returning a string, a plugin calling sys.exit() at import, and a plugin
    # taking the name 'binary': each is listed as broken, the rest of numerix works
    site = tmp_path / "site"
    site.mkdir()
    _dist(
        site,
        "nxp_string",
        "nxp-string",
        """
        from numerix.hookspecs import hookimpl

        @hookimpl
        def numerix_backends():
            return "mybackend"
        """,
    )
    _dist(site, "nxp_exit", "nxp-exit", "import sys\nsys.exit(3)\n")
    _dist(
        site,
        "nxp_binary",
        "nxp-binary",
        """
        from numerix.hookspecs import hookimpl
        from numerix.plugins import BackendEntry

        @hookimpl
        def numerix_backends():
            return [BackendEntry("binary", "nxp_binary:Impostor")]
        """,
    )
    code = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(site)!r})
        import numerix as nx
        from numerix import plugins
        print(nx.tensor([1, 2]).tolist(), nx.get_default_backend().name)
        print(plugins.backend_entries()["binary"].target)
        for b in sorted(plugins.broken_plugins(), key=lambda b: b.name):
            print(b.name, "|", b.distribution, "|", b.reason)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert lines[0] == "[1, 2] binary"
    assert lines[1] == "numerix_binary.backend:BinaryBackend"
    broken = "\n".join(lines[2:])
    assert (
        "binary | nxp-binary | backend name 'binary' belongs to numerix-binary; the plugin "
        "must choose another name" in broken
    )
    assert "nxp_exit | nxp-exit | SystemExit: 3" in broken
    assert (
        "nxp_string | nxp-string | PluginError: hook numerix_backends must return a list of "
        "numerix.plugins.BackendEntry, got str 'mybackend'" in broken
    )


def test_a_misspelt_backend_name_gets_a_suggestion():
    with pytest.raises(
        nx.BackendNotFoundError,
        match=r"^get_backend: no backend named 'bianry'; installed backends: .*binary.*; "
        r"did you mean 'binary'\?$",
    ):
        nx.get_backend("bianry")
    with pytest.raises(nx.BackendNotFoundError) as e:
        nx.get_backend("qqqqq")
    assert "did you mean" not in str(e.value)


def test_devices_lists_backend_specs_that_place_tensors(fakedev):
    # the fake backend sees two devices; each entry works as a backend= argument
    FakeDevice.devices = classmethod(lambda cls: ["cpu:0", "cpu:1"])  # type: ignore[method-assign]
    try:
        listed = nx.devices()
        assert "binary:cpu" in listed and "fakedev:cpu:0" in listed and "fakedev:cpu:1" in listed
        assert nx.devices("fakedev") == ["fakedev:cpu:0", "fakedev:cpu:1"]
        for spec in nx.devices("fakedev") + nx.devices("binary"):
            x = nx.tensor([1.0], backend=spec)
            assert f"{x.backend.name}:{x.backend.device_name()}" == spec
    finally:
        del FakeDevice.devices
    with pytest.raises(nx.BackendNotFoundError, match=r"^devices: no backend named 'bianry'"):
        nx.devices("bianry")
    with pytest.raises(nx.BackendNotFoundError, match=r"^devices: backend must be a backend"):
        nx.devices(3)  # type: ignore[arg-type]


# ---------------------------------------------------------------- lazy plugins


def _fresh(code: str, env: dict[str, str] | None = None) -> list[str]:
    import os

    base = {k: v for k, v in os.environ.items() if not k.startswith("NUMERIX_")}
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_using_binary_loads_no_other_plugin_nor_the_entry_points():
    # the first op and a jit on binary import numerix-binary's plugin alone: not the
    # other plugins' modules, not JAX or PyTorch, not importlib.metadata (tens of ms)
    out = _fresh("""
        import sys
        had_metadata = "importlib.metadata" in sys.modules
        import numerix as nx
        x = nx.zeros(3)
        y = nx.jit(lambda v: v + 1)(x)
        print(y.tolist(), x.backend.name)
        others = ("numerix_xla", "numerix_torch", "jax", "torch")
        print(sorted(m for m in others if m in sys.modules))
        print(had_metadata or "importlib.metadata" not in sys.modules)
        print(sorted(nx.plugins.backend_entries()) == sorted(
            ep.name for ep in __import__("importlib.metadata").metadata.entry_points(
                group="numerix.plugins")))
    """)
    assert out == ["[1.0, 1.0, 1.0] binary", "[]", "True", "True"]


@pytest.mark.skipif("xla" not in plugins.backend_entries(), reason="numerix-xla not installed")
def test_a_backends_plugin_is_imported_on_its_first_use():
    out = _fresh("""
        import sys, warnings
        warnings.simplefilter("ignore")
        import numerix as nx
        nx.zeros(3)
        print("numerix_xla" in sys.modules)
        t = nx.zeros(3, backend="xla")
        print(t.backend.name, t.tolist(), "numerix_xla.plugin" in sys.modules)
        print("numerix_torch" in sys.modules)
    """)
    assert out == ["False", "xla [0.0, 0.0, 0.0] True", "False"]


def test_a_broken_plugin_of_the_project_is_reported_when_asked_for(tmp_path):
    # numerix-torch's plugin module fails at import: binary works without noticing, and
    # asking for torch raises the PluginError with the reason (found by the discovery)
    site = tmp_path / "site"
    (site / "numerix_torch").mkdir(parents=True)
    (site / "numerix_torch" / "__init__.py").write_text("")
    (site / "numerix_torch" / "plugin.py").write_text("raise RuntimeError('boom at import')\n")
    dist = site / "numerix_torch-9.9.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: numerix-torch\nVersion: 9.9\n")
    (dist / "entry_points.txt").write_text("[numerix.plugins]\ntorch = numerix_torch.plugin\n")
    out = _fresh(f"""
        import sys; sys.path.insert(0, {str(site)!r})
        import numerix as nx
        print(nx.ones(2).tolist())
        try:
            nx.zeros(3, backend="torch")
        except nx.PluginError as e:
            print(type(e).__name__, "|", " ".join(str(e).split()))
        print([b.reason for b in nx.plugins.broken_plugins() if b.name == "torch"][:1])
    """)
    assert out[0] == "[1.0, 1.0]"
    assert out[1].startswith("PluginError | ")
    assert "backend 'torch': the plugin providing it (numerix-torch) is broken" in out[1]
    assert "RuntimeError: boom at import" in out[1]
    assert out[2] == "['RuntimeError: boom at import']"


def test_settings_of_a_plugin_are_validated_when_the_configuration_names_it():
    # the environment names binary's table only: xla's and torch's plugins stay unloaded,
    # and a mistake in binary's table is still a ConfigError naming the variable
    code = """
        import sys
        import numerix as nx
        try:
            print(nx.zeros(2).tolist())
        except nx.ConfigError as e:
            print("ConfigError |", " ".join(str(e).split()))
        print(sorted(m for m in ("numerix_xla", "numerix_torch") if m in sys.modules))
    """
    ok = _fresh(code, {"NUMERIX_BACKENDS__BINARY__DEVICE": "cpu"})
    assert ok == ["[0.0, 0.0]", "[]"]
    bad = _fresh(code, {"NUMERIX_BACKENDS__BINARY__DEVISE": "cpu"})
    assert bad[0].startswith(
        "ConfigError | environment variable NUMERIX_BACKENDS__BINARY__DEVISE: "
        "backends.binary.devise: unknown key 'devise'; did you mean "
        "NUMERIX_BACKENDS__BINARY__DEVICE?"
    ), bad
    assert bad[1] == "[]"


@pytest.mark.skipif("xla" not in plugins.backend_entries(), reason="numerix-xla not installed")
def test_an_env_variable_of_an_unused_plugin_is_still_validated():
    # NUMERIX_BACKENDS__XLA__CLIENT names xla's table: its settings model is loaded to
    # check it even though only binary is used (JAX itself is not imported)
    out = _fresh(
        """
        import sys
        import numerix as nx
        try:
            nx.zeros(2)
        except nx.ConfigError as e:
            print("ConfigError |", " ".join(str(e).split()))
        print("jax" in sys.modules, "numerix_torch" in sys.modules)
        """,
        {"NUMERIX_BACKENDS__XLA__CLIENT": "nope"},
    )
    assert out[0].startswith(
        "ConfigError | environment variable NUMERIX_BACKENDS__XLA__CLIENT: backends.xla.client:"
    ), out
    assert "'nope'" in out[0]
    assert out[1] == "False False"


def test_clear_caches_drops_the_kept_scalar_operands() -> None:
    x = nx.tensor(np.array([1.0, 2.0], np.float32), backend="binary")
    got = x * 1.0001
    np.testing.assert_array_equal(got.to_numpy(), np.array([1.0, 2.0], np.float32) * 1.0001)
    kept = [k for k in _core._OPERANDS if k[0] is x.backend and k[3] == 1.0001]
    assert kept, "the operand of 1.0001 is kept after the op"
    nx.clear_caches()
    assert not any(k[0] is x.backend for k in _core._OPERANDS)
    # and the op still gives the same numbers after
    np.testing.assert_array_equal((x * 1.0001).to_numpy(), got.to_numpy())
