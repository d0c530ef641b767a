# shared helper: site_explorer (one explorer: ipywidgets in Jupyter and Colab, JavaScript on the website)
import html
import json

import ipywidgets as widgets


class SiteExplorer(widgets.VBox):
    """ipywidgets in Jupyter and Colab; on the book's website, the same explorer in JavaScript.

    `kind` names the explorer (its renderer in the site's explorers.js), `config` holds the numbers
    both sides compute from, and `children` are the ipywidgets shown in a live notebook.
    """

    def __init__(self, kind, config, children):
        super().__init__(children)
        self.kind = kind
        self.config = config
        self.site_html = (
            f'<div class="attn-explorer" data-kind="{kind}" '
            f'data-config="{html.escape(json.dumps(config), quote=True)}">'
            f'<p class="attn-explorer-fallback">This explorer needs JavaScript; '
            f'the figure next to it shows the same computation.</p></div>'
        )

    def __repr__(self):
        # ipywidgets 7 (Colab) shows a widget through _ipython_display_, with repr() as its text
        return f"<{self.kind} explorer>"

    def _repr_mimebundle_(self, **kwargs):
        parent = getattr(super(), "_repr_mimebundle_", None)  # ipywidgets 8 has it, 7 does not
        if parent is not None:
            bundle = parent(**kwargs)
        else:
            bundle = {"application/vnd.jupyter.widget-view+json":
                      {"version_major": 2, "version_minor": 0, "model_id": self.model_id}}
        bundle["text/plain"] = repr(self)
        bundle["text/html"] = self.site_html
        return bundle
