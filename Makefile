# The two commands a new user needs: `make demo` and `make test`. Both set everything up first.
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.benchfoundry-installed
TEST_STAMP := $(VENV)/.benchfoundry-test-installed

# Prefect runs on its embedded local API, keeps its home inside this folder, and stays offline.
export PREFECT_HOME ?= $(CURDIR)/.prefect
export DO_NOT_TRACK := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false
# Python keeps its compiled modules (__pycache__, git-ignored) even where the environment says
# not to: the tests start a few hundred processes, and each would compile benchfoundry again.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup setup-test demo test lint bench clean

# What the demo needs: benchfoundry and its runtime dependencies (no test tools, no browser).
setup: $(STAMP)

$(STAMP): pyproject.toml setup.py scripts/setup.sh
	bash scripts/setup.sh $(VENV)
	@touch $@

# What the tests need besides: the dev extra (pytest, ruff, import-linter, Playwright, Ray,
# moto) and, as root on Debian, the chromium package the browser tests drive.
setup-test: $(TEST_STAMP)

$(TEST_STAMP): pyproject.toml setup.py scripts/setup.sh
	bash scripts/setup.sh $(VENV) test
	@touch $(STAMP) $@

demo: setup
	$(BIN)/benchfoundry build datasets/demo.yaml

# Lint, the import layers (import-linter), then two pytest workers, a test file each at a time
# (a file's fixtures are built once), handed out in collection order: the slowest files first
# (tests/conftest.py), so that the two workers finish together.
test: setup-test
	$(BIN)/ruff check .
	bash scripts/lint_imports.sh $(VENV)
	$(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder

lint: setup-test
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

bench: setup-test
	$(BIN)/python bench/ingest_speed.py --images 300 --flow
	$(BIN)/python bench/gateway_throughput.py
	$(BIN)/python bench/extract_speed.py --images 200
	$(BIN)/python bench/generate_accuracy.py --scenes 120

clean:
	rm -rf datasets/runs .prefect
