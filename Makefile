# Two commands do all the set-up on a fresh machine with Python 3.11+:
#   make run    installs into .venv and starts the app on the bundled data
#   make test   installs into .venv and runs lint, types and the tests
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test test-fast bench bench-app lint data
# The app needs the core and the `app` extra; the tests add the developer tools (`dev` includes `app`).
# pip's own notices about this machine's package index settings are not the project's: -qq keeps errors only.
PIP := $(BIN)/python -m pip install -qq
$(VENV)/.created:
	$(PYTHON) -c 'import sys; sys.exit("Python 3.11 or newer is needed, found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	touch $@

$(BIN)/.installed-app: pyproject.toml $(VENV)/.created
	$(PIP) -e '.[app]'
	touch $@

$(BIN)/.installed: pyproject.toml $(VENV)/.created
	$(PIP) -e '.[dev]'
	touch $@ $(BIN)/.installed-app

# The app listens on this machine only; `make run ADDRESS=0.0.0.0` lets others in (read the README's
# "Exposing the app" first: put authentication in front, and list Replay's targets).
ADDRESS ?= 127.0.0.1
run: $(BIN)/.installed-app
	$(BIN)/python -m streamlit run app.py --server.address $(ADDRESS)

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy calculator app_pages app.py tests benchmarks scripts
	$(BIN)/lint-imports

# Both cores (pytest-xdist); a file's tests stay on one worker, so its servers and fixtures start once.
PYTEST := $(BIN)/python -m pytest -n 2 --dist loadfile
test: lint
	$(PYTEST)

# The core and the command line in about a minute: no pages, no browser, no fuzz campaign.
test-fast: $(BIN)/.installed
	$(PYTEST) -m "not app and not e2e and not fuzz"

# Derived data the package reads at run time (every estimator's published-measurement error): run after changing
# the cases, the model or GPU catalogues or the estimators; the tests fail while it is stale. Minutes.
data: $(BIN)/.installed
	$(BIN)/python scripts/make_data.py

bench: $(BIN)/.installed
	$(BIN)/python benchmarks/sweep.py

# The app's speed beside a baseline Streamlit page (reruns, first metric in Chromium, the command line).
bench-app: $(BIN)/.installed
	$(BIN)/python benchmarks/app_speed.py
