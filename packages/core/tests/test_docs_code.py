"""Every Python code block of the docs runs, so a page cannot go stale.

The pages are ``docs/*.md``, the README and each package's README. Each ```` ```python ```` block of a page is
one test, ``docs/PAGE.md:LINE``; the blocks of one page share a namespace and run in
order, in an empty working directory with no numerix variable and the default
settings (as a reader starting fresh), on one pytest-xdist worker.

- Expected output: a ```` ```text ```` or ```` ```console ```` block right after a Python
  block (nothing but blank lines between) is what the block prints (in a console
  block, the lines that are not ``$ command`` lines); a block written as a ``>>>``
  session is run as a doctest. Both compare with doctest's rules (``...`` stands for
  any text, runs of white space are equal).
- ```` ```python own-process ```` marks a block that runs in a fresh interpreter, after
  the page's other ``own-process`` blocks before it (one program): for code that must
  come first in its process (``XLA_FLAGS`` set before JAX starts).
- ```` ```python no-run ```` marks a block that must not run (it needs a GPU, it is a
  sketch): it is reported as skipped "no-run by design", and counted.
- A block that uses the xla or torch backend (it names ``"xla"``/``"torch"`` as a
  backend or compiler, imports jax or torch, or says ``needs=numerix-xla`` in its fence
  line) runs where that package is installed; elsewhere it is reported as skipped
  "not run: needs numerix-xla" (every package is installed on CI's 3.11 step, where
  every block runs).
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import subprocess
import sys
import textwrap
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
PAGES = [
    *sorted((REPO / "docs").glob("*.md")),
    REPO / "README.md",
    *sorted((REPO / "packages").glob("*/README.md")),
]

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)(?P<info>[^\n`]*)$")
#: a backend or compiler named in a string ("xla", 'torch:cuda'), or its library imported
_NEEDS = {
    "numerix-xla": re.compile(r"""["']xla(:[^"']*)?["']|^\s*(import|from) jax\b""", re.M),
    "numerix-torch": re.compile(r"""["']torch(:[^"']*)?["']|^\s*(import|from) torch\b""", re.M),
}
_CHECKER = doctest.OutputChecker()
_OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    info: list[str]
    source: str
    expected: str | None = None  # the output block right after, if any
    needs: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(REPO).as_posix()}:{self.line}"


def parse(page: Path, text: str | None = None) -> list[Block]:
    """The Python blocks of ``page`` (or of ``text``, as that page), in order, each with
    the output block that follows it."""
    lines = (page.read_text(encoding="utf-8") if text is None else text).splitlines()
    blocks: list[Block] = []
    ends: list[int] = []  # the line index after each block's closing fence
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = len(m["indent"]), m["fence"]
        words = m["info"].strip().split()
        body = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        blocks.append(
            Block(page, i + 1, words[0].lower() if words else "", words[1:], "\n".join(body))
        )
        ends.append(j + 1)
        i = j + 1
    for n, b in enumerate(blocks[:-1]):
        nxt = blocks[n + 1]
        between = lines[ends[n] : nxt.line - 1]
        if (
            b.lang == "python"
            and nxt.lang in ("text", "console")
            and not any(s.strip() for s in between)
        ):
            out = nxt.source
            if nxt.lang == "console":
                out = "\n".join(s for s in out.splitlines() if not s.startswith("$"))
            b.expected = out
    for b in blocks:
        if b.lang == "python":
            named = [w.removeprefix("needs=") for w in b.info if w.startswith("needs=")]
            found = [dist for dist, rx in _NEEDS.items() if rx.search(b.source)]
            b.needs = sorted(set(named + found))
    return [b for b in blocks if b.lang == "python"]


def _installed(dist: str) -> bool:
    try:
        metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return False
    return True


BLOCKS = [b for page in PAGES for b in parse(page)]


# ---------------------------------------------------------------- one page's state
class _Page:
    """The namespace the blocks of one page share, and what they changed, undone after
    the page's last block."""

    def __init__(self, page: Path, tmp: Path) -> None:
        self.page = page
        self.namespace: dict[str, Any] = {"__name__": f"docs_{page.stem.replace('-', '_')}"}
        self.tmp = tmp
        self.not_run: list[str] = []
        self.done: set[int] = set()  # lines of the blocks run (or not run, with a reason)


