"""``craits serve``: play, watch and compare agents in the browser.

- :mod:`craits.web.app` — the application factory (pages and JSON API, FastAPI);
- :mod:`craits.web.sessions` — live games, their tokens, the store and its cap;
- :mod:`craits.web.views` — the seat view, the only thing a player's browser receives;
- :mod:`craits.web.replays` — a game record as frames to step through;
- :mod:`craits.web.library` — the record files and tournament results shown;
- :mod:`craits.web.server` — uvicorn in the foreground or a background thread;
- ``static/`` — the pages (plain HTML, JavaScript, CSS; no build step).

Importing this package needs the ``web`` extra (``pip install 'craits[web]'``).
"""
