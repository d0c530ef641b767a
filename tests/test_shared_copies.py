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
