"""mkdocs hooks (mkdocs.yml, ``hooks:``): numerix's shape notation in the pages' prose.

numerix describes a tensor as ``f32[256][256]`` (``Tensor.describe``), and the pages
write it so. Outside code, Markdown reads ``[256][256]`` as a reference link, and the
site's cross-references (mkdocs-autorefs) then report a missing target "256", which
fails the strict build. Each such spelling outside code is shown as inline code.
"""

from __future__ import annotations

import re
from typing import Any

# a name followed by two or more bracketed sizes, indices or names: f32[4][4], x[i][j]
_SHAPE = re.compile(r"(?<![\w`\[])\w+(?:\[[\w.:+-]*\]){2,}(?![\w(\[])")
_FENCE = re.compile(r"^\s*(```|~~~)")


def shapes_as_code(markdown: str) -> str:
    """``markdown`` with each ``name[a][b]`` outside code blocks and spans as inline code."""
    out = []
    fence: str | None = None
    for line in markdown.split("\n"):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1) == fence:
                fence = None
        elif opened:
            fence = opened.group(1)
        elif not line.startswith(("    ", "\t")):
            parts = line.split("`")  # even parts are outside code spans
            for i in range(0, len(parts), 2):
                parts[i] = _SHAPE.sub(lambda m: f"`{m.group(0)}`", parts[i])
            line = "`".join(parts)
        out.append(line)
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if not page.file.src_uri.endswith(".md"):
        return markdown  # a notebook
    return shapes_as_code(markdown)
