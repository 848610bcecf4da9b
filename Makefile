# Thin task runner. Every target that needs the virtual environment creates it first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
CORPUS ?= $(or $(MLSUBMIT_CORPUS),../shared/corpus)
RULESET ?= 1.1.0
# The supported mlperf-logging range (pyproject.toml) is tested at both ends: `make test-all` with the newest, `make
# test-compat` the differential tests with the oldest. checker/upstream/rcp_fit.py names the same two.
NEWEST_MLPERF_LOGGING := 4.1.68
OLDEST_MLPERF_LOGGING := 4.1.30
# Bytecode for the editable install, as pip writes it for a regular one: without it every run compiles our modules
# again (~50 ms) when PYTHONDONTWRITEBYTECODE is set. Python ignores a .pyc older than its source.
COMPILE = $(PY) -m compileall -q mlsubmit checker submission

.PHONY: install install-machine test test-all test-differential test-install test-browser test-compat demo check bench bench-tree lint \
	clean

install: $(STAMP)

# What the tests and the demo need beyond Python packages: bubblewrap (verify --official confines mlperf-logging's
# tools with it) and PostgreSQL (the shared ledger's tests start a server of their own). apt-get installs what is
# missing when run as root; otherwise the script names what to install.
install-machine:
	@bash tools/setup_machine.sh

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]' 'mlperf-logging==$(NEWEST_MLPERF_LOGGING)'
	$(COMPILE)
	touch $(STAMP)

# The tests in tiers, one folder each (docs/architecture.md, "Tests"): `make test` runs the fast ones (unit, cli),
# `make test-all` every tier in one run (the session-wide reference runs are shared by all its tests), and each slow
# tier has its own target. -n auto: one test process per core (pytest-xdist); --dist worksteal so that a core left
# without work takes some from the other at the end.
FAST_TIERS := tests/unit tests/cli
ALL_TIERS  := $(FAST_TIERS) tests/differential tests/install tests/browser
# PYTHONDONTWRITEBYTECODE= : pytest keeps each test module with its asserts rewritten in __pycache__, as it does by
# default; with the variable set it rewrites all of them on every run (most of the collection's time).
# Exit 5 is pytest's "no test ran": a tier with nothing in it (or all deselected) passes.
pytest_tier = code=0; MLSUBMIT_CORPUS=$(CORPUS) PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q -rs $(1) || code=$$?; \
	if [ $$code -eq 5 ]; then echo "no test ran in $(2)"; code=0; fi; exit $$code
test: $(STAMP) install-machine
	@$(call pytest_tier,-n auto --dist worksteal $(FAST_TIERS),$(FAST_TIERS))

test-all: $(STAMP) install-machine
	@$(call pytest_tier,-n auto --dist worksteal $(ALL_TIERS),$(ALL_TIERS))

# mlperf-logging's own tools (package checker, summarizer, compliance and RCP checkers) and the corpus, compared with
# ours; they run the reference's checkers one process at a time, so a second worker is most of the gain.
test-differential: $(STAMP) install-machine
	@$(call pytest_tier,-n auto --dist worksteal tests/differential,tests/differential)

# What builds a wheel, makes a venv or clones the repository (the installed package, pre-commit, CI examples, the
# newcomer's steps).
test-install: $(STAMP) install-machine
	@$(call pytest_tier,-n auto --dist worksteal tests/install,tests/install)

demo: $(STAMP) install-machine
	$(PY) tools/demo.py build/demo

# The differential tests (rule files, RCP checker, package checker against the installed reference) with the oldest
# supported mlperf-logging, in a venv of their own under build/. Rounds that release has no rules for (6.0, 6.1)
# are left out by the tests that ask for them.
COMPAT_VENV := build/compat-venv
COMPAT_TESTS := tests/differential/test_reference_folders.py tests/differential/test_reference_package.py \
	tests/differential/test_reference_parity.py tests/differential/test_rcp.py tests/differential/test_rcp_lines.py \
	tests/differential/test_rcp_fallback.py tests/unit/checker/rules/test_engine.py \
	tests/unit/checker/rules/test_safe_eval.py tests/differential/test_hyperparameters_corpus.py \
	tests/unit/project/test_mlperf_logging_range.py
test-compat: $(COMPAT_VENV)/.installed
	MLSUBMIT_CORPUS=$(CORPUS) PYTHONDONTWRITEBYTECODE= $(COMPAT_VENV)/bin/python -m pytest -q -rs $(COMPAT_TESTS)

