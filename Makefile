# Two commands from a fresh clone: `make book` and `make test`. Both set themselves up.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
READY  := $(VENV)/.requirements-installed
# Google Colab's runtime, pinned (tools/colab-constraints.txt; see below)
COLAB_VENV := .venv-colab
JOBS   ?= 3
DURATIONS ?= 40
# One thread per kernel and per process in the suite: three workers share two cores, and with two threads
# each the kernels' OpenMP threads wait on each other (chapter 7 under nbval on an idle machine: 27.3 s and
# 26.8 CPU-s with one thread, 32.6 s and 28.5 CPU-s with two). The Colab re-run sets the same.
ONE_THREAD := OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
# pip installs without compiling every module to bytecode (--no-compile): Python compiles what is imported, on
# first import, and writes it (PYTHONDONTWRITEBYTECODE emptied, should the shell set it). Measured: the venv in
# 23 s instead of 69 s; most of torch, sympy and jupyterlab is never imported here.
export PYTHONDONTWRITEBYTECODE :=
PIP    := $(BIN)/python -m pip --disable-pip-version-check -q

.PHONY: book test test-chapter derived execute student serve lab clean pdf constraints colab test-colab bench-site

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

## make test: the whole suite (see pytest.ini) on three pytest-xdist workers for the two cores (with two,
## a third of the run waited on kernels, browsers and pip: 71 % CPU), --dist loadgroup (the tests of
## one xdist_group run on one worker; a test without a mark is in its file's group, a notebook's nbval
## cells included, tools/testing/xdist_groups.py; pages, explorer kinds, chapters are groups of their own): unit tests,
## every chapter run in JupyterLab (and the registry's notebook7 chapter in Notebook 7) with its stored outputs compared by nbval
## (tests/test_frontends.py; where Chromium is missing, nbval runs a lone copy of every notebook instead),
## the same again on Colab's versions under lowered SIMD dispatch (tests/test_portability.py), the strict
## site build, the offline scan, browser tests, grading tests. The longest files go first, so
## that pytest-xdist starts them early.
NBVAL_MODE ?= auto
export NBVAL_MODE
test:
	$(MAKE) --jobs=2 $(READY) $(COLAB_VENV)/.ready  # the two environments, side by side
	$(BIN)/python -m tools.testing.stage_notebooks _build/nbval >/dev/null
	$(ONE_THREAD) PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m pytest -n $(JOBS) --dist loadgroup --no-loadscope-reorder \
	  --durations=$(DURATIONS) tests/test_frontends.py tests/test_portability.py tests/test_grading.py tests/test_browser.py tests _build/nbval

## make test-chapter N=3 (or CH=03): one chapter's checks only, a few minutes (tools/testing/chapter_select.py):
## its unit tests, nbval on its stored outputs, its Colab re-run, its grading tests, its page's browser tests,
## the per-chapter checks of the other test files, and the derived-files check. NBVAL_MODE=lone|replay|auto.
test-chapter:
	@test -n "$(N)$(CH)" || { echo "make test-chapter N=<number>: which chapter? (e.g. make test-chapter N=3)"; exit 2; }
	$(MAKE) --jobs=2 $(READY) $(COLAB_VENV)/.ready
	$(BIN)/python -m tools.testing.stage_notebooks --chapter "$(N)$(CH)" _build/nbval >/dev/null
	$(ONE_THREAD) PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m pytest -n 2 --dist loadgroup --no-loadscope-reorder \
	  --chapter "$(N)$(CH)" --durations=10 tests _build/nbval

## make execute [NB=notebooks/NN_name.ipynb]: re-run notebooks in place, top to bottom; merge the
## consecutive pieces of one printed stream (nbconvert's CoalesceStreamsPreprocessor, after the run:
## how a print is split depends on timing), then strip what changes from run to run or machine to
## machine and is no result (nbstripout, keeping outputs, counts and cell ids): cell execution
## timestamps, widget state, the kernel's Python version. Last, keep the stored notebook when the fresh
## run differs from it only in volatile values (what nbval does not compare: its sanitizers' timings and
## float error sizes, widget ids, `# NBVAL_IGNORE_OUTPUT` cells; and `measured-time` figures), so that a
## re-run whose results did not change leaves `git diff` empty; else write the fresh run whole
## (tools/authoring/rerun.py). `make execute FORCE=1` always writes it.
## tests/test_notebook_metadata.py runs nbstripout --verify with these options on every stored notebook.
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

## make bench-site: Lighthouse (mobile, simulated throttling) on every page of the site, served by nginx
## with gzip on 127.0.0.1; a table in _build/bench/lighthouse.md (a measurement, not a test:
## the timings depend on the machine's load). Uses _build/html (make book) if it is there.
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

## make colab: rewrite the Colab-ready copies in colab/ from notebooks/ (tests/test_colab.py checks them)
colab: $(READY)
	$(BIN)/python -m tools.site.colab

## The environment pinned to Google Colab's runtime, in which `make test` runs every notebook once more
## (tests/test_portability.py). tools/colab-constraints.txt holds Colab's versions: edit the pins there
## when Colab changes. The test tooling around them keeps the pins of constraints.txt.
## Its interpreter is Colab's Python (3.13) where this machine has one with a CPU build of torch, else
## $(PYTHON), with the reason printed (tools/testing/colab_python.py).
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

## make lab: JupyterLab on the Colab-ready copies in colab/, which Jupyter renders as the site does
## (notebooks/ holds the MyST sources of the website: JupyterLab would show their roles and directives raw)
lab: $(READY)
	$(BIN)/jupyter lab colab

## make constraints: pin constraints.txt to what the venv has now (after changing requirements.txt)
constraints: $(READY)
	$(BIN)/python -m pip freeze --exclude-editable | sed 's/+cpu$$//' > constraints.txt

clean:
	rm -rf _build
