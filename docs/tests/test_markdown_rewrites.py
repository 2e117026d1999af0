"""What the site rewrites before Markdown reads it. The API reference's reST docstrings
(docs/griffe_docstrings.py): examples and literal blocks become code blocks, roles inline
code, several-name and Google-style parameters ``:param:`` fields, which go after the
text. The pages (docs/hooks.py): numerix's shape notation in prose becomes inline code."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from griffe_docstrings import markdown
from hooks import shapes_as_code


def test_examples_become_code_blocks_and_fields_go_last() -> None:
    doc = """Sum over ``axis``, as :func:`numerix.add` would.

:param x: the tensor.
:param axis, keepdims: as :func:`numerix.max`.

>>> nx.sum(nx.tensor([[1, 2], [3, 4]]), axis=0).tolist()
[4, 6]

Mismatched sizes raise::

    nx.dot(a, b)  # ShapeError

The end."""
    assert markdown(doc).splitlines() == [
        "Sum over ``axis``, as `numerix.add` would.",
        "",
        "```pycon",
        ">>> nx.sum(nx.tensor([[1, 2], [3, 4]]), axis=0).tolist()",
        "[4, 6]",
        "```",
        "",
        "Mismatched sizes raise:",
        "",
        "```python",
        "nx.dot(a, b)  # ShapeError",
        "```",
        "",
        "The end.",
        "",
        ":param x: the tensor.",
        ":param axis: as `numerix.max`.",
        ":param keepdims: as `numerix.max`.",
    ]


def test_a_google_args_section_becomes_fields() -> None:
    doc = "Softmax.\n\nArgs:\n    x: the tensor.\n    axis: an int,\n        or None.\n"
    assert markdown(doc).splitlines() == [
        "Softmax.",
        "",
        ":param x: the tensor.",
        ":param axis: an int,",
        "    or None.",
    ]


def test_a_role_that_starts_a_line_stays_in_place() -> None:
    doc = "Subclasses set a table of\n:class:`numerix.backend.Option` values.\n\n:param x: the tensor."
    assert markdown(doc).splitlines() == [
        "Subclasses set a table of",
        "`numerix.backend.Option` values.",
        "",
        ":param x: the tensor.",
    ]


def test_shapes_in_prose_become_code() -> None:
    page = """on torch f32[4][4] it cost 11x (f32[256][256], and x[i][j]).

Already `f32[2][3]` code, a [link][ref] and [[1, 2], [3, 4]] stay.

```python
y = x[0][1]
```"""
    assert shapes_as_code(page).splitlines() == [
        "on torch `f32[4][4]` it cost 11x (`f32[256][256]`, and `x[i][j]`).",
        "",
        "Already `f32[2][3]` code, a [link][ref] and [[1, 2], [3, 4]] stay.",
        "",
        "```python",
        "y = x[0][1]",
        "```",
    ]
