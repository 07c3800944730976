"""Docstrings' reStructuredText-isms as Markdown, for the docs site (both hooks use it)."""

from __future__ import annotations

import inspect
import re

ROLE = re.compile(r":(?:class|mod|func|meth|attr|data|obj|exc):`~?([^`]+)`")
DOUBLE_BACKTICK = re.compile(r"``([^`]+)``")


def markdown_of_docstring(text: str) -> str:
    """Sphinx roles (``:class:`~a.b.C```) and ``double`` backticks become inline code."""
    text = ROLE.sub(lambda m: f"`{m.group(1)}`", inspect.cleandoc(text))
    return DOUBLE_BACKTICK.sub(lambda m: f"`{m.group(1)}`", text)
