"""Docstrings' reStructuredText-isms as Markdown, for the docs site (both hooks use it)."""

from __future__ import annotations

import inspect
import re

ROLE = re.compile(r":(?:class|mod|func|meth|attr|data|obj|exc):`~?([^`]+)`")
# Exactly two backticks each side: ```` ``x`` ```` but never a fence's ```` ``` ```` or a
# four-backtick inline span.
DOUBLE_BACKTICK = re.compile(r"(?<!`)``(?!`)([^`]+)(?<!`)``(?!`)")
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")


def markdown_of_docstring(text: str) -> str:
    """Sphinx roles (``:class:`~a.b.C```) and ``double`` backticks become inline code; fenced
    code blocks (```` ```python ```` … ```` ``` ````) are left as they are."""
    out: list[str] = []
    prose: list[str] = []  # the lines since the last fence, rewritten together (a span may wrap)
    fence = ""  # the open fence's backticks or tildes; "" outside a block
    for line in inspect.cleandoc(text).split("\n"):
        mark = FENCE.match(line)
        if fence:
            out.append(line)
            if mark and mark.group(1)[0] == fence[0] and len(mark.group(1)) >= len(fence):
                fence = "" if not line.strip().strip(fence[0]) else fence
        elif mark:
            out += [*_inline(prose), line]
            prose, fence = [], mark.group(1)
        else:
            prose.append(line)
    return "\n".join(out + _inline(prose))


def _inline(lines: list[str]) -> list[str]:
    """Prose lines (outside fenced code) with their roles and double backticks rewritten."""
    text = ROLE.sub(lambda m: f"`{m.group(1)}`", "\n".join(lines))
    return DOUBLE_BACKTICK.sub(lambda m: f"`{m.group(1)}`", text).split("\n") if lines else []
