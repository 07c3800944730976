"""Line-based terminal output and input for ``craits play`` and ``craits replay``.

On a terminal, output goes through `rich <https://rich.readthedocs.io>`_ (the ``color``
extra): red suits are red and headings bold; anywhere else (a pipe, a file,
``io.StringIO``), or without rich, the lines are plain text with no control codes.
Where the output's encoding cannot write suit symbols, they become letters (``7♣`` →
``7c``). Input is read a line at a time, so
piped input works; when the input is not a terminal, each line read is echoed after
its prompt so that a transcript reads like a session. :attr:`Terminal.interactive` says
whether a person sits at it (both streams are terminals).
"""

from __future__ import annotations

import re
from typing import Any, TextIO

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

    ``color=None`` colours only when ``output`` is a terminal. ``interactive``: both
    ``input`` and ``output`` are terminals (a person types and reads; not a pipe).
    """

    def __init__(self, output: TextIO, input: TextIO | None = None, color: bool | None = None):
        self.output = output
        self.input = input
        tty = _isatty(output)
        self.unicode = _can_write(output, "♣♦♥♠—→←▶…✗·─")
        self.echo = input is not None and not _isatty(input)
        self.interactive = tty and input is not None and not self.echo
        self._console: Any = None
        wanted = tty if color is None else color
        if wanted:
            try:
                from rich.console import Console
            except ImportError:  # the color extra is not installed: plain text
                wanted = False
            else:
                self._console = Console(
                    file=output,
                    force_terminal=True,
                    color_system="auto",
                    highlight=False,
                    soft_wrap=True,
                    emoji=False,
                )
        self.color = wanted

    def _fit(self, text: str) -> str:
        return text if self.unicode else text.translate(_ASCII)

    def _write(self, text: str, style: str | None = None, end: str = "\n") -> None:
        text = self._fit(text)
        if self._console is None:
            self.output.write(text + end)
            return
        from rich.markup import escape

        text = _RED_CARD.sub(r"[red]\1[/red]", escape(text))
        self._console.print(f"[{style}]{text}[/{style}]" if style else text, end=end)

    def say(self, *lines: str, style: str | None = None) -> None:
        """Write each of ``lines`` (plain text) on a line of its own."""
        for line in lines:
            self._write(line, style)
        self.output.flush()

    def ask(self, prompt: str) -> str | None:
        """Write ``prompt`` and read one line (without its end); ``None`` at the end of input."""
        self._write(prompt, "bold", end="")
        self.output.flush()
        if self.input is None:
            return None
        line = self.input.readline()
        if not line:
            self._write("")
            return None
        line = line.rstrip("\r\n")
        if self.echo:
            self._write(line)
        self.output.flush()
        return line