_PAGES: dict[Path, _Page] = {}


@contextlib.contextmanager
def _fresh_reader(tmp: Path) -> Iterator[None]:
    """No numerix variable, an empty working directory and user config, the default
    backend unset; the backends and compilers registered by a block are removed after."""
    from numerix import configuration, plugins
    from numerix.configuration import _state as config_state

    saved_env = {k: v for k, v in os.environ.items() if _numerix_var(k)}
    for k in saved_env:
        del os.environ[k]
    saved_xdg = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(tmp / "xdg")
    cwd = os.getcwd()
    os.chdir(tmp)
    plugins._REG.discover()  # before the snapshot: what a block registers is what is new
    backends, compilers = dict(plugins._REG.entries), dict(plugins._REG.compilers)
    settings = dict(plugins._REG.runtime_settings)
    global_before = configuration._global_default
    token = configuration._context_default.set(None)
    configuration._global_default = None
    config_state.base = config_state.base_backend = None
    try:
        yield
    finally:
        os.chdir(cwd)
        for k in [k for k in os.environ if _numerix_var(k)]:
            del os.environ[k]
        os.environ.update(saved_env)
        if saved_xdg is None:
            os.environ.pop("XDG_CONFIG_HOME", None)
        else:
            os.environ["XDG_CONFIG_HOME"] = saved_xdg
        for name in set(plugins._REG.entries) - set(backends):
            plugins.unregister_backend(name)
        for name in set(plugins._REG.compilers) - set(compilers):
            plugins.unregister_compiler(name)
        for name in set(plugins._REG.runtime_settings) - set(settings):
            plugins.unregister_settings_model(name)
        configuration._context_default.reset(token)
        configuration._global_default = global_before
        config_state.base = config_state.base_backend = None


def _numerix_var(k: str) -> bool:
    return k.upper().startswith("NUMERIX_") or k.upper() in ("XLA_TARGET", "LIBTORCH_TARGET")


def _run(block: Block, namespace: dict[str, Any]) -> str:
    """Run ``block`` in ``namespace``; returns what it printed. A doctest-style block
    is checked here (it carries its own expected output)."""
    source = textwrap.dedent(block.source)
    if re.search(r"^\s*>>> ", source, re.M):
        test = doctest.DocTestParser().get_doctest(source, namespace, block.id, str(block.page), 0)
        test.lineno = block.line  # failures name the page's line
        out = io.StringIO()
        runner = doctest.DocTestRunner(optionflags=_OPTIONS)
        runner.run(test, out=out.write, clear_globs=False)
        if runner.failures:
            pytest.fail(f"{block.id}: the doctest's output differs:\n{out.getvalue()}", False)
        return ""
    code = compile(source, f"{block.id}", "exec")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(code, namespace)
    return buf.getvalue()


def check(block: Block, namespace: dict[str, Any]) -> None:
    """Run ``block`` in ``namespace``; fail (naming the page's line) if it raises or
    prints other than the page shows."""
    tb = None
    try:
        printed = _run(block, namespace)
    except Exception:
        tb = traceback.format_exc(limit=-4)
    if tb is not None:
        pytest.fail(f"{block.id}: the block raised:\n{tb}", False)
    if block.expected is not None and not _CHECKER.check_output(
        block.expected.strip() + "\n", printed.strip() + "\n", _OPTIONS
    ):
        pytest.fail(
            f"{block.id}: the block printed\n{printed}\nwhere the page shows\n{block.expected}",
            False,
        )


@pytest.mark.parametrize(
    "block",
    [
        pytest.param(b, id=b.id, marks=pytest.mark.xdist_group(f"docs-{b.page.name}"))
        for b in BLOCKS
    ],
)
def test_docs_code_block(block: Block, tmp_path_factory: pytest.TempPathFactory) -> None:
    page = _PAGES.get(block.page)
    if page is None:
        page = _PAGES[block.page] = _Page(block.page, tmp_path_factory.mktemp(block.page.stem))
    blocks = [b for b in BLOCKS if b.page == block.page]
    try:
        # the blocks before it that did not run in this session (a -k selection): first
        for b in blocks[: blocks.index(block)]:
            if b.line not in page.done:
                _run_or_say_why_not(b, page)
        why = _run_or_say_why_not(block, page)
        if why is not None:
            pytest.skip(why)
    finally:
        if block is blocks[-1]:
            _PAGES.pop(block.page, None)


