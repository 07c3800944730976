"""A griffe extension for mkdocstrings: the docstrings' reStructuredText-isms as Markdown.

The code's docstrings cite with Sphinx roles (``:class:`~craits_env.engine.Game```) and
``double`` backticks; mkdocstrings reads Markdown. Each docstring is rewritten as it is
loaded, the same way the generate hook rewrites a module docstring.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import griffe

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docstrings import markdown_of_docstring


class SphinxRolesToMarkdown(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_of_docstring(obj.docstring.value)
