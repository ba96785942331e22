# Set-up and everyday commands. Each target creates .venv when it is missing and installs what it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
COMMA := ,

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

# Tests and benchmarks run the dimension simplifier's fast path compiled by mypyc (see setup.py):
# the extras bring mypy into the venv, then a build without isolation sees it and compiles. Any
# change to a dims module rebuilds. (`make demo` and a plain `pip install` build pure Python.)
DIMS_SOURCES := $(wildcard src/exprgraph/dims/*.py)
BUILD_TOOLS := "setuptools>=68" wheel
define install_compiled
	$(BIN)/python -m pip install -q $(BUILD_TOOLS) -e ".[$(1)]"
	$(BIN)/python -m pip install -q --no-build-isolation --no-deps -e .
endef

$(VENV)/.installed-test: pyproject.toml setup.py $(DIMS_SOURCES) | $(BIN)/python
	$(call install_compiled,test)
	touch $@

$(VENV)/.installed-bench: pyproject.toml setup.py $(DIMS_SOURCES) | $(BIN)/python
	$(call install_compiled,test$(COMMA)bench)
	touch $@

demo: $(VENV)/.installed
	$(BIN)/exprgraph demo

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

test: lint
	EXPRGRAPH_EXPECT_COMPILED=1 $(BIN)/python -m pytest -q
	EXPRGRAPH_PURE_PYTHON=1 $(BIN)/python -m pytest -q -p no:cacheprovider tests/dims

bench: $(VENV)/.installed-bench
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
	find src -name '*.so' -delete

# A long run of the fuzzers of every parser (expressions, rules, dimension expressions, kernels and
# cases, the command line); `make test` runs the same fuzzers briefly. FUZZ_EXAMPLES=N per fuzzer.
FUZZ_EXAMPLES ?= 10000
.PHONY: fuzz
fuzz: $(VENV)/.installed-test
	EXPRGRAPH_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest -q -p no:cacheprovider tests/fuzz
