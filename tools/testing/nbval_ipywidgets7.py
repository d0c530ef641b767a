"""A pytest plugin for nbval runs on ipywidgets 7 (Colab's runtime; tests/test_portability.py).

The stored outputs come from ipywidgets 8, where an explorer's output has three parts: the widget
view, the text/html that the website renders (explorers.js), and text/plain. ipywidgets 7 shows a
widget through `_ipython_display_`, which sends only the widget view and text/plain, so that
text/html is missing on Colab by design. For the cells whose stored output shows a widget, and only
for them, this plugin leaves text/html out of nbval's comparison and checks instead that the cell
does show a widget (nbval itself never compares widget views: their model ids are random). Every
other output is compared as usual.
"""
from __future__ import annotations

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def shows_a_widget(cell) -> bool:
    return any(WIDGET_VIEW in output.get("data", {}) for output in cell.get("outputs", []))


def pytest_collection_modifyitems(items):
    for item in items:
        cell = getattr(item, "cell", None)
        if cell is None or not shows_a_widget(cell):
            continue
        compare = item.compare_outputs

        def without_html(test, ref, skip_compare=None, compare=compare, item=item):
            if not any(WIDGET_VIEW in output.get("data", {}) for output in test):
                item.comparison_traceback = ["the cell shows a widget in the stored outputs, and none here"]
                return False
            return compare(test, ref, tuple(skip_compare or item.parent.skip_compare) + ("text/html",))

        item.compare_outputs = without_html
