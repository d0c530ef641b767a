"""Every copy of a shared teaching helper in a notebook equals its canonical source in tools/shared/.

The notebooks stand alone on Colab, so the helpers are copied into them; `python -m
tools.authoring.shared_code sync` writes the copies, and this test fails when one has drifted or when a
notebook defines a shared helper outside a marked copy.
"""
from tools.authoring import shared_code


def test_every_shared_helper_copy_matches_its_canonical_source():
    problems = shared_code.problems()
    assert not problems, "\n".join(problems)


def test_the_canonical_sources_are_well_formed():
    sources = shared_code.canonical()
    assert set(shared_code.REQUIRED) <= set(sources)
    for name, text in sources.items():
        compile(text, f"tools/shared/{name}.py", "exec")


def test_a_helper_taught_in_place_is_checked_against_its_chapter():
    """toy_corpus is written out step by step in the chapter that teaches it: a definition changed there,
    and not in tools/shared/toy_corpus.py (which later chapters copy), is found."""
    source = shared_code.canonical()["toy_corpus"]
    stem = shared_code.TAUGHT_IN["toy_corpus"]
    code = "\n".join(text for _, _, text in shared_code._cells(__import__("nbformat").read(
        shared_code.ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)))
    assert not shared_code.untaught("toy_corpus", source, code, stem[:2])
    edited = code.replace('"cat": ("chat", "m")', '"cat": ("chatte", "f")')
    assert edited != code and len(shared_code.untaught("toy_corpus", source, edited, stem[:2])) == 1
