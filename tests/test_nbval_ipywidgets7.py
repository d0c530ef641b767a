"""tools/testing/nbval_ipywidgets7.py, the nbval plugin of the Colab run: for a cell whose stored output is a
widget it leaves text/html out of the comparison, and fails the cell when no widget is shown."""
from __future__ import annotations

from types import SimpleNamespace

from tools.testing import nbval_ipywidgets7 as plugin

WIDGET = {"application/vnd.jupyter.widget-view+json": {"model_id": "a"}, "text/plain": "<x explorer>"}


def item_with(stored_outputs):
    """A stand-in for nbval's cell item, whose compare_outputs records what it was asked to skip."""
    item = SimpleNamespace(cell={"outputs": stored_outputs}, parent=SimpleNamespace(skip_compare=("metadata",)),
                           comparison_traceback=[], asked=[])
    item.compare_outputs = lambda test, ref, skip_compare=None: item.asked.append(skip_compare) or True
    return item


def test_a_widget_cell_is_compared_without_text_html():
    item = item_with([{"output_type": "display_data", "data": {**WIDGET, "text/html": "<div>"}}])
    plugin.pytest_collection_modifyitems([item])
    assert item.compare_outputs([{"data": WIDGET}], item.cell["outputs"]) is True
    assert item.asked == [("metadata", "text/html")]


def test_a_widget_cell_without_a_widget_fails():
    item = item_with([{"output_type": "display_data", "data": {**WIDGET, "text/html": "<div>"}}])
    plugin.pytest_collection_modifyitems([item])
    assert item.compare_outputs([{"data": {"text/plain": "<x explorer>"}}], item.cell["outputs"]) is False
    assert item.asked == [] and "none here" in item.comparison_traceback[0]


def test_other_cells_are_left_to_nbval():
    item = item_with([{"output_type": "stream", "name": "stdout", "text": "1\n"}])
    original = item.compare_outputs
    plugin.pytest_collection_modifyitems([item, SimpleNamespace()])
    assert item.compare_outputs is original
