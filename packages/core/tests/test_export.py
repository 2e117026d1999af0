"""numerix.export / load_exported: numerix's envelope (the signature, the checks on
reading it) through a small exporting compiler that needs no JAX or PyTorch. The xla
and torch compilers' payloads are checked by the kit (numerix.testing.suite.export)."""

from __future__ import annotations

import collections
import hashlib
import json
import struct
import subprocess
import sys

import numpy as np
import pytest

import numerix as nx
from numerix.compiler import Compiler
from numerix.defn.exporting import MAGIC, exported_signature
from numerix.defn.replay import runner
from numerix.plugins import register_compiler, unregister_compiler

# the payload names a numpy function applied leaf by leaf to the flattened arguments
_FUNCS = {"add": np.add, "multiply": np.multiply}


class Elementwise(Compiler):
    """Exports graphs of one binary element-wise op on the first two arguments."""

    name = "test-export"
    backend = "binary"
    exports = True

    def compile(self, graph, args_spec, options):  # pragma: no cover - export only
        raise NotImplementedError

    def export(self, graph, args_spec, options):
        (node,) = [n for n in graph.nodes if n.op not in ("parameter", "constant")]
        return json.dumps({"op": node.op}).encode()

    def load_exported(self, payload, args_spec, outputs, backend):
        fn = _FUNCS[json.loads(payload)["op"]]
        return runner(lambda a, b, *_: fn(a, b), list(outputs), backend, args_spec, bare=True)


@pytest.fixture(autouse=True)
def _compiler():
    register_compiler("test-export", Elementwise, replace=True)
    yield
    unregister_compiler("test-export")


def _envelope(data: bytes) -> tuple[dict, bytes]:
    (n,) = struct.unpack_from("<Q", data, len(MAGIC))
    start = len(MAGIC) + 8
    return json.loads(data[start : start + n]), data[start + n :]


def _rebuild(header: dict, payload: bytes, *, checksum: bool = True) -> bytes:
    if checksum:
        header = {
            **header,
            "payload": {"bytes": len(payload), "sha256": hashlib.sha256(payload).hexdigest()},
        }
    head = json.dumps(header).encode()
    return MAGIC + struct.pack("<Q", len(head)) + head + payload


def _exported() -> bytes:
    def f(d, y):
        return {"sum": d["x"][0] + y, "none": None}

    return nx.export(f, {"x": [nx.template((2, 3), nx.int32)]}, nx.template((3,), nx.int32),
                     compiler="test-export")  # fmt: skip


def test_round_trip_keeps_trees_types_and_values() -> None:
    data = _exported()
    assert data.startswith(MAGIC)
    program = nx.load_exported(data)
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    y = np.array([10, 20, 30], np.int32)
    out = program({"x": [nx.tensor(x)]}, nx.tensor(y))
    assert set(out) == {"sum", "none"} and out["none"] is None
    t = out["sum"]
    assert t.dtype is nx.int32 and t.shape == (2, 3) and t.backend.name == "binary"
    np.testing.assert_array_equal(t.to_numpy(), x + y, strict=True)
    assert (
        repr(program) == "<numerix exported program f({'x': [s32[2][3]]}, s32[3]) on binary(cpu)>"
    )
    assert program.compiler == "test-export" and program.backend.name == "binary"
    # a Python number is a 0-d argument of the default dtype
    p2 = nx.load_exported(nx.export(lambda a, b: a * b, nx.template((2,)), 2.0,
                                    compiler="test-export"))  # fmt: skip
    got = p2(nx.tensor(np.array([1.5, 2.0], np.float32)), 3.0)
    np.testing.assert_array_equal(got.to_numpy(), np.array([4.5, 6.0], np.float32), strict=True)


def test_signature_reads_the_header_alone() -> None:
    sig = exported_signature(_exported())
    assert sig["name"] == "f" and sig["compiler"] == "test-export"
    assert sig["numerix"] == nx.__version__
    assert repr(sig["inputs"]) == "({'x': [Template<s32[2][3]>]}, Template<s32[3]>)"
    assert repr(sig["outputs"]) == "{'sum': Template<s32[2][3]>, 'none': None}"


def test_calls_of_another_signature_are_refused() -> None:
    program = nx.load_exported(_exported())
    x, y = nx.zeros((2, 3), dtype=nx.int32), nx.zeros((3,), dtype=nx.int32)
    with pytest.raises(nx.TracingError, match=r"exported for arguments \(s32\[2\]\[3\], s32\[3\]"):
        program({"x": [x]}, nx.zeros((3,), dtype=nx.float32))
    with pytest.raises(nx.TracingError, match="export the function again"):
        program({"x": x}, y)


def test_compilers_that_do_not_export_are_refused_naming_those_that_do() -> None:
    f = nx.jit(lambda x: x + 1, compiler="evaluator")
    with pytest.raises(nx.ArgumentError, match=r"'evaluator' cannot export.*test-export"):
        nx.export(f, nx.template((2,)))
    with pytest.raises(nx.ArgumentError, match="'evaluator' cannot export"):
        nx.export(lambda x: x, nx.template((2,)), compiler="evaluator")


