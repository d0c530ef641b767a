"""Helpers for whoever writes a chapter: the shared teaching helpers written into every notebook
(shared_code, from the canonical sources in tools/shared/)."""
