# Two commands do everything on a fresh machine:
#   make run    set up .venv if needed, then run the main job on its built-in defaults:
#               train the default PPO agent (~25 CPU-minutes) and print its tournament
#               table against the heuristic bots
#   make test   set up .venv if needed, then lint and run the whole test suite in parallel (and
#               check that the core package, without any extra, installs and runs on its own),
#               the docs, the snippets, the wheel, then the RLlib and AgileRL tests, each in its
#               own venv (test-rllib, test-agilerl). Needs Debian's chromium for the browser
#               tests (`sudo make browser` once; .ci/run does it); installs nothing on the system.
# A contributor's loop: make test-fast (lint-free, the tests not marked slow, in parallel).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run
WEB_STAMP := $(VENV)/.installed-web
CORE_VENV := .venv-core
# RLlib and AgileRL each in a venv of their own (see test-rllib below).
RLLIB_VENV := .venv-rllib
AGILERL_VENV := .venv-agilerl
# torch, installed before the project so that the project's range (torch>=2.2) is already
# satisfied when the project installs. Where pip's index offers a CPU wheel of this version
# (this workplace's machines) it is that; on Linux PyPI's is the multi-GB CUDA build: there run
# `PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu make ...` (README, "Install").
TORCH_SPEC ?= torch==2.13.0

.PHONY: run demo test test-fast test-core test-wheel test-rllib test-agilerl test-snippets docs docs-serve lint bench bench-peers install clean serve browser

# make test: everything (the dev extra: train, color, ray and the test tools).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP) $(RUN_STAMP) $(WEB_STAMP)

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

# make serve: the web application on http://127.0.0.1:8000/ (play; watch the committed
# tournament records; compare the committed results). Ctrl-C stops it.
$(WEB_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -e ".[web]"
	touch $(WEB_STAMP)

serve: $(WEB_STAMP)
	$(VENV)/bin/craits serve --records experiments/results --results experiments/results

# The browser tests drive Debian's chromium (never a downloaded browser). A system install, so
# never a step of make test: run it once as root (`sudo make browser`); .ci/run does.
CHROMIUM ?= /usr/bin/chromium
browser:
	test -x $(CHROMIUM) || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -qq chromium; }

# Every test, in parallel (pytest-xdist: one worker a core); each test's duration is kept in
# build/test-durations.json and the slowest are printed.
PYTEST_PARALLEL ?= -n auto --dist loadfile
test: $(STAMP) test-core lint
	$(PY) -m pytest $(PYTEST_PARALLEL) --durations=15
	$(MAKE) --no-print-directory docs test-snippets test-wheel
	$(MAKE) --no-print-directory test-rllib test-agilerl

# The fast lane (under a minute on 2 cores): every test not marked slow. No lint, no venvs.
test-fast: $(STAMP)
	$(PY) -m pytest $(PYTEST_PARALLEL) -m "not slow" --durations=5

# The core package alone (numpy, gymnasium, pettingzoo, numba): a fresh venv, no extra, outside the
# source tree, run from a user's directory that holds its own agents.py and training/ (our installed
# names never clash with them); the light commands run and a command needing an extra names it
# (exit 2).
USER_DIR := $(CORE_VENV)/user
test-core:
	rm -rf $(CORE_VENV) && $(PYTHON) -m venv $(CORE_VENV)
	$(CORE_VENV)/bin/pip install --quiet .
	mkdir -p $(USER_DIR)/training && echo "MINE = 1" > $(USER_DIR)/agents.py && \
	    echo "MINE = 1" > $(USER_DIR)/training/__init__.py
	cd $(USER_DIR) && ../bin/python -c "import craits_env, craits.agents; from craits_env import craits_v0; \
	    from pettingzoo.test import api_test; api_test(craits_v0.env(num_players=3), num_cycles=100); \
	    import gymnasium; gymnasium.make('craits/Craits-v0', opponents=['expert'] * 3).reset(seed=1); \
	    from craits.agents import make_agent; make_agent('expert'); import agents; assert agents.MINE"
	cd $(USER_DIR) && echo quit | ../bin/craits play --opponents expert pimc:4 --seed 1 > /dev/null
	cd $(USER_DIR) && ../bin/python -m craits demo -n 2 --bots expert greedy > /dev/null
	cd $(USER_DIR) && { ../bin/craits train > train.txt 2>&1; test $$? -eq 2; } && \
	    grep -q "pip install 'craits\[train\]'" train.txt
	rm -rf $(CORE_VENV) build

