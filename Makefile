# The two front-door commands (see README.md): `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_HOME ?= $(CURDIR)/.demo

.PHONY: demo test fuzz venv lint bench dist clean docs

# uv (in the test extra anyway) installs the rest: it downloads in parallel and its cache then serves the
# shipped-product tier's fresh virtualenv. It compiles the bytecode as pip does: where PYTHONDONTWRITEBYTECODE
# is set, every Airflow process would otherwise compile all it imports. setuptools warns every editable
# install with a path mapping about a folder named like the package in the working directory; there is none
# (no tessera/ here), so that notice is left out. The build leaves a copy of the metadata beside the sources;
# with the repo on sys.path Airflow would then find the plugin's entry point twice, so it goes.
# (Comments stand outside the recipe: make echoes a recipe's comment lines as it runs them.)
$(BIN)/.installed: pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet 'uv>=0.5'
	PYTHONWARNINGS='ignore:Editable installation' $(BIN)/uv pip install --quiet --compile-bytecode \
		--python $(BIN)/python -e '.[test]'
	rm -rf *.egg-info
	touch $@

venv: $(BIN)/.installed

# Real Airflow (scheduler, dag-processor, API server, triggerer) on an embedded SQLite DB, with
# dags_examples/ as the DAGs folder; its settings in $(DEMO_HOME)/airflow.cfg, so scripts/demo-airflow
# runs any airflow command against it. TESSERA_DEMO_PORT changes the port, TESSERA_DEMO_DAGS the DAGs
# folder; component logs go to $(DEMO_HOME)/logs/. Ctrl-C or kill (of make or of the demo) stops it all.
# A plain command line, so make runs it without a shell: the demo is make's own child, and the
# SIGTERM make passes on when it is killed reaches the process that stops the rest (a SIGINT make
# keeps to itself, which the demo notices: see scripts/demo_processes.py).
demo: export TESSERA_DEMO_HOME = $(DEMO_HOME)
demo: export TESSERA_DEMO_VENV = $(abspath $(VENV))
demo: venv
	bash scripts/demo.sh

# On TEST_WORKERS processes (pytest-xdist): 6 on the 2-core machine. An e2e deployment mostly waits for its
# schedules' clock, so 2 workers left the cores half idle: the whole suite took 30-37 minutes on 2, 17-27 on 4.
# With the compatibility tiers beside it (.ci/run), the machine is CPU-bound for most of a run, but the cores
# still idle where several deployments wait at once: a clean-clone .ci/run of one commit took 19:01 on 5
# workers and 17:35 on 6 (2026-12-05). 7 made an earlier suite slower (22:59 against 20): more deployments at once.
# Each e2e file, or set of files sharing one deployment, stays on one worker (xdist_group, see tests/conftest.py),
# and the deployments are handed out longest first (pytest.mark.minutes; --no-loadscope-reorder keeps that
# order instead of xdist's by number of tests). The rest runs in a random order; the header prints the seed.
# Each test's span and CPU go to test-artifacts/timeline/ (scripts/timeline.py lays them out).
TEST_WORKERS ?= 6
test: export TESSERA_TIMELINE = $(CURDIR)/test-artifacts/timeline
test: venv
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder

# The fuzz tests drawing five times the examples at random (make test runs a fixed fifth of them):
# run it after changing a parser, a bound or an error message (see tests/fuzz_depth.py), or tessera migrate's comparison
# (its year of minutes stepped run by run runs only here).
FUZZ_TESTS := tests/timetables/test_fuzz_constructors.py tests/operators/test_fuzz_declarations.py tests/plugin/api/test_api_schema_fuzz.py \
	tests/plugin/migrate/test_compare.py
fuzz: venv
	TESSERA_FUZZ=deep $(BIN)/python -m pytest -n $(TEST_WORKERS) $(FUZZ_TESTS)

# The documentation site in docs/_build/html, read from scratch (-E) so every page's warnings show;
# a warning (a broken link or reference, a docstring autodoc cannot read) fails it (-W, all listed first).
docs: venv
	$(BIN)/sphinx-build -E -W --keep-going -n -q -b html docs docs/_build/html

lint: venv
	$(BIN)/ruff check .

bench: venv
	$(BIN)/python bench/run.py

# The wheel and the sdist in dist/ (until the project is published: pip install dist/*.whl).
# setuptools leaves build/ and the egg-info beside the sources; they would shadow the
# installed metadata (see venv above), so they go.
# PYTHONDONTWRITEBYTECODE (set in many CI images) only makes setuptools warn that it skips byte-compiling.
dist: export PYTHONDONTWRITEBYTECODE =
dist: venv
	rm -rf dist build *.egg-info
	$(BIN)/python -m build --outdir dist .
	rm -rf build *.egg-info
	$(BIN)/twine check --strict dist/*

clean:
	rm -rf $(VENV) $(DEMO_HOME) .pytest_cache .hypothesis *.egg-info build dist docs/_build
