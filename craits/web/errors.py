"""The one shape of every error ``craits serve`` answers: ``{"error": "one line"}``.

Every refusal of the application (its exception handlers) and of the request layer
(:mod:`craits.web.limits`: sizes, timeouts, rates, the ``Host`` check) is made here, so that
every error line is bounded in one place: whitespace collapsed to single spaces, the
bidirectional-text controls taken out (a name holding a right-to-left override must not
turn the line around on screen), a lone UTF-16 surrogate written as its escape (``\\ud800``:
UTF-8 cannot hold it), at most :data:`MAX_ERROR_CHARS` characters, the rest an
ellipsis. An error may quote what a client sent, but never more than that.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import Send

MAX_ERROR_CHARS = 200
"""Characters of an error line at most (the last one an ellipsis when it was cut)."""
BIDI_CONTROLS = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
"""The characters that reorder text on screen or hide in it: LRM, RLM, ALM, the
embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), and the zero-width ones
(U+200B-U+200D spaces and joiners, U+2060-U+2064 word joiner and invisible operators,
U+FEFF): a name shown must be the name read."""


def plain(text: str) -> str:
    """``text`` without bidirectional-text controls (a name as shown)."""
    return BIDI_CONTROLS.sub("", text)


def plain_json(value: Any) -> Any:
    """``value`` (parsed JSON: dicts, lists, strings, numbers) with :func:`plain` applied to
    every string and key, at any depth (what a file under a listed folder says, as shown)."""
    if isinstance(value, str):
        return plain(value)
    if isinstance(value, dict):
        return {plain(str(k)): plain_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_json(v) for v in value]
    return value


def one_line(message: object) -> str:
    """``message`` as one bounded line (see the module docstring)."""
    text = plain(str(message)).encode("utf-8", "backslashreplace").decode("utf-8")
    line = " ".join(text.split()) or "error"  # (a lone surrogate written as its escape)
    if len(line) > MAX_ERROR_CHARS:
        line = line[: MAX_ERROR_CHARS - 1] + "…"
    return line


def error_response(
    status: int, message: object, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """The response of a refusal: ``status`` and ``{"error": one_line(message)}``."""
    return JSONResponse(
        {"error": one_line(message)}, status_code=status, headers=dict(headers or {})
    )


async def send_error(
    send: Send, status: int, message: object, headers: Mapping[str, str] | None = None
) -> None:
    """Send the same response as :func:`error_response` from an ASGI middleware."""
    body = json.dumps({"error": one_line(message)}).encode()
    raw = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
        (b"x-content-type-options", b"nosniff"),
    ]
    raw += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body, "more_body": False})