def _run_or_say_why_not(block: Block, page: _Page) -> str | None:
    """Run and check ``block``; or return why it is not run (the page says no-run, it
    needs a package not installed here, or it follows such a block)."""
    page.done.add(block.line)
    if "no-run" in block.info:
        return "no-run by design (the page marks this block as not to be run)"
    missing = [d for d in block.needs if not _installed(d)]
    if missing:
        page.not_run.append(block.id)
        return f"not run: needs {', '.join(missing)} (not installed here)"
    if page.not_run:
        return f"not run: it follows {page.not_run[0]}, which needs a package not installed"
    if "own-process" in block.info:
        check_in_own_process(block, page.tmp)
        return None
    with _fresh_reader(page.tmp):
        check(block, page.namespace)
    return None


_MARK = "\x00--- numerix docs block ---\x00"


def check_in_own_process(block: Block, tmp: Path) -> None:
    """Run ``block`` in a fresh interpreter after the page's ``own-process`` blocks before
    it (one program, as a reader runs the page: a block that must come first in its
    process, such as one setting XLA_FLAGS before JAX starts); check what it printed."""
    chain = [b for b in BLOCKS if b.page == block.page and "own-process" in b.info
             and b.line <= block.line]  # fmt: skip
    source = f"\nprint({_MARK!r})\n".join(b.source for b in chain)
    env = {k: v for k, v in os.environ.items() if not _numerix_var(k) and k != "XLA_FLAGS"}
    env["XDG_CONFIG_HOME"] = str(tmp / "xdg")
    run = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                         cwd=tmp, env=env, timeout=600)  # fmt: skip
    if run.returncode != 0:
        pytest.fail(f"{block.id}: the block raised:\n{run.stderr[-3000:]}", False)
    printed = run.stdout.split(_MARK + "\n")[-1]
    if block.expected is not None and not _CHECKER.check_output(
        block.expected.strip() + "\n", printed.strip() + "\n", _OPTIONS
    ):
        pytest.fail(
            f"{block.id}: the block printed\n{printed}\nwhere the page shows\n{block.expected}",
            False,
        )


# ---------------------------------------------------------------- the collector itself
def test_parse_pairs_blocks_with_their_output(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text(
        "# t\n\n```python\nprint(1)\n```\n\n```text\n1\n```\n\ntext\n\n"
        "```python no-run\nimport torch\n```\n\nprose\n\n```console\n$ x\n```\n\n"
        "```python\nx = nx.tensor([1], backend='xla:cuda')\n```\n"
        "```console\n$ python a.py\nok\n```\n"
    )
    blocks = parse(page)
    assert [(b.line, b.info, b.expected, b.needs) for b in blocks] == [
        (3, [], "1", []),
        (13, ["no-run"], None, ["numerix-torch"]),  # prose between: no expected output
        (23, [], "ok", ["numerix-xla"]),
    ]


def test_every_page_with_python_is_collected() -> None:
    pages = {b.page.name for b in BLOCKS}
    assert {"defn.md", "write-a-backend.md", "guide-three-backends.md"} <= pages


def test_a_block_that_prints_otherwise_or_raises_fails() -> None:
    blocks = parse(REPO / "docs" / "_probe.md", _PROBE)  # no such file: the text is here
    ns: dict[str, Any] = {}
    check(blocks[0], ns)  # prints what the page shows ("..." is any text)
    assert ns["nx"].__name__ == "numerix"
    for bad in blocks[1:]:
        with pytest.raises(pytest.fail.Exception, match=rf"_probe.md:{bad.line}: the "):
            check(bad, ns)


_PROBE = """
```python
import numerix as nx
print(nx.tensor([1.0, 2.0]).tolist(), nx.get_default_backend())
```
```text
[1.0, 2.0] binary(...)
```

```python
print(nx.tensor([1, 2]).tolist())
```
```text
[1, 3]
```

```python
>>> nx.tensor([1.0]).tolist()
[2.0]
```

```python
nx.no_such_function()
```
"""
