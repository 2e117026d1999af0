"""How the API reference reads numerix's docstrings (a griffe extension, named in
mkdocs.yml's mkdocstrings options).

The docstrings are reST in the Sphinx manner: ``:param x:`` fields, ``>>>`` examples
(which run as doctests), ``Name::`` literal blocks and ``:func:`name``` roles. Before
griffe's Sphinx parser reads one, this turns the parts Markdown would misread into
Markdown: each run of ``>>>`` lines with its output into a ``pycon`` code block (else
they are nested block quotes, and ``[[1, 2]][0]`` in an output a link), each ``::``
literal block into a code block, a role into inline code, a field naming several
parameters (``:param a, b: ...``) into one field per parameter, and a Google-style
``Args:`` section into fields; and it moves the fields after the text.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|obj|exc|const|py:\w+):`~?([^`]+)`")
_MULTI_PARAM = re.compile(r"^(\s*):param ([\w]+(?:\s*,\s*\w+)+):(.*)$")


# a field (``:param x: ...``), not a role that starts a line (``:func:`f` ...``)
_FIELD = re.compile(
    r"^:(?:param|parameter|arg|argument|key|keyword|type|var|ivar|cvar|vartype|raises?|"
    r"except|exception|returns?|rtype|yields?)\b[^:`]*:(?:\s|$)"
)
_ARG = re.compile(r"^(\s+)(\*{0,2}\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def _args_as_fields(lines: list[str]) -> list[str]:
    """A Google-style ``Args:`` section (a few docstrings have one) as ``:param:`` fields."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "Args:" and not lines[i][0].isspace():
            i += 1
            arg_indent = None
            while i < len(lines) and (not lines[i].strip() or lines[i][0].isspace()):
                m = _ARG.match(lines[i])
                if m and (arg_indent is None or len(m.group(1)) == arg_indent):
                    arg_indent = len(m.group(1))
                    out.append(f":param {m.group(2).lstrip('*')}: {m.group(3)}")
                elif lines[i].strip():
                    out.append("    " + lines[i].strip())
                i += 1
            continue
        out.append(lines[i])
        i += 1
    return out


def _fields_last(lines: list[str]) -> list[str]:
    """The ``:param:``-style fields (with their indented continuation lines) moved after
    the text: an example written after the fields is then not read as part of the last."""
    body: list[str] = []
    fields: list[str] = []
    i = 0
    while i < len(lines):
        if _FIELD.match(lines[i]):
            fields.append(lines[i])
            i += 1
            while i < len(lines) and lines[i].strip() and lines[i][0].isspace():
                fields.append(lines[i])
                i += 1
            if i < len(lines) and not lines[i].strip() and (not body or not body[-1].strip()):
                i += 1  # one blank line where the fields were
        else:
            body.append(lines[i])
            i += 1
    while body and not body[-1].strip():
        body.pop()
    return [*body, "", *fields] if fields else body


def markdown(text: str) -> str:
    """A docstring's text with its examples and literal blocks as fenced code."""
    lines = _fields_last(_args_as_fields(text.splitlines()))
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if stripped.startswith(">>>"):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
                i += 1
            out += [f"{indent}```pycon", *(f"{indent}{b}" for b in block), f"{indent}```"]
            continue
        multi = _MULTI_PARAM.match(line)
        if multi:
            lead, names, rest = multi.groups()
            rest = _ROLE.sub(r"`\1`", rest)
            out += [f"{lead}:param {name.strip()}:{rest}" for name in names.split(",")]
            i += 1
            continue
        out.append(_ROLE.sub(r"`\1`", line))
        i += 1
        if stripped.endswith("::") and not stripped.startswith(":"):
            # a reST literal block: the indented lines after a blank line
            out[-1] = out[-1][:-1] if stripped != "::" else ""
            j = i
            while j < len(lines) and not lines[j].strip():
                j += 1
            body_indent = len(lines[j]) - len(lines[j].lstrip()) if j < len(lines) else 0
            if j < len(lines) and body_indent > len(indent):
                block = []
                while j < len(lines) and (
                    not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) >= body_indent
                ):
                    block.append(lines[j][body_indent:])
                    j += 1
                while block and not block[-1]:
                    block.pop()
                out += [
                    "",
                    f"{indent}```python",
                    *(f"{indent}{b}" for b in block),
                    f"{indent}```",
                    "",
                ]
                i = j
    return "\n".join(out)


class ReSTDocstrings(griffe.Extension):
    """Rewrite every docstring as :func:`markdown` says, before it is parsed."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
