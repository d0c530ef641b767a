# Two commands from a fresh clone: `make book` and `make test`. Both set themselves up.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
READY  := $(VENV)/.requirements-installed
# Google Colab's runtime, pinned (tools/colab-constraints.txt; see below)
COLAB_VENV := .venv-colab
JOBS   ?= 3
DURATIONS ?= 40
# One thread per kernel and per process in the suite (three workers share two cores; docs/decisions.md).
ONE_THREAD := OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
# pip installs without compiling every module to bytecode: Python compiles what it imports (docs/decisions.md).
export PYTHONDONTWRITEBYTECODE :=
PIP    := $(BIN)/python -m pip --disable-pip-version-check -q

.PHONY: book test test-fast test-chapter chapter derived execute student serve lab clean pdf constraints colab test-colab bench-site

# The virtual environment, with the exact versions of constraints.txt, so that a new release of a
# dependency cannot silently change a stored output. (Colab and readers who `pip install -r
# requirements.txt` get the ranges instead.) `make constraints` rewrites the pins from the venv.
$(READY): requirements.txt constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip
	$(PIP) install --no-compile -r requirements.txt -c constraints.txt
	touch $(READY)

## make book: build the website into _build/html (notebooks executed through the cache)
book: $(READY)
	$(BIN)/jupyter-book build . -W -n --keep-going

## make test: the whole suite (pytest.ini) on three pytest-xdist workers, the longest groups first
## (tools/testing/xdist_groups.py); CONTRIBUTING.md lists what it checks.
NBVAL_MODE ?= auto
export NBVAL_MODE
test:
	$(MAKE) --jobs=2 $(READY) $(COLAB_VENV)/.ready  # the two environments, side by side
	$(BIN)/python -m tools.testing.stage_notebooks _build/nbval >/dev/null
	$(BIN)/python -m tools.grading.sandbox install   # the graders' kernel sandbox (bubblewrap), when this machine has it
	$(ONE_THREAD) PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m pytest -n $(JOBS) --dist loadgroup --no-loadscope-reorder \
	  --durations=$(DURATIONS) tests/test_frontends.py tests/test_portability.py tests/test_grading.py tests/test_browser.py tests _build/nbval

## make test-fast: the one-minute tier, for the edit-check loop: the linter, then the unit tests, the registry and
## the derived-files check, without a kernel, a site build or a grader (tests marked `kernel` or `site` wait for make test)
FAST_TESTS := tests/test_lint.py tests/test_check_helpers.py tests/test_feedback.py tests/test_derived.py \
  tests/test_registry.py tests/test_plumbing.py tests/test_shared_copies.py tests/test_rubrics.py tests/test_errata.py \
  tests/test_suspicion.py tests/test_notebook_text.py tests/test_notebook_metadata.py tests/test_chapter_claims.py \
  tests/test_scheduling.py tests/test_explorer_configs.py tests/test_figure_text.py
test-fast: $(READY)
	$(BIN)/ruff check tools tests notebooks
	$(ONE_THREAD) $(BIN)/python -m pytest -n 2 -m "not kernel and not site" -p no:nbval -o addopts="-p tools.testing.xdist_groups -p no:cacheprovider -ra" $(FAST_TESTS)

## make test-chapter N=3 (or CH=03): one chapter's checks only, a few minutes (tools/testing/chapter_select.py):
## its unit tests, nbval on its stored outputs, its Colab re-run, its grading tests, its page's browser tests,
## the per-chapter checks of the other test files, and the derived-files check. NBVAL_MODE=lone|replay|auto.
test-chapter:
	@test -n "$(N)$(CH)" || { echo "make test-chapter N=<number>: which chapter? (e.g. make test-chapter N=3)"; exit 2; }
	$(MAKE) --jobs=2 $(READY) $(COLAB_VENV)/.ready
	$(BIN)/python -m tools.testing.stage_notebooks --chapter "$(N)$(CH)" _build/nbval >/dev/null
	$(BIN)/python -m tools.grading.sandbox install
	$(ONE_THREAD) PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m pytest -n $(JOBS) --dist loadgroup --no-loadscope-reorder \
	  --chapter "$(N)$(CH)" --durations=10 tests _build/nbval

## make chapter N=3: the one recipe after editing a chapter's text (notebooks/md/NN_name.md, the only file of it
## anyone edits): derive its notebook, execute it top to bottom, derive what depends on its outputs, check it
## (CHECK=test-chapter; tests/test_contributor.py's dry run checks with test-fast)
CHECK ?= test-chapter
chapter:
	@test -n "$(N)$(CH)" || { echo "make chapter N=<number>: which chapter? (e.g. make chapter N=3)"; exit 2; }
	$(MAKE) $(READY)
	@$(BIN)/python -m tools.registry notebook "$(N)$(CH)" >/dev/null
	$(MAKE) derived
	$(MAKE) execute NB="$$($(BIN)/python -m tools.registry notebook "$(N)$(CH)")"
	$(MAKE) derived
	$(MAKE) $(CHECK) N="$(N)$(CH)"