def test_what_export_cannot_write_is_refused() -> None:
    g = nx.jit(lambda x, n: x * n, static_argnames=("n",), compiler="test-export")
    with pytest.raises(nx.ArgumentError, match=r"static arguments \['n'\].*functools.partial"):
        nx.export(g, nx.template((2,)))
    Pair = collections.namedtuple("Pair", "a b")
    with pytest.raises(nx.ArgumentError, match="a Pair in the arguments"):
        nx.export(lambda p: p.a + p.b, Pair(nx.template((2,)), nx.template((2,))),
                  compiler="test-export")  # fmt: skip
    with pytest.raises(nx.ArgumentError, match="a dict key is a tuple"):
        nx.export(lambda d: d[(1, 2)] + 1, {(1, 2): nx.template((2,))}, compiler="test-export")


def test_load_refuses_what_is_not_an_intact_program(tmp_path) -> None:
    data = _exported()
    header, payload = _envelope(data)
    cases = {
        "not a numerix exported program": b"PK\x03\x04" + data[4:],
        "truncated": data[: len(MAGIC) + 3],
        "truncated or padded .*12 bytes": data[:-1],
        "truncated or padded .*14 bytes": data + b"\0",
        "checksum does not match": data[:-1] + bytes([data[-1] ^ 1]),
        "not valid JSON": MAGIC + struct.pack("<Q", 3) + b"{x]" + payload,
        "lacks fields": _rebuild({k: v for k, v in header.items() if k != "outputs"}, payload),
        "format 2 by numerix 9.0": _rebuild({**header, "format": 2, "numerix": "9.0"}, payload),
        "dtype 'float8'": _rebuild({**header, "inputs": [[[3], "float8"]] * 2}, payload),
        "tree .* is malformed": _rebuild({**header, "in_tree": {"set": []}}, payload),
        "trees and types disagree": _rebuild({**header, "inputs": [[[3], "int32"]]}, payload),
        "compiler or name is not a string": _rebuild({**header, "name": 3}, payload),
    }
    for message, bad in cases.items():
        with pytest.raises(nx.FileFormatError, match=message):
            nx.load_exported(bad)
    with pytest.raises(nx.FileFormatError, match="cannot read the file"):
        nx.load_exported(tmp_path / "missing.nxp")
    with pytest.raises(nx.ArgumentError, match="got int"):
        nx.load_exported(3)
    # a compiler that is not installed is named, with those that are
    with pytest.raises(nx.ArgumentError, match=r"no compiler named 'gone'.*evaluator"):
        nx.load_exported(_rebuild({**header, "compiler": "gone"}, payload))


def test_bytes_and_paths_load_alike(tmp_path) -> None:
    data = _exported()
    path = tmp_path / "f.nxp"
    path.write_bytes(data)
    for source in (data, bytearray(data), memoryview(data), path, str(path)):
        program = nx.load_exported(source)
        out = program({"x": [nx.ones((2, 3), dtype=nx.int32)]}, nx.ones((3,), dtype=nx.int32))
        np.testing.assert_array_equal(out["sum"].to_numpy(), np.full((2, 3), 2, np.int32))


def test_dict_keys_of_one_type_or_mixed_and_in_any_order() -> None:
    # str or int keys are read without optree, a mix through it; a call may give a
    # dict's keys in another order, and results come back in the exported order
    for keys in ((1, 0), ("b", "a"), (1, "a")):

        def f(d, keys=keys):
            return {keys[0]: d[keys[0]] + d[keys[1]]}

        data = nx.export(f,
                         {k: nx.template((2,), nx.int32) for k in keys},
                         compiler="test-export")  # fmt: skip
        program = nx.load_exported(data)
        a, b = nx.tensor(np.array([1, 2], np.int32)), nx.tensor(np.array([10, 20], np.int32))
        out = program({keys[1]: b, keys[0]: a})
        assert list(out) == [keys[0]]
        np.testing.assert_array_equal(out[keys[0]].to_numpy(), np.array([11, 22], np.int32))
        with pytest.raises(nx.TracingError, match="export the function again"):
            program({keys[0]: a})


_NO_OPTREE = """
import sys
import numpy as np
import numerix as nx
from numerix.compiler import Compiler
from numerix.defn.replay import runner

class Add(Compiler):
    name, backend, exports = "add-export", "binary", True
    def compile(self, graph, args_spec, options):
        raise NotImplementedError
    def load_exported(self, payload, args_spec, outputs, backend):
        return runner(lambda a, b: np.add(a, b), list(outputs), backend, args_spec, bare=True)

from numerix.plugins import register_compiler
register_compiler("add-export", Add)
program = nx.load_exported(bytes.fromhex(sys.argv[1]))
got = program({"x": [nx.tensor(np.int32([1, 2]))], "y": nx.tensor(np.int32([3, 4]))})
print(got.tolist(), "optree" in sys.modules)
"""


def test_a_program_of_built_in_trees_loads_and_runs_without_optree() -> None:
    class Add(Elementwise):
        name = "add-export"

    register_compiler("add-export", Add, replace=True)
    try:
        data = nx.export(lambda d: d["x"][0] + d["y"],
                         {"x": [nx.template((2,), nx.int32)], "y": nx.template((2,), nx.int32)},
                         compiler="add-export")  # fmt: skip
    finally:
        unregister_compiler("add-export")
    run = subprocess.run([sys.executable, "-W", "ignore", "-c", _NO_OPTREE, data.hex()],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["[4,", "6]", "False"]
