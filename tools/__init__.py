"""The book's tools, by job (CONTRIBUTING.md, "How the pieces fit"):

- chapters.toml, registry.py: the one list of chapters, which everything below reads
- nbdefs.py: the one loader of what a notebook defines, for the tests and the seed studies
- site/: the website, its PDFs and the Colab-ready copies
- grading/: nbgrader's course, the student version, otter-grader, the instructors' table
- authoring/ and shared/: the helpers shared by the notebooks, and the tool that copies them in
- explorers/: the schemas of the site's explorers and the generated contract
- testing/: nbval's staging, sanitizers and plugin
- seed_studies/: research scripts whose printed spreads the chapters quote
- sphinx_ext/: a Sphinx extension of the site build
- colab-constraints.txt: Google Colab's pinned runtime
"""
