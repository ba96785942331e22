# Set-up and everyday commands. Each target creates .venv when it is missing and installs what it needs.
# `make test PYTHON=python3.12 VENV=.venv-3.12` runs on another interpreter; `make test-all` on each
# supported one.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
COMMA := ,
# the sources the build compiles (the C term base, the dims fast path): an edit rebuilds
BUILD_SOURCES := $(wildcard src/exprgraph/dims/*.py src/exprgraph/poly/ring.py src/exprgraph/poly/monomials.py src/exprgraph/interop/torch.py src/exprgraph/interop/torch_read.py src/exprgraph/interop/torch_calls.py src/exprgraph/accel.py src/exprgraph/core/_cterm*.[ch] src/exprgraph/diff/_csweep*.[ch] src/exprgraph/compile/_cvm*.[ch])

.PHONY: demo test suite test-all lint bench bench-models bench-opf torch-record clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml setup.py $(BUILD_SOURCES) | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

# Every install builds the C term base and the dimension simplifier's fast path compiled by mypyc
# (mypy is a build requirement: see setup.py, which falls back to pure Python when it cannot
# compile). Any change to one of them rebuilds (BUILD_SOURCES, above).
define install_compiled
	$(BIN)/python -m pip install -q -e ".[$(1)]"
endef

$(VENV)/.installed-test: pyproject.toml setup.py $(BUILD_SOURCES) | $(BIN)/python
	$(call install_compiled,test)
	touch $@

$(VENV)/.installed-bench: pyproject.toml setup.py $(BUILD_SOURCES) | $(BIN)/python
	$(call install_compiled,test$(COMMA)bench)
	touch $@

demo: $(VENV)/.installed
	$(BIN)/exprgraph demo

# each venv keeps its own mypy cache (`make test VENV=.venv-3.12` beside another venv's run would race on a shared one)
lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy --cache-dir $(VENV)/.mypy_cache

test: lint suite

# the tests alone, compiled then pure Python (lint's results do not depend on the interpreter: mypy
# checks for python_version 3.11 whichever runs it)
suite: $(VENV)/.installed-test
	EXPRGRAPH_EXPECT_COMPILED=1 $(BIN)/python -m pytest -q --durations=15
	EXPRGRAPH_PURE_PYTHON=1 $(BIN)/python -m pytest -q -p no:cacheprovider tests/dims tests/core tests/diff

# The suite on every supported Python, each in its own venv (.venv-3.11, .venv-3.12, .venv-3.13);
# .ci/find-python finds each interpreter (on the PATH or installed by pyenv). The versions are
# independent targets: `make -j3 --output-sync=target test-all` runs them side by side.
PYTHONS ?= 3.11 3.12 3.13
test-all: $(addprefix test-python-,$(PYTHONS))

test-python-%:
	@py=$$(.ci/find-python $*); echo "== Python $*: $$py"; \
	$(MAKE) --no-print-directory suite PYTHON=$$py VENV=.venv-$*

bench: $(VENV)/.installed-bench
	$(BIN)/python -m bench

# The benchmarks on real models (torch, transformers, onnxruntime: several GB): the ONNX exports of
# transformer and CNN architectures against onnxruntime's and onnx's shape inference, and the
# questions torch.compile asks replayed through DimEnv. The corpus is built once, under bench/data.
$(VENV)/.installed-models: pyproject.toml setup.py $(BUILD_SOURCES) | $(BIN)/python
	$(call install_compiled,test$(COMMA)bench$(COMMA)models)
	touch $@

bench-models: $(VENV)/.installed-models
	$(BIN)/python -m bench.bench_onnx_models
	$(BIN)/python -m bench.bench_torch_dims

# AC optimal power flow, case5 to case2869pegase, against CasADi SX + IPOPT (minutes; case9241pegase and
# case13659pegase with --cases: about 3 and 10 minutes more on 2 cores)
$(VENV)/.installed-opf: pyproject.toml setup.py $(BUILD_SOURCES) | $(BIN)/python
	$(call install_compiled,test$(COMMA)bench$(COMMA)opf)
	touch $@

bench-opf: $(VENV)/.installed-opf
	$(BIN)/python -m bench.bench_opf

# Record again the questions torch.compile(dynamic=True) asks (about 35 minutes on 2 cores)
torch-record: $(VENV)/.installed-models
	$(BIN)/python -m bench.torch_record && $(BIN)/python -m bench.torch_record --sample 300

clean:
	rm -rf $(VENV) .venv-3.* build src/*.egg-info .pytest_cache .mypy_cache
	find src -name '*.so' -delete

# A long run of the fuzzers: every parser (expressions, rules, dimension expressions, kernels and cases,
# the command line), the term constructor, the converters, ONNX inference, and the answers of simplify,
# the derivatives, the compiled backends and DimEnv; `make test` runs them briefly. FUZZ_EXAMPLES=N per fuzzer.
FUZZ_EXAMPLES ?= 10000
.PHONY: fuzz
fuzz: $(VENV)/.installed-test
	EXPRGRAPH_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest -q -p no:cacheprovider tests/fuzz
