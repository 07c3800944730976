"""``craits serve``: play, watch and compare agents in the browser.

- :mod:`craits.web.app` — the application factory (pages and JSON API, FastAPI);
- :mod:`craits.web.requests` — what a client asks for (a new game, a move), checked;
- :mod:`craits.web.sessions` — live games, their tokens, the caps; :mod:`craits.web.database`
  — their SQLite store; :mod:`craits.web.bots` — the processes the bots think in;
- :mod:`craits.web.views` — the seat view, the only thing a player's browser receives;
- :mod:`craits.web.replays` — a game record as frames to step through;
- :mod:`craits.web.library` — the record files and tournament results shown (put together from
  :mod:`craits.web.folder_scan`, :mod:`craits.web.record_files`, :mod:`craits.web.result_sets`);
- :mod:`craits.web.server` — uvicorn in the foreground or a background thread;
- :mod:`craits.web.limits` — the request layer: body size and time, rates per client, the
  ``Host`` check; :mod:`craits.web.connections` — connections held, headers that never end,
  a quiet log; :mod:`craits.web.inputs` — what a client may ask for; :mod:`craits.web.errors`
  — the one-line JSON error;
- ``static/`` — the pages (plain HTML, JavaScript, CSS; no build step).

Importing this package needs the ``web`` extra (``pip install 'craits[web]'``).
"""
