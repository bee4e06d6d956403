# learnstream — every target creates/updates .venv itself.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: help venv demo prometheus-tools test test-unit test-kafka test-reliability test-soak test-eos test-cluster lint format schemas clean

help:  ## list targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*##/\t/'

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --root-user-action=ignore --upgrade pip
	$(PY) -m pip install -q --root-user-action=ignore -e '.[dev]'
	rm -f $(VENV)/.installed-*; touch $@

venv: $(STAMP)  ## create .venv with the project and its dev tools

# `make demo DEMO_ARGS="--web-port 7000 --rate 5"`; LEARNSTREAM_WEB_PORT=7000 works too.
DEMO_ARGS ?=
demo: $(STAMP)  ## embedded broker + worker + simulated runtime, live view (Ctrl-C stops)
	$(VENV)/bin/learnstream demo $(DEMO_ARGS)

prometheus-tools:  ## promtool + prometheus for the ops tests, unpacked into .venv/tools (installs nothing)
	VENV=$(VENV) ops/prometheus/ensure-promtool.sh

# Parallel test processes (pytest-xdist). Most of an integration test waits on a worker or a
# broker, so 6 processes keep 2 cores busy (4 left them idle a fifth of the run: 4:41 against
# 4:17); the slow integration tests are collected first and the unit tests fill the gaps.
# Each process starts its own broker when a test needs one.
TEST_WORKERS ?= 6
# Apache Kafka tiers: each process starts a JVM broker; a test file stays in one process,
# so a module's own broker (SASL, restarts) starts once.
KAFKA_WORKERS ?= 2
PYTEST := $(PY) -m pytest $(PYTEST_ARGS)

test: $(STAMP) prometheus-tools  ## unit + integration tests on the embedded broker (~4.5 min on 2 cores)
	$(PYTEST) -n $(TEST_WORKERS) --dist loadgroup tests/integration tests/unit

test-unit: $(STAMP)  ## unit tests only (no broker, ~1.5 min on 2 cores): the edit-test loop
	$(PYTEST) -n 2 tests/unit

test-kafka: $(STAMP) prometheus-tools  ## integration (those using the broker) + reliability suites on Apache Kafka (fetched with Maven; Java 17), and the fast three-broker tests
	LEARNSTREAM_TEST_BROKER=kafka $(PYTEST) -n $(KAFKA_WORKERS) --dist loadfile tests/integration tests/kafka_smoke
	LEARNSTREAM_TEST_BROKER=kafka $(PYTEST) tests/reliability
	$(PYTEST) -m "not slow_cluster" tests/cluster

test-cluster: $(STAMP)  ## every test on a three-broker Apache Kafka cluster (replication, broker faults)
	$(PYTEST) tests/cluster

test-reliability: $(STAMP)  ## kill -9 / recovery / rebalance / fuzz suite on the embedded broker, CI sizes (broker faults on three brokers: make test-cluster)
	$(PYTEST) -n 2 --dist loadfile -m "not kafka" tests/reliability

# The full sizes of the reliability suite and of the objects generated from the official
# schemas; the defaults are CI's (tests/reliability/*.py, tests/unit/test_mplp_inputs.py).
SOAK := LEARNSTREAM_RELIABILITY_EVENTS=20000 LEARNSTREAM_FUZZ_RECORDS=10000 LEARNSTREAM_FUZZ_VALID_EVENTS=3000 LEARNSTREAM_SCHEMA_EXAMPLES=200

test-soak: $(STAMP)  ## full sizes (20,000 events x 5 kills, 13,000 fuzzed records, 200 objects per official schema) on both brokers + every cluster fault (~20 min): before landing a change to state, commit or join paths; record it in RELIABILITY.md
	$(SOAK) $(PYTEST) -n 2 tests/unit -k generated_from_the_official
	$(SOAK) $(PYTEST) -m "not kafka" tests/reliability
	$(SOAK) LEARNSTREAM_TEST_BROKER=kafka $(PYTEST) tests/reliability
	$(PYTEST) tests/cluster

test-eos: $(STAMP)  ## exactly_once under kill -9 on Apache Kafka only (part of test-kafka)
	LEARNSTREAM_TEST_BROKER=kafka $(PYTEST) -m eos -s tests/reliability

lint: $(STAMP)  ## ruff + mypy
	$(PY) -m ruff check learnstream streams agents tests benchmarks
	$(PY) -m ruff format --check learnstream streams agents tests benchmarks
	$(PY) -m mypy

format: $(STAMP)
	$(PY) -m ruff format learnstream streams agents tests benchmarks
	$(PY) -m ruff check --fix learnstream streams agents tests benchmarks

schemas: $(STAMP)  ## regenerate schemas/json from the models
	$(PY) -m learnstream.streams.encoding.schemas

clean:
	rm -rf $(VENV) .learnstream .pytest_cache

# ---- benchmarks (benchmarks/run.py --help) ---------------------------------------------
.PHONY: bench bench-quick bench-extras

# The spaCy model is a core dependency, in every install: only the RocksDB store is optional.
bench-extras: $(STAMP)  # RocksDB store, for the memory figures
	@$(PY) -c "import importlib.util as u, sys; sys.exit(not u.find_spec('rocksdict'))" \
	  || $(PY) -m pip install -q -e '.[rocksdb]'

bench: bench-extras  ## full benchmarks (~50 min): Apache Kafka if Java is there, appends to benchmarks/RESULTS.md
	$(PY) -m benchmarks.run

bench-quick: $(STAMP)  ## benchmark smoke run (~2 min, embedded broker, records nothing)
	$(PY) -m benchmarks.run --quick
