"""A small fixed run of the differential fuzzer (numerix.testing.fuzz) on torch, eager and
under every compiler serving it: no wrong answer, no foreign exception. The release run
is `nox -s fuzz -- torch --examples 100000`."""

from numerix.testing.fuzz import fuzz


def test_small_fuzz_run_is_clean() -> None:
    report = fuzz("torch", examples=400, seed=0)
    assert report.ok, report.format()
    assert report.counts["agree"] > 400, report.format()
