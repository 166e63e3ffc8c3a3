# mqlab: set-up and everyday commands. The README's quick start is exactly `make lab` and `make test`.
#
#   make lab      create/refresh .venv, copy notebooks/ into the git-ignored work/ (only what work/
#                 lacks: a learner's edits are never overwritten), then JupyterLab on work/ at
#                 http://127.0.0.1:$(PORT); autosaves land in work/, the checkout stays clean
#   make reset-lesson L=06   put lesson 06's notebooks in work/ back to notebooks/'s (the old
#                 copy is kept in work/.reset/); refuses while the lesson is open in a running lab
#   make lab-instructor      JupyterLab on the whole checkout (lessons/*.md open as notebooks
#                 with Open With -> Jupytext Notebook; edits here change tracked files)
#   make test     create/refresh .venv, check Java 17, make sure Chromium is there for the browser
#                 tests (installs Debian's chromium when root), run the whole suite (CI: .ci/run).
#                 tools/run_tests.py runs it as seven pytest processes in four lanes side by
#                 side, so the real broker's waits overlap the CPU-bound tests: real-broker
#                 (tests/conformance, tests/interop) then browser (tests/e2e); net (tests/net)
#                 then core (the rest of tests/, nice 10); lab (tests/lab, nice 10); spark (tests/experiments,
#                 nice 10) then notebooks (notebooks/solutions via nbmake, nice 10). Each group's
#                 output is printed whole when it ends; the last line is the total over all groups
#                 (CONTRIBUTING.md §2, "What runs in parallel")
#   make lessons  rebuild notebooks/ (learner and solutions copies) from their sources in lessons/*.md
#   make doctor   report Python, Java, installer and environment state
#   make clean    remove .venv and caches
#
# Knobs (environment or `make VAR=value`):
#   PYTHON=/path/to/python3.11   interpreter for .venv (default: python3.11, else python3 if >= 3.11)
#   MQLAB_SKIP_SPARK=1           run without Java: Spark tests are deselected (-m "not spark")
#   MQLAB_SKIP_E2E=1             no Chromium check/install; browser tests deselected (-m "not e2e")
#   MQLAB_E2E_CHROMIUM=/path     Chromium/Chrome for tests/e2e (default: Debian's chromium package)
#   MQLAB_SKIP_CONFORMANCE=1     leave out the tiers that run the real RocketMQ 4.9.3 broker
#                                (tests/conformance, tests/interop: -m "not conformance and not interop")
#   MQLAB_REQUIRE_CONFORMANCE=1  fail (not skip) when those tiers cannot run: no JDK 17 or Maven (CI)
#   MQLAB_NO_UV=1                use pip + venv even when uv is on PATH (CI has no uv: pip is the tested path)
#   PYTEST_ARGS="-x -k foo"      extra pytest options for `make test`, given to every group but notebooks (options,
#                                not paths: for a few modules run .venv/bin/python -m pytest PATH)
#   MQLAB_TEST_SERIAL=1          run the groups one after the other, output as it comes
#   MQLAB_TEST_GROUP_TIMEOUT=3600  stop a group still running after this many seconds (a failure)
#   PORT=8888  LAB_ARGS=...      JupyterLab port and extra arguments for `make lab`
#
# Portable to GNU make 3.81 (macOS) and POSIX sh: no .ONESHELL, no .RECIPEPREFIX, no bashisms in recipes.

SHELL := /bin/sh
.DEFAULT_GOAL := help

VENV     := .venv
VENV_PY  := $(VENV)/bin/python
EXTRAS   := spark,dev
# The stamp's name carries pyproject.toml's checksum: editing pyproject.toml re-runs the install.
STAMP    := $(VENV)/.mqlab-installed-$(firstword $(shell cksum < pyproject.toml))

# First of python3.11, python3 that runs and is >= 3.11 (a pyenv shim without 3.11 is skipped).
ifeq ($(origin PYTHON),undefined)
PYTHON := $(shell for p in python3.11 python3; do \
            if command -v $$p >/dev/null 2>&1 && \
               $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then \
              command -v $$p; break; fi; done)
endif

UV := $(if $(filter 1 true yes,$(MQLAB_NO_UV)),,$(shell command -v uv 2>/dev/null))

SKIP_SPARK  := $(filter 1 true TRUE True yes YES,$(MQLAB_SKIP_SPARK))
SKIP_E2E    := $(filter 1 true TRUE True yes YES,$(MQLAB_SKIP_E2E))
SKIP_CONF   := $(filter 1 true TRUE True yes YES,$(MQLAB_SKIP_CONFORMANCE))
# Deselected markers, joined as "not a and not b ...".
NOT_MARKS   := $(strip $(if $(SKIP_SPARK),spark) $(if $(SKIP_E2E),e2e) \
                 $(if $(SKIP_CONF),conformance interop))
