"""Run the array API conformance suite (data-apis/array-api-tests) against numerix on one
backend, with that backend's expected failures.

    python tools/array_api_tests.py binary                    # the whole suite
    python tools/array_api_tests.py torch --max-examples 20 -- -k linalg

The suite is not part of this repository: a pinned copy lies beside it, in
``../shared/array-api-tests`` (or where ``ARRAY_API_TESTS_DIR`` says). It runs with
``ARRAY_API_TESTS_MODULE=numerix``, the backend chosen by ``NUMERIX_DEFAULT_BACKEND``
(xla with JAX's 64-bit mode allowed: the standard's default integer is int64), and
hypothesis's example database in a temporary directory, so nothing is written into the
suite's folder; the draws are the same every run (``--random`` for new ones).

The expected failures are ``conformance/array-api/<backend>.txt``: one test id per line
(the suite's, parameters included), each followed by two spaces, ``# `` and its reason
(an entry without one is refused). They are the
suite's "xfails": a listed test that fails is expected, one that passes is reported as
XPASS (not an error: the suite's hypothesis draws vary). The last lines printed are the
pass counts that docs/array-api.md quotes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BACKENDS = ("binary", "xla", "torch")


def suite_dir() -> Path:
    where = os.environ.get("ARRAY_API_TESTS_DIR")
    path = Path(where) if where else ROOT.parent / "shared" / "array-api-tests"
    if not (path / "array_api_tests").is_dir():
        sys.exit(
            f"array_api_tests: the conformance suite is not at {path}; set ARRAY_API_TESTS_DIR "
            f"to a checkout of data-apis/array-api-tests (with its array-api submodule)"
        )
    return path


def expected_failures(backend: str) -> list[str]:
    """The ids of ``conformance/array-api/<backend>.txt``, each checked to carry a reason."""
    path = ROOT / "conformance" / "array-api" / f"{backend}.txt"
    ids = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        test_id, sep, reason = text.rpartition("  # ")
        if not sep or not reason.strip() or not test_id.startswith("array_api_tests/"):
            sys.exit(
                f"{path}:{n}: an entry is a test id, two spaces, '# ' and its reason: {line!r}"
            )
        ids.append(test_id.strip())
    return ids


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], epilog="arguments after -- go to pytest"
    )
    parser.add_argument("backend", choices=BACKENDS)
    parser.add_argument("--max-examples", type=int, default=50, help="hypothesis examples per test")
    parser.add_argument("-n", "--workers", default="2", help="pytest-xdist workers (0: none)")
    parser.add_argument(
        "--random", action="store_true",
        help="new hypothesis draws each run (default: the same draws every run, as CI wants)",
    )  # fmt: skip
    argv = sys.argv[1:] if argv is None else argv
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    args.pytest_args = argv[cut + 1 :]  # after --: passed to pytest
    where = suite_dir()
    with tempfile.TemporaryDirectory(prefix="numerix-array-api-") as tmp:
        xfails = Path(tmp) / "xfails.txt"
        xfails.write_text("\n".join(expected_failures(args.backend)) + "\n")
        env = {
            **os.environ,
            "ARRAY_API_TESTS_MODULE": "numerix",
            "NUMERIX_DEFAULT_BACKEND": args.backend,
            "HYPOTHESIS_STORAGE_DIRECTORY": str(Path(tmp) / "hypothesis"),
        }
        if args.backend == "xla":
            env["NUMERIX_BACKENDS__XLA__X64"] = "1"
        command = [
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
            *([] if any(a.startswith("array_api_tests") for a in args.pytest_args)
              else ["array_api_tests"]),
            "-q", "-rfE", "--tb=short", f"--max-examples={args.max_examples}",
            "--hypothesis-disable-deadline", "--xfails-file", str(xfails),
            *([] if args.random else ["--hypothesis-derandomize"]),
            *([] if args.workers == "0" else ["-n", args.workers]), *args.pytest_args,
        ]  # fmt: skip
        return subprocess.run(command, cwd=where, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
