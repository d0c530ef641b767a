# Two commands from a fresh clone: `make book` and `make test`. Both set themselves up.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
READY  := $(VENV)/.requirements-installed
PIP    := $(BIN)/python -m pip --disable-pip-version-check -q

.PHONY: book test execute student serve lab clean

# The virtual environment. torch==2.13.0 first: where the machine has that CPU build on disk
# (as the course's build machines do) the `torch>=2.3` range below is then already satisfied,
# and pip does not download several GB of CUDA packages. Where it is unavailable, pip picks torch
# from requirements.txt as usual.
$(READY): requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip
	$(PIP) install torch==2.13.0 2>/dev/null || echo "torch==2.13.0 is not available here; installing torch from requirements.txt"
	$(PIP) install -r requirements.txt
	touch $(READY)

## make book: build the website into _build/html (notebooks executed through the cache)
book: $(READY)
	$(BIN)/jupyter-book build . -W -n --keep-going

## make test: the whole suite (see pytest.ini): unit tests, nbval on a lone copy of every
## notebook, the strict site build, the offline scan, browser and student-version tests
test: $(READY)
	$(BIN)/python -m tools.stage_notebooks _build/nbval >/dev/null
	$(BIN)/python -m pytest tests _build/nbval

## make execute [NB=notebooks/01_bottleneck.ipynb]: re-run notebooks in place, top to bottom
NB ?= notebooks/*.ipynb
execute: $(READY)
	for nb in $(NB); do \
	  echo "executing $$nb"; \
	  $(BIN)/jupyter nbconvert --to notebook --execute --inplace \
	    --ExecutePreprocessor.timeout=900 --ExecutePreprocessor.kernel_name=python3 \
	    --ExecutePreprocessor.store_widget_state=False "$$nb" || exit 1; \
	done

## make student: student notebooks without solutions in _build/student/
student: $(READY)
	$(BIN)/python -m tools.student_version _build/student

## make serve: open the built site on http://127.0.0.1:8000
serve:
	$(PYTHON) -m http.server 8000 --bind 127.0.0.1 --directory _build/html

## make lab: JupyterLab on the notebooks
lab: $(READY)
	$(BIN)/jupyter lab notebooks

clean:
	rm -rf _build
