# Two commands do everything on a fresh machine:
#   make run    set up .venv if needed, then run the main job on its built-in defaults:
#               train the default PPO agent (~30 min on 2 CPU cores) and print its tournament
#               table against the heuristic bots
#   make test   set up .venv if needed, then lint and run the test suite
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# A CPU wheel of torch, installed before the project so that the project's range
# (torch>=2.2) is already satisfied and never pulls a multi-GB CUDA build.
TORCH_SPEC ?= torch==2.13.0

.PHONY: run demo test lint bench bench-peers install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/craits train

demo: $(STAMP)
	$(VENV)/bin/craits demo

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check craits_env agents
	$(VENV)/bin/mypy craits_env agents

bench: $(STAMP)
	$(VENV)/bin/craits bench engine --players 4 --seconds 10
	$(VENV)/bin/craits bench env --players 4 --seconds 10

# The peers (RLCard, OpenSpiel) measured in the same run: ratios, not absolute times.
bench-peers: $(STAMP)
	$(PY) -m pip install --quiet -e ".[bench]"
	$(PY) experiments/bench_compare.py engine --seconds 10 --rounds 3
	$(PY) experiments/bench_compare.py env --seconds 10 --rounds 3

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
