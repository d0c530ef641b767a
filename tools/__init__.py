"""Build and authoring tools of the book: the site build, the notebook staging for nbval, the
student version, the shared helpers written into the notebooks, and the chapter registry."""