EMPTY       :=
SPACE       := $(EMPTY) $(EMPTY)
MARK_EXPR   := $(if $(NOT_MARKS),not $(subst $(SPACE), and not ,$(NOT_MARKS)))
PYTEST_MARK := $(if $(MARK_EXPR),-m "$(MARK_EXPR)",)

PORT     ?= 8888
LAB_ARGS ?=
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)
# What both labs pass to JupyterLab: notebooks (and lesson sources) open unmodified and save
# as they were (mqlab/lab/contents.py); no news or update checks, on the server (no request to
# the internet) and in the page: mqlab/lab/jupyter_config/labconfig/default_setting_overrides.json
# makes fetchNews "false" and checkForUpdates false the defaults, so the "Would you like to get
# notified about official Jupyter news?" toast never covers a lesson (a user's own settings still win).
LAB_FLAGS := --ServerApp.contents_manager_class=mqlab.lab.contents.LessonContentsManager \
             --LabApp.news_url=None --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate
# Their kernels run mqlab/lab/kernel_startup.py first (PYTHONSTARTUP): a NameError in a cell run
# before the lesson's first cell also says to run the notebook from the top.
LAB_ENV  := JUPYTER_CONFIG_PATH="$(CURDIR)/mqlab/lab/jupyter_config$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH}" \
            PYTHONSTARTUP="$(CURDIR)/mqlab/lab/kernel_startup.py"

# Environment for tests, the lab and the notebooks they run.
export MQLAB_SKIP_SPARK MQLAB_SKIP_E2E MQLAB_E2E_CHROMIUM
export MQLAB_SKIP_CONFORMANCE MQLAB_REQUIRE_CONFORMANCE MQLAB_TEST_SERIAL MQLAB_TEST_GROUP_TIMEOUT
export SPARK_LOCAL_IP ?= 127.0.0.1
export PYSPARK_PYTHON ?= $(CURDIR)/$(VENV_PY)
export UV_PYTHON_DOWNLOADS ?= never

.PHONY: help lab lab-instructor reset-lesson test lessons venv check-python check-java check-conformance doctor e2e-deps clean

help:
	@echo "make lab      JupyterLab on work/, your copy of notebooks/ (http://127.0.0.1:$(PORT)); creates .venv on first run"
	@echo "make reset-lesson L=06   lesson 06 in work/ back to the original (your copy kept in work/.reset/)"
	@echo "make lab-instructor      JupyterLab on the whole checkout: lessons/*.md, notebooks/ (tracked files)"
	@echo "make test     the whole test suite (tests/ and the solutions notebooks, in 6 groups, 4 lanes side by side); what CI runs"
	@echo "make lessons  rebuild notebooks/ from the lesson sources in lessons/*.md"
	@echo "make doctor   check Python >= 3.11, Java >= 17, Maven (conformance tier) and the rest"
	@echo "make clean    remove .venv and caches"
	@echo "MQLAB_SKIP_SPARK=1 make test   run without Java (Spark tests deselected)"
	@echo "MQLAB_SKIP_E2E=1 make test     no Chromium install, browser tests deselected"
	@echo "MQLAB_SKIP_CONFORMANCE=1 make test   leave out the real-broker tiers (conformance, interop)"

# The learners' lab is rooted at work/, a git-ignored copy of notebooks/ made on first start
# (mqlab/lab/workspace.py): JupyterLab's autosave writes there, never into the tracked notebooks.
lab: $(STAMP)
	@bash scripts/check_java.sh || echo "(JupyterLab starts anyway; only the Spark lessons need Java.)"
	@$(VENV_PY) -m mqlab lab prepare
	@echo "==> JupyterLab on work/ (your copy of notebooks/) at http://127.0.0.1:$(PORT) (Ctrl-C to stop)"
	$(LAB_ENV) $(VENV)/bin/jupyter lab --ip 127.0.0.1 --port $(PORT) --ServerApp.root_dir=work \
	    $(LAB_FLAGS) $(ALLOW_ROOT) $(LAB_ARGS)

reset-lesson: $(STAMP)
	@if [ -z "$(L)" ]; then echo "usage: make reset-lesson L=06" >&2; exit 2; fi
	$(VENV_PY) -m mqlab lab reset $(L)

# Rooted at the checkout so that lessons/NN_name.md can be opened with Open With -> Jupytext
# Notebook (jupytext's server extension wraps the contents manager below); saves change tracked files.
lab-instructor: $(STAMP)
	@echo "==> JupyterLab on the checkout (lessons/, notebooks/) at http://127.0.0.1:$(PORT) (Ctrl-C to stop)"
	$(LAB_ENV) $(VENV)/bin/jupyter lab --ip 127.0.0.1 --port $(PORT) --ServerApp.root_dir=. \
	    $(LAB_FLAGS) $(ALLOW_ROOT) $(LAB_ARGS)

