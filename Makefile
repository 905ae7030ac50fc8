# The two commands a new user needs: `make demo` and `make test`. Both set everything up first.
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.benchfoundry-installed

# Prefect runs on its embedded local API, keeps its home inside this folder, and stays offline.
export PREFECT_HOME ?= $(CURDIR)/.prefect
export DO_NOT_TRACK := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false

.PHONY: setup demo test lint bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml scripts/setup.sh
	bash scripts/setup.sh $(VENV)
	@touch $@

demo: setup
	$(BIN)/benchfoundry build datasets/demo.yaml

# Two pytest workers, a test file each at a time (a file's fixtures are built once).
test: setup
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n 2 --dist loadfile

lint: setup
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

bench: setup
	$(BIN)/python bench/ingest_speed.py --images 300 --flow
	$(BIN)/python bench/gateway_throughput.py
	$(BIN)/python bench/extract_speed.py --images 200
	$(BIN)/python bench/generate_accuracy.py --scenes 120

clean:
	rm -rf datasets/runs .prefect
