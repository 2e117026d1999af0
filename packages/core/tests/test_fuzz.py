"""The differential fuzzer (numerix.testing.fuzz): a small fixed run on binary finds no
wrong answer or crash, and a corrupted kernel is caught."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import numerix as nx
from numerix.testing import fuzz
from numerix_binary.backend import BinaryBackend


def test_small_run_on_binary_is_clean() -> None:
    report = fuzz.fuzz("binary", examples=1000, seed=0)
    assert report.ok, report.format()
    assert report.counts["agree"] > 1000, report.format()  # eager and evaluator both ran
    assert report.counts["refused"] > 0, report.format()  # refused dtypes were drawn too


def test_every_op_family_is_drawn() -> None:
    names = {op.name for op in fuzz.OPS}
    assert len(names) == len(fuzz.OPS) >= 37
    assert {"add", "exp", "sum", "max", "matmul", "where", "pow", "sign"} <= names
    assert {"softmax", "log_softmax", "logsumexp"} <= names


class _OffByOneInAThousand(BinaryBackend):
    name = "fuzz-corrupted"

    def exp(self, out, x):  # type: ignore[no-untyped-def]
        super().exp(out, x)
        out.data = (out.data * (1 + 1e-3)).astype(out.data.dtype)
        return out


class _SoftmaxOffByOneInAThousand(BinaryBackend):
    name = "fuzz-corrupted-softmax"

    def block_softmax(self, out, x, *, axes):  # type: ignore[no-untyped-def]
        super().block_softmax(out, x, axes=axes)
        out.data = (out.data * (1 + 1e-3)).astype(out.data.dtype)
        return out


class _Crashing(BinaryBackend):
    name = "fuzz-crashing"

    def negative(self, out, x):  # type: ignore[no-untyped-def]
        raise RuntimeError("kernel failure deep inside a library")


@pytest.fixture
def corrupted() -> Iterator[None]:
    nx.register_backend("fuzz-corrupted", _OffByOneInAThousand, replace=True)
    nx.register_backend("fuzz-crashing", _Crashing, replace=True)
    nx.register_backend("fuzz-corrupted-softmax", _SoftmaxOffByOneInAThousand, replace=True)
    yield
    nx.unregister_backend("fuzz-corrupted")
    nx.unregister_backend("fuzz-corrupted-softmax")
    nx.unregister_backend("fuzz-crashing")


def _only(*names: str) -> list[fuzz.FuzzOp]:
    return [op for op in fuzz.OPS if op.name in names]


def test_a_corrupted_kernel_is_caught(corrupted: None) -> None:
    report = fuzz.fuzz("fuzz-corrupted", examples=60, seed=0, ops=_only("exp"))
    assert not report.ok
    assert report.counts["wrong"] > 0, report.format()
    assert all(c.op == "exp" for c in report.examples)
    # the same run on the correct backend agrees
    assert fuzz.fuzz("binary", examples=60, seed=0, ops=_only("exp")).ok


def test_a_corrupted_softmax_block_is_caught(corrupted: None) -> None:
    ops = _only("softmax", "log_softmax", "logsumexp")
    report = fuzz.fuzz("fuzz-corrupted-softmax", examples=60, seed=0, ops=ops)
    assert report.counts["wrong"] > 0, report.format()
    assert {c.op for c in report.examples} == {"softmax"}, report.format()
    assert fuzz.fuzz("binary", examples=60, seed=0, ops=ops).ok


def test_a_foreign_exception_is_a_crash(corrupted: None) -> None:
    report = fuzz.fuzz("fuzz-crashing", examples=30, seed=0, ops=_only("negative"), compiled=False)
    assert report.counts["crash"] > 0, report.format()
    assert "RuntimeError" in report.examples[0].detail


def test_stop_on_failure_raises_a_shrunk_case(corrupted: None) -> None:
    with pytest.raises(AssertionError, match=r"^wrong: exp "):
        fuzz.fuzz("fuzz-corrupted", examples=60, seed=0, ops=_only("exp"), stop_on_failure=True)


def test_known_differences_are_not_agreement() -> None:
    # a subnormal flushed to zero matches numpy only once flushed: known on xla, wrong elsewhere
    op = _only("multiply")[0]
    x, y = np.array([1e-40, 1.0], np.float32), np.array([1e38, 2.0], np.float32)
    flushed = nx.tensor(np.array([0.0, 2.0], np.float32))  # 1e-40 read as 0: 0 * 1e38
    args = ([x, y], nx.float32, {}, flushed)
    assert fuzz._judge(op, *args, "xla") == ("known", "subnormals flushed (xla)")
    assert fuzz._judge(op, *args, "binary")[0] == "wrong"


def test_one_operand_flushed_is_known_on_xla() -> None:
    # XLA can flush the dividend's subnormal and not the divisor's: 5e-324 / 1e-320 read
    # as 0 / 1e-320 = 0, where flushing both gives nan and numpy 0.494
    op = _only("divide")[0]
    x, y = np.array([5e-324, 1.0]), np.array([1e-320, 2.0])
    got = nx.tensor(np.array([0.0, 0.5]))
    assert fuzz._judge(op, [x, y], nx.float64, {}, got, "xla") == (
        "known",
        "subnormals flushed (xla)",
    )
    # a value no flushing gives is still wrong
    off = nx.tensor(np.array([1.0, 0.5]))
    assert fuzz._judge(op, [x, y], nx.float64, {}, off, "xla")[0] == "wrong"


def test_bfloat16_subnormals_flush_on_xla() -> None:
    # bfloat16 shares float32's exponent: 1e-39 is subnormal there, and XLA flushes it
    op = _only("logical_not")[0]
    a = np.array([1e-39, 1.0], np.float32).astype(nx.bfloat16.numpy_dtype)
    got = nx.tensor(np.array([True, False]))
    assert fuzz._judge(op, [a], nx.bfloat16, {}, got, "xla") == (
        "known",
        "subnormals flushed (xla)",
    )
    assert fuzz._judge(op, [a], nx.bfloat16, {}, got, "binary")[0] == "wrong"


def test_float32_log_of_a_subnormal_is_known_on_xla() -> None:
    op = _only("log")[0]
    a = np.array([1e-40, 1.0], np.float32)
    got = nx.tensor(np.array([-103.97208, 0.0], np.float32))
    assert fuzz._judge(op, [a], nx.float32, {}, got, "xla") == (
        "known",
        "float32 log of a subnormal (xla)",
    )
    other = nx.tensor(np.array([-50.0, 0.0], np.float32))
    assert fuzz._judge(op, [a], nx.float32, {}, other, "xla")[0] == "wrong"


def test_each_element_is_explained_on_its_own() -> None:
    # sign of a complex: a flushed subnormal imaginary part in one element and a complex
    # infinity in another; neither reading alone explains the whole result
    op = _only("sign")[0]
    z = np.array([-7.41691286169067e-309j, np.inf - 1j, 1 + 1j])
    got = nx.sign(nx.tensor(np.array([0j, np.inf - 1j, 1 + 1j]))).to_numpy().copy()
    assert fuzz._judge(op, [z], nx.complex128, {}, nx.tensor(got), "xla")[0] == "known"
    # the same result on a backend that does not flush: the subnormal element is wrong
    assert fuzz._judge(op, [z], nx.complex128, {}, nx.tensor(got), "binary")[0] == "wrong"


def test_complex_sign_past_the_largest_magnitude_is_known() -> None:
    # |max + max j| overflows: numpy answers 1j, numerix (as JAX and torch) 0
    op = _only("sign")[0]
    big = np.finfo(np.float64).max
    z = np.array([big + big * 1j, 3 + 4j])
    got = nx.sign(nx.tensor(z))
    assert fuzz._judge(op, [z], nx.complex128, {}, got, "binary") == (
        "known",
        "complex magnitude past the largest finite value",
    )
    wrong = nx.tensor(np.array([0j, 0j]))
    assert fuzz._judge(op, [z], nx.complex128, {}, wrong, "binary")[0] == "wrong"


def test_main_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert fuzz.main(["binary", "--examples", "20", "--seed", "1", "--eager-only"]) == 0
    assert "numerix fuzz on binary" in capsys.readouterr().out


def test_overflow_boundary_of_an_accumulation_is_known() -> None:
    # 3.249e291 * 5.533e16 is within an ulp of float64's largest value: numpy's matrix-
    # vector product stays finite, its own dot of the same row overflows to inf
    op = _only("matmul")[0]
    a = np.array([[5.533057103324656e16, 0.0, -3.2490052086795447e291], [0.0, 0.0, 0.0]])
    b = np.array([-3.6761722323592e274, 0.0, -5.533057103324655e16])
    inf = nx.tensor(np.array([np.inf, 0.0]))
    assert fuzz._judge(op, [a, b], nx.float64, {}, inf, "torch") == (
        "known",
        "accumulation order at the overflow boundary",
    )
    # far from the boundary the same difference is a wrong answer
    small = [np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]), np.array([1.0, 1.0, 1.0])]
    assert fuzz._judge(op, small, nx.float64, {}, inf, "torch")[0] == "wrong"


def test_cancellation_in_a_sum_is_held_to_the_terms_size() -> None:
    # float32 sums of -2**31, 2**31 - 1 (2**31 in float32), 0, 0, 1 give 1 or 0 by order:
    # 0.2 off in a mean of terms of 2**31 is rounding, not a wrong answer
    op = _only("mean")[0]
    a = np.array([-(2**31), 2**31 - 1, 0, 0, 1], np.int32)
    zero = nx.tensor(np.float32(0.0))
    assert fuzz._judge(op, [a], nx.int32, {"axis": None, "keepdims": False}, zero, "torch")[0] == (
        "agree"
    )
    # the same error on small terms is wrong
    b = np.array([-2, 1, 0, 0, 1], np.int32)
    half = nx.tensor(np.float32(0.5))
    assert fuzz._judge(op, [b], nx.int32, {"axis": None, "keepdims": False}, half, "torch")[0] == (
        "wrong"
    )


def test_complex_power_beyond_precision_is_known() -> None:
    # (2.00001 + 0j) ** (-3.26e16j): the phase is 3.26e16 * log(2.00001) radians, far past
    # what float32 (or any float) resolves; a moderate exponent must still agree
    op = _only("pow")[0]
    a = np.array([2.0000100135803223 + 0j], np.complex64)
    b = np.array([-3.2633490080006144e16j], np.complex64)
    other = nx.tensor(np.array([0.6 + 0.8j], np.complex64))  # a unit, another phase
    assert fuzz._judge(op, [a, b], nx.complex64, {}, other, "torch") == (
        "known",
        "complex power beyond its precision",
    )
    a2, b2 = np.array([2 + 0j], np.complex64), np.array([3j], np.complex64)
    assert fuzz._judge(op, [a2, b2], nx.complex64, {}, other, "torch")[0] == "wrong"


def test_overflowing_terms_meeting_an_infinity_are_known() -> None:
    # 1.99e33 * -1.73e16 overflows float32: rounded, it is -inf and meets the inf of
    # another term as nan (torch); fused into a multiply-add it stays finite and the sum
    # is inf (numpy's matrix product, found by the fuzzer); with small terms nan is wrong
    op = _only("matmul")[0]
    a = np.array(
        [
            [-10027008.0, -1.1754943508222875e-38, 3003121664.0],
            [-5.910974510923776e16, 4.391009636686234e16, 1.9876761411578637e33],
        ],
        np.float32,
    )
    b = np.array(
        [[-4.081387162304512e16, -0.0, -0.0, np.nan],
         [np.inf, 2.25, 0.0, 4960996464525312.0],
         [-1.7310711067705344e16, 5.960464477539063e-08, 0.0, -4.5069136732082304e36]],
        np.float32)  # fmt: skip
    torch_result = np.array(
        [[-np.inf, 179.0, 0.0, np.nan], [np.nan, 1.1847473032223366e26, 0.0, np.nan]], np.float32
    )
    got = nx.tensor(torch_result)
    assert fuzz._judge(op, [a, b], nx.float32, {}, got, "torch") == (
        "known",
        "accumulation order at the overflow boundary",
    )
    small = [a / np.float32(1e30), b]
    assert fuzz._judge(op, small, nx.float32, {}, got, "torch")[0] == "wrong"
