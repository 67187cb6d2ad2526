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
# promtool, for the PromQL checks (see its target below).
PROMTOOL := .tools/prometheus/usr/bin/promtool

.PHONY: plan test lint format bench docs clean tools

# pyproject.toml: the project installs itself (`-e .` in requirements-dev.txt).
$(STAMP): requirements.txt requirements-dev.txt constraints.txt pyproject.toml
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

test: $(STAMP) $(SCAN_STAMP) $(PROMTOOL)
	$(PY) -m pytest

# promtool for the PromQL checks of the dashboards and alerts (tests/observability/promql.py):
# Debian bookworm's `prometheus` package (2.42), downloaded and unpacked without root. Not
# pinned to a Debian revision: security updates replace it on the mirror. No fallback: the tests
# fail without it rather than skip (a skipped check reads as a passed one).
$(PROMTOOL):
	rm -rf .tools/download && mkdir -p .tools/download
	cd .tools/download && apt-get download prometheus || { \
	  echo "apt-get download prometheus failed: a Debian/Ubuntu machine whose package lists know it is" \
	    "needed (run 'apt-get update' as root), or set PROMTOOL to a promtool and run pytest" >&2; exit 1; }
	dpkg -x .tools/download/prometheus_*.deb .tools/prometheus
	rm -rf .tools/download
	$(PROMTOOL) --version | head -1
	touch $(PROMTOOL)

tools: $(PROMTOOL)

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

format: $(STAMP)
	$(PY) -m ruff check --fix .
	$(PY) -m ruff format .

bench: $(STAMP) $(SCAN_STAMP) $(PROMTOOL)
	$(PY) scripts/bench.py --tests

# The documentation site (docs/, mkdocs.yml) into build/site; `make test` does not need these
# requirements. NO_MKDOCS_2_WARNING silences Material's end-of-life banner (its own switch).
DOCS_STAMP := $(VENV)/.installed-docs

$(DOCS_STAMP): $(STAMP) requirements-docs.txt constraints.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-docs.txt -c constraints.txt
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict -d build/site

clean:
	rm -rf build .pytest_cache .ruff_cache .tools
