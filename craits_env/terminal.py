"""Line-based terminal output and input for ``craits play`` and ``craits replay``.

Output goes through `rich <https://rich.readthedocs.io>`_: on a terminal, red suits are
red and headings bold; anywhere else (a pipe, a file, ``io.StringIO``) the lines are
plain text with no control codes. Where the output's encoding cannot write suit
symbols, they become letters (``7♣`` → ``7c``). Input is read a line at a time, so
piped input works; when the input is not a terminal, each line read is echoed after
its prompt so that a transcript reads like a session.
"""

from __future__ import annotations

import re
from typing import TextIO

from rich.console import Console
from rich.markup import escape

_RED_CARD = re.compile(r"(?<![\w\[])((?:10|[A2-9TJQK])[♦♥])")
_ASCII = str.maketrans(
    {
        "♣": "c",
        "♦": "d",
        "♥": "h",
        "♠": "s",
        "—": "-",
        "→": "->",
        "←": "<-",
        "▶": ">",
        "…": "...",
        "✗": "x",
        "·": "-",
        "─": "-",
    }
)


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


def _can_write(stream: object, text: str) -> bool:
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


class Terminal:
    """Writes lines to ``output`` and reads lines from ``input``.

    ``color=None`` colours only when ``output`` is a terminal.
    """

    def __init__(self, output: TextIO, input: TextIO | None = None, color: bool | None = None):
        self.output = output
        self.input = input
        tty = _isatty(output)
        self.color = tty if color is None else color
        self.unicode = _can_write(output, "♣♦♥♠—→←▶…✗·─")
        self.echo = input is not None and not _isatty(input)
        self._console = Console(
            file=output,
            force_terminal=self.color,
            color_system="auto" if self.color else None,
            no_color=not self.color,
            highlight=False,
            soft_wrap=True,
            emoji=False,
        )

    def _fit(self, text: str) -> str:
        return text if self.unicode else text.translate(_ASCII)

    def _markup(self, text: str, style: str | None) -> str:
        text = escape(self._fit(text))
        if self.color:
            text = _RED_CARD.sub(r"[red]\1[/red]", text)
        return f"[{style}]{text}[/{style}]" if style and self.color else text

    def say(self, *lines: str, style: str | None = None) -> None:
        """Write each of ``lines`` (plain text) on a line of its own."""
        for line in lines:
            self._console.print(self._markup(line, style))
        self.output.flush()

    def ask(self, prompt: str) -> str | None:
        """Write ``prompt`` and read one line (without its end); ``None`` at the end of input."""
        self._console.print(self._markup(prompt, "bold"), end="")
        self.output.flush()
        if self.input is None:
            return None
        line = self.input.readline()
        if not line:
            self._console.print("")
            return None
        line = line.rstrip("\r\n")
        if self.echo:
            self._console.print(escape(self._fit(line)))
        self.output.flush()
        return line
