# Two commands on a fresh machine: `make plan` and `make test`. Both create .venv at the
# repository root and install the pinned dependencies when they are missing or changed;
# `make test` also creates .venv-scan with checkov (the outside scan of the manifests), which
# cannot share .venv (it pins packaging<24, pulumi needs >=26).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SCAN_VENV := .venv-scan
SCAN_STAMP := $(SCAN_VENV)/.installed
STACK ?= local

.PHONY: plan test lint format bench clean

$(STAMP): requirements.txt requirements-dev.txt constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt -c constraints.txt
	touch $(STAMP)

$(SCAN_STAMP): requirements-scan.txt
	test -x $(SCAN_VENV)/bin/python || $(PYTHON) -m venv $(SCAN_VENV)
	$(SCAN_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-scan.txt
	touch $(SCAN_STAMP)

# The plan ends by listing where it went (build/plan/$(STACK), or OUT=dir) and what each file holds.
plan: $(STAMP)
	$(PY) -m plan $(STACK) $(if $(OUT),--out $(OUT))

test: $(STAMP) $(SCAN_STAMP)
	$(PY) -m pytest

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

format: $(STAMP)
	$(PY) -m ruff check --fix .
	$(PY) -m ruff format .

bench: $(STAMP) $(SCAN_STAMP)
	$(PY) scripts/bench.py --tests

clean:
	rm -rf build .pytest_cache .ruff_cache