# check-java comes first so a missing Java fails in a second, before the ~1 minute install; then
# check-conformance (says whether the real-broker tiers run or are skipped, and why; fails only with
# MQLAB_REQUIRE_CONFORMANCE=1) and e2e-deps (Chromium for tests/e2e: never fails, at worst the
# browser tests are skipped).
test: check-java check-conformance e2e-deps $(STAMP)
	@$(VENV_PY) tools/run_tests.py $(PYTEST_MARK) --durations=10 $(PYTEST_ARGS)

# The notebooks are built from lessons/NN_name.md (jupytext MyST Markdown): learner copy in notebooks/,
# worked answers in notebooks/solutions/. Byte-stable; tests/lab/test_lesson_sources.py fails when a
# committed notebook is out of date with its source.
lessons: $(STAMP)
	$(VENV_PY) tools/build_lessons.py

venv: $(STAMP)

$(STAMP):
	@$(MAKE) --no-print-directory check-python
	@if [ ! -x $(VENV_PY) ] || ! $(VENV_PY) -c 'import sys' >/dev/null 2>&1; then \
	  echo "==> creating $(VENV) with $(PYTHON) ($$($(PYTHON) -V 2>&1))"; \
	  rm -rf $(VENV); \
	  if [ -n "$(UV)" ]; then \
	    $(UV) venv --seed --python "$(PYTHON)" $(VENV); \
	  else \
	    "$(PYTHON)" -m venv $(VENV) || { \
	      echo "ERROR: '$(PYTHON) -m venv' failed. On Debian/Ubuntu: sudo apt-get install python3.11-venv" >&2; \
	      rm -rf $(VENV); exit 1; }; \
	  fi; \
	fi
	@echo "==> installing mqlab[$(EXTRAS)] into $(VENV) with $(if $(UV),uv,pip) (a new env takes about a minute: pyspark is a ~450 MB download)"
ifneq ($(UV),)
	$(UV) pip install --python $(VENV_PY) -e '.[$(EXTRAS)]'
else
	$(VENV_PY) -m pip install --progress-bar off -q -e '.[$(EXTRAS)]'
endif
	@rm -f $(VENV)/.mqlab-installed-*
	@touch $@

check-python:
	@if [ -z "$(PYTHON)" ]; then \
	  echo "ERROR: Python >= 3.11 not found (looked for python3.11, then python3)." >&2; \
	  echo "Install Python 3.11 (Debian/Ubuntu: sudo apt-get install python3.11 python3.11-venv;" \
	       "macOS: brew install python@3.11) or pass PYTHON=/path/to/python3.11." >&2; \
	  exit 1; \
	fi

check-java:
	@bash scripts/check_java.sh

check-conformance:
	@bash scripts/check_conformance.sh

doctor:
	@rc=0; \
	if [ -n "$(PYTHON)" ]; then echo "Python: $(PYTHON) ($$($(PYTHON) -V 2>&1)) -- ok"; \
	else echo "Python: no python3.11 / python3 >= 3.11 found -- install Python 3.11"; rc=1; fi; \
	MQLAB_SKIP_SPARK= bash scripts/check_java.sh 2>&1 || { \
	  if [ -n "$(SKIP_SPARK)" ]; then echo "(MQLAB_SKIP_SPARK=1: make test will deselect the Spark tests)"; \
	  else rc=1; fi; }; \
	MQLAB_REQUIRE_CONFORMANCE= bash scripts/check_conformance.sh; \
	echo "Installer: $(if $(UV),uv ($(UV)),pip + venv)"; \
	bash scripts/ensure_chromium.sh --check | head -n 1; \
	if [ -f $(STAMP) ]; then echo "Environment: $(VENV) up to date with pyproject.toml"; \
	elif [ -d $(VENV) ]; then echo "Environment: $(VENV) exists but pyproject.toml changed (make lab/test refreshes it)"; \
	else echo "Environment: no $(VENV) yet (make lab/test creates it)"; fi; \
	echo "SPARK_LOCAL_IP=$(SPARK_LOCAL_IP)"; \
	exit $$rc

# Browser end-to-end tier (tests/e2e, marker e2e; CONTRIBUTING.md §4): Debian's
# chromium driven by Playwright (Python). As root with apt-get, installs the `chromium` package when no
# Chromium is found (never upgrades); otherwise says the e2e tests will be skipped and how to install it.
e2e-deps:
	@bash scripts/ensure_chromium.sh

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis .cache spark-warehouse artifacts build dist *.egg-info
	find . -name __pycache__ -type d -prune -not -path './.git/*' -exec rm -rf {} +
	find . -name .ipynb_checkpoints -type d -prune -not -path './.git/*' -exec rm -rf {} +