# The wheel is the product: build the sdist and the wheel, check them (twine, strict), install
# the wheel into a fresh venv outside the source tree (torch first), and run a new user's first
# hour (tests/wheel/first_hour.py: version, demo, play with piped moves, replay, a tournament
# with champion and champion-search, a quick train, serve's pages) from an empty directory and
# from one holding the user's own agents.py and training/.
WHEEL_VENV := .venv-wheel
test-wheel: $(STAMP)
	rm -rf dist $(WHEEL_VENV) && $(PY) -m build --outdir dist . > /dev/null
	$(VENV)/bin/twine check --strict dist/*
	$(PYTHON) -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/pip install --quiet "$(TORCH_SPEC)"
	$(WHEEL_VENV)/bin/pip install --quiet "$$(ls dist/craits-*.whl)[train,web]"
	mkdir -p $(WHEEL_VENV)/empty $(WHEEL_VENV)/user/training
	echo "MINE = 1" > $(WHEEL_VENV)/user/agents.py && echo "MINE = 1" > $(WHEEL_VENV)/user/training/__init__.py
	cd $(WHEEL_VENV)/empty && ../bin/python ../../tests/wheel/first_hour.py ../bin
	cd $(WHEEL_VENV)/user && ../bin/python ../../tests/wheel/first_hour.py ../bin
	rm -rf $(WHEEL_VENV) dist

# RLlib and AgileRL pin what the main .venv cannot hold (ray[rllib] 2.60: gymnasium==1.2.2;
# agilerl 2.58: tensordict==0.13, refused by TorchRL 0.14), so each gets its own venv (torch
# first, as above) and its own test directory, run here and by make test after the main
# pytest. The main pytest never collects tests/own_venv/ (its conftest.py ignores it unless
# it is named on the command line, as here): not a skip, nothing there runs anywhere else.
# pytest's exit 5 (no test collected) fails the target.
$(RLLIB_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(RLLIB_VENV)
	$(RLLIB_VENV)/bin/pip install --quiet "$(TORCH_SPEC)"
	$(RLLIB_VENV)/bin/pip install --quiet -e ".[rllib]" "pytest>=7.4"
	touch $@

test-rllib: $(RLLIB_VENV)/.installed
	$(RLLIB_VENV)/bin/python -m pytest tests/own_venv/rllib

$(AGILERL_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(AGILERL_VENV)
	$(AGILERL_VENV)/bin/pip install --quiet "$(TORCH_SPEC)"
	$(AGILERL_VENV)/bin/pip install --quiet -e ".[agilerl]" "pytest>=7.4"
	touch $@

test-agilerl: $(AGILERL_VENV)/.installed
	$(AGILERL_VENV)/bin/python -m pytest tests/own_venv/agilerl

# The docs site from docs/ (mkdocs-material + mkdocstrings): warnings are errors, so a broken
# link or reference fails. Open site/index.html, or `make docs-serve` while editing.
DOCS_ENV := NO_MKDOCS_2_WARNING=1
docs: $(STAMP)
	$(DOCS_ENV) $(VENV)/bin/mkdocs build --strict --quiet

docs-serve: $(STAMP)
	$(DOCS_ENV) $(VENV)/bin/mkdocs serve --dev-addr 127.0.0.1:8001

# Every Python code block of the README and docs/ runs (pytest-markdown-docs).
test-snippets: $(STAMP)
	$(PY) -m pytest --markdown-docs -o addopts="-q" -p no:cacheprovider docs README.md

# import-linter and mypy read files, not imports: they run on the installed tree (craits.agents
# inside craits), built from links under build/ by tests/package_tree.py.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) tests/package_tree.py > /dev/null
	cd build/package-tree && $(abspath $(VENV))/bin/lint-imports --config ../../pyproject.toml
	cd build/package-tree && $(abspath $(VENV))/bin/mypy --config-file ../../pyproject.toml craits_env craits

bench: $(STAMP)
	$(VENV)/bin/craits bench engine --players 4 --seconds 10
	$(VENV)/bin/craits bench env --players 4 --seconds 10
	$(VENV)/bin/craits bench vector --players 4 --num-envs 1024 --seconds 10

# The peers (RLCard, OpenSpiel, pgx) measured in the same run: ratios, not absolute times.
bench-peers: $(STAMP)
	$(PY) -m pip install --quiet -e ".[bench]"
	$(PY) experiments/bench_compare.py engine --seconds 10 --rounds 3
	$(PY) experiments/bench_compare.py env --seconds 10 --rounds 3
	$(PY) experiments/bench_compare.py vector --seconds 10 --rounds 3

clean:
	rm -rf $(VENV) $(CORE_VENV) $(WHEEL_VENV) dist build $(RLLIB_VENV) $(AGILERL_VENV) .pytest_cache .ruff_cache .hypothesis site
