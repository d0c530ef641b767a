"""The book's tools, by job (CONTRIBUTING.md, "Architecture"):

- chapters.toml, registry.py: the one list of chapters, and every fact about one, which everything below reads
- derived.py: `make derived`, every file generated from another, in order, and the check that none is stale
- nbdefs.py: the one loader of what a notebook defines, for the tests and the seed studies
- site/: the website, its PDFs and the Colab-ready copies
- grading/: nbgrader's course, the student version, otter-grader, the instructors' table
- authoring/ and shared/: the helpers shared by the notebooks and the tool that copies them in, the
  pages' generated chapter lists, plumbing marks, the re-run that keeps unchanged outputs
- explorers/: the schemas of the site's explorers and the generated contract
- testing/: nbval's staging and sanitizers, and the pytest plugins (replay, xdist groups, one chapter)
- seed_studies/: research scripts whose printed spreads the chapters quote
- sphinx_ext/: the site build's Sphinx extensions (formulas typeset at build time, page speed, icons)
- colab-constraints.txt: Google Colab's pinned runtime
"""
