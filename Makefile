# learnstream — every target creates/updates .venv itself.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: help venv demo test test-unit test-integration test-kafka lint format schemas clean

help:  ## list targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*##/\t/'

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	rm -f $(VENV)/.installed-*; touch $@

venv: $(STAMP)  ## create .venv with the project and its dev tools

demo: $(STAMP)  ## embedded broker + worker + simulated runtime, live view (Ctrl-C stops)
	$(VENV)/bin/learnstream demo

test: $(STAMP)  ## unit + integration tests on the embedded broker (no Java needed)
	ops/prometheus/ensure-promtool.sh
	$(PY) -m pytest tests/unit tests/integration

test-unit: $(STAMP)  ## unit tests only (no broker)
	$(PY) -m pytest tests/unit

test-kafka: $(STAMP)  ## integration + Kafka-only tests on Apache Kafka (fetched with Maven; Java 17)
	LEARNSTREAM_TEST_BROKER=kafka $(PY) -m pytest tests/integration tests/kafka_smoke

lint: $(STAMP)  ## ruff + mypy
	$(PY) -m ruff check streams agents tests
	$(PY) -m ruff format --check streams agents tests
	$(PY) -m mypy

format: $(STAMP)
	$(PY) -m ruff format streams agents tests
	$(PY) -m ruff check --fix streams agents tests

schemas: $(STAMP)  ## regenerate schemas/json from the models
	$(PY) -m streams.schemas

clean:
	rm -rf $(VENV) .learnstream .pytest_cache