## make execute [NB=notebooks/NN_name.ipynb]: re-run notebooks in place, top to bottom, merge split prints
## and strip volatile metadata (nbstripout); keep the stored notebook when only volatile values changed
## (tools/authoring/rerun.py). FORCE=1 always writes the fresh run.
NB ?= $(shell $(PYTHON) -m tools.registry notebooks)  # the registry's chapters, in order
NBSTRIPOUT_OPTIONS := --keep-output --keep-count --keep-id --extra-keys "metadata.language_info.version"
execute: $(READY)
	mkdir -p _build/execute
	for nb in $(NB); do \
	  echo "executing $$nb"; \
	  $(BIN)/jupyter nbconvert --to notebook --execute --output-dir _build/execute \
	    --ExecutePreprocessor.timeout=900 --ExecutePreprocessor.kernel_name=python3 \
	    --ExecutePreprocessor.store_widget_state=False \
	    --NotebookExporter.preprocessors='["nbconvert.preprocessors.CoalesceStreamsPreprocessor"]' \
	    "$$nb" || exit 1; \
	  fresh=_build/execute/$$(basename "$$nb"); \
	  $(BIN)/nbstripout $(NBSTRIPOUT_OPTIONS) "$$fresh" || exit 1; \
	  $(BIN)/python -m tools.authoring.rerun "$$fresh" "$$nb" || exit 1; \
	done

## make bench-site: Lighthouse (mobile) on every page, served by nginx with gzip; a table in
## _build/bench/lighthouse.md (a measurement, not a test).
bench-site: $(READY)
	$(BIN)/python -m tools.site.bench $(if $(RUNS),--runs $(RUNS))

## make pdf: a PDF of each chapter in _build/pdf/, printed by Chromium from the built site (after make book)
pdf: $(READY)
	$(BIN)/python -m tools.site.pdf _build/html _build/pdf

## make student: student notebooks without solutions in _build/student/
student: $(READY)
	$(BIN)/python -m tools.grading.student_version _build/student

## make derived: rebuild every file generated from another (text copies, shared-helper copies, plumbing
## marks, colab/, the explorer contract, the pages' generated blocks), in order (tools/derived.py);
## make test fails while one is stale
derived: $(READY)
	$(BIN)/python -m tools.derived

## make colab: only the Colab-ready copies of make derived
colab: $(READY)
	$(BIN)/python -m tools.site.colab

## The environment pinned to Google Colab's runtime (tools/colab-constraints.txt: edit the pins there when
## Colab changes), in which make test runs every notebook once more; Colab's Python where it can be had.
$(COLAB_VENV)/.ready: tools/colab-constraints.txt constraints.txt tools/testing/colab_python.py
	rm -rf $(COLAB_VENV)
	py=$$($(PYTHON) -m tools.testing.colab_python $(PYTHON)) && $$py -m venv $(COLAB_VENV)
	names=$$(sed -n 's/^\([A-Za-z0-9_.-]*\)==.*/\1/p' tools/colab-constraints.txt | sed 's/[-_.]/[-_.]/g' | paste -sd'|'); \
	  grep -viE "^($$names|widgetsnbextension|jupyterlab[-_.]widgets)==" constraints.txt > $(COLAB_VENV)/tooling-constraints.txt
	$(COLAB_VENV)/bin/python -m pip --disable-pip-version-check -q install --no-compile \
	  -c tools/colab-constraints.txt -c $(COLAB_VENV)/tooling-constraints.txt \
	  torch numpy matplotlib ipywidgets ipython ipykernel jupyter_client nbclient nbformat nbval pytest filelock pyyaml
	touch $@

## make test-colab: only the Colab-runtime part of make test
test-colab: $(READY) $(COLAB_VENV)/.ready
	$(BIN)/python -m pytest -n $(JOBS) --dist loadgroup --no-loadscope-reorder tests/test_portability.py -k "Colab or colab"

## make serve: open the built site on http://127.0.0.1:8000
serve:
	$(PYTHON) -m http.server 8000 --bind 127.0.0.1 --directory _build/html

## make lab: JupyterLab on the Colab-ready copies in colab/ (notebooks/ holds the MyST sources)
lab: $(READY)
	$(BIN)/jupyter lab colab

## make constraints: pin constraints.txt to what the venv has now (after changing requirements.txt)
constraints: $(READY)
	$(BIN)/python -m pip freeze --exclude-editable | sed 's/+cpu$$//' > constraints.txt

clean:
	rm -rf _build