$(COMPAT_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(COMPAT_VENV)
	$(COMPAT_VENV)/bin/python -m pip install -q -e '.[dev]' 'mlperf-logging==$(OLDEST_MLPERF_LOGGING)'
	touch $@

# The pre-submission gate: paths and ruleset come from mlsubmit.toml ([check]); RULESET=X.Y.Z on the make command
# line overrides the ruleset, CHECK_ARGS passes options to `mlsubmit check` (e.g. --format junit -o gate.xml).
check: $(STAMP)
	$(PY) tools/gate.py $(if $(filter-out file,$(origin RULESET)),--ruleset $(RULESET)) $(CHECK_ARGS)

bench: $(STAMP)
	$(COMPILE)
	MLSUBMIT_CORPUS=$(CORPUS) $(PY) tools/bench.py
	MLSUBMIT_CORPUS=$(CORPUS) $(PY) tools/bench_tree.py

# Tree figures alone: corpus vs the reference package checker (on copies), cache cold/warm, re-check after a change.
bench-tree: $(STAMP)
	$(COMPILE)
	MLSUBMIT_CORPUS=$(CORPUS) $(PY) tools/bench_tree.py

# mypy and import-linter cannot follow setuptools' package-dir mapping, so they check a symlinked view of the import
# package; tools/ import the test fixtures from tests/ (as `fixtures`). lint-imports keeps the layers (pyproject's
# [tool.importlinter]); check_sizes the 50/400-line limits.
TYPEVIEW := build/typecheck
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	rm -rf $(TYPEVIEW) && mkdir -p $(TYPEVIEW)/mlsubmit
	for f in mlsubmit/*; do ln -s "$(CURDIR)/$$f" $(TYPEVIEW)/mlsubmit/; done
	ln -s $(CURDIR)/checker $(TYPEVIEW)/mlsubmit/checker
	ln -s $(CURDIR)/submission $(TYPEVIEW)/mlsubmit/submission
	ln -s $(CURDIR)/schemas $(TYPEVIEW)/mlsubmit/schemas
	cd $(TYPEVIEW) && $(CURDIR)/$(VENV)/bin/mypy --config-file $(CURDIR)/pyproject.toml -p mlsubmit
	cd $(TYPEVIEW) && MYPYPATH=$(CURDIR)/tests $(CURDIR)/$(VENV)/bin/mypy --config-file $(CURDIR)/pyproject.toml $(CURDIR)/tools/*.py
	cd $(TYPEVIEW) && $(CURDIR)/$(VENV)/bin/lint-imports --config $(CURDIR)/pyproject.toml
	$(PY) tools/check_sizes.py

clean:
	rm -rf build dist *.egg-info .mypy_cache .ruff_cache

# `mlsubmit advise` on open IPU runs (issue #3), shown first by `make demo`: a synthetic open IPU-POD16 ResNet-50
# run whose LARS settings break the closed table, then a published open Graphcore BERT run when the corpus is there.
ADVISE_DEMO := build/demo-advise
.PHONY: demo-advise
demo: demo-advise
# A step meant to find errors: prints the command and its exit status, and fails the target only on exit 2 or more
# (a usage or internal error), so findings do not show as a make error.
expect_findings = echo '$$ mlsubmit $(1)'; code=0; $(VENV)/bin/mlsubmit $(1) || code=$$?; \
	if [ $$code -eq 1 ]; then echo "(exit 1: $(2))"; else echo "(exit $$code)"; fi; [ $$code -le 1 ]
demo-advise: $(STAMP)
	@rm -rf $(ADVISE_DEMO)
	@printf '\n=== What closed would need of an open IPU-POD16 ResNet-50 run, in $(ADVISE_DEMO)/\n'
	@PYTHONPATH=tests $(PY) -c "from fixtures.synth import RunSpec, write_run; write_run('$(ADVISE_DEMO)/ipu-pod16-open/resnet/result_0.txt', RunSpec(benchmark='resnet', ruleset='1.0.0', division='open', platform='ipu-pod16-TF1-open', hyperparameters={'global_batch_size': 3264, 'lars_opt_momentum': 0.95, 'lars_opt_weight_decay': 3e-05}))"
	@$(call expect_findings,advise --ruleset 1.0.0 --color never $(ADVISE_DEMO)/ipu-pod16-open/resnet/result_0.txt,as expected: the run breaks the closed table)
	@if [ -d "$(CORPUS)/training_results_v1.0" ]; then printf '\n=== The same advice on a published open Graphcore BERT run\n'; $(call expect_findings,advise --ruleset 1.0.0 --color never $(CORPUS)/training_results_v1.0/Graphcore/results/ipu-pod16-POPART-open/bert,advice found); fi

# The HTML report in a real browser (issue #7): installs Debian's chromium when it is missing, then runs the tier.
# `make test-all` runs the tier without installing anything: without chromium its tests skip and say so.
test-browser: $(STAMP)
	command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }
	@$(call pytest_tier,tests/browser,tests/browser)
