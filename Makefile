# Two commands do everything on a fresh machine:
#   make run    set up .venv if needed, then run the main job on its built-in defaults:
#               train the default PPO agent (~25 CPU-minutes) and print its tournament
#               table against the heuristic bots
#   make test   set up .venv if needed, then lint and run the test suite (and check that the
#               core package, without any extra, installs and runs on its own)
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run
CORE_VENV := .venv-core
# A CPU wheel of torch, installed before the project so that the project's range
# (torch>=2.2) is already satisfied and never pulls a multi-GB CUDA build.
TORCH_SPEC ?= torch==2.13.0

.PHONY: run demo test test-core lint bench bench-peers install clean

# make test: everything (the dev extra: train, color, ray and the test tools).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP) $(RUN_STAMP)

# make run: what training needs (the train and color extras), no test tools.
$(RUN_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e ".[train,color]"
	touch $(RUN_STAMP)

install: $(STAMP)

run: $(RUN_STAMP)
	$(VENV)/bin/craits train

demo: $(RUN_STAMP)
	$(VENV)/bin/craits demo

test: $(STAMP) test-core
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy craits_env agents training craits
	$(PY) -m pytest

# The core package alone (numpy, gymnasium, pettingzoo): a fresh venv, no extra, outside the
# source tree; the light commands run and a command needing an extra names it (exit 2).
test-core:
	rm -rf $(CORE_VENV) && $(PYTHON) -m venv $(CORE_VENV)
	$(CORE_VENV)/bin/pip install --quiet .
	cd $(CORE_VENV) && bin/python -c "import craits_env, agents; from craits_env import craits_v0; \
	    from pettingzoo.test import api_test; api_test(craits_v0.env(num_players=3), num_cycles=100)"
	cd $(CORE_VENV) && echo quit | bin/craits play --opponents expert pimc:4 --seed 1 > /dev/null
	cd $(CORE_VENV) && bin/craits demo -n 2 --bots expert greedy > /dev/null
	cd $(CORE_VENV) && { bin/craits train > train.txt 2>&1; test $$? -eq 2; } && \
	    grep -q "pip install 'craits\[train\]'" train.txt
	rm -rf $(CORE_VENV) build

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check craits_env agents training craits
	$(VENV)/bin/mypy craits_env agents training craits

bench: $(STAMP)
	$(VENV)/bin/craits bench engine --players 4 --seconds 10
	$(VENV)/bin/craits bench env --players 4 --seconds 10

# The peers (RLCard, OpenSpiel) measured in the same run: ratios, not absolute times.
bench-peers: $(STAMP)
	$(PY) -m pip install --quiet -e ".[bench]"
	$(PY) experiments/bench_compare.py engine --seconds 10 --rounds 3
	$(PY) experiments/bench_compare.py env --seconds 10 --rounds 3

clean:
	rm -rf $(VENV) $(CORE_VENV) .pytest_cache .ruff_cache .hypothesis
