"""Prompt rendering cost: templates are package files, loaded once, not re-checked on disk per doc."""

from __future__ import annotations

import os

from hanyi.tasks._common import render


def test_render_does_not_stat_the_template_file_per_doc(monkeypatch):
    first = render("vulca", "vulca_prompt.jinja", persona="", prompt="core_prompt_en.md", knowledge_base=True)

    def no_stat(path):
        raise AssertionError(f"template file checked on disk again: {path}")

    monkeypatch.setattr(os.path, "getmtime", no_stat)
    again = render("vulca", "vulca_prompt.jinja", persona="", prompt="core_prompt_en.md", knowledge_base=True)
    assert again == first and first.strip()


def test_templates_render_as_with_stock_jinja_from_plain_dict_globals():
    """Globals are one plain dict per template (half the cost of a CII prompt); the text is what stock Jinja renders,
    includes and Jinja's own globals (``range``, ``namespace``) included."""
    import jinja2

    from hanyi.tasks._common import _environment
    from hanyi.tasks.cii.utils import OPTIONS

    ours = _environment("cii")
    stock = jinja2.Environment(loader=ours.loader, undefined=jinja2.StrictUndefined, auto_reload=False)
    template = ours.get_template("none.jinja")
    assert type(template.globals) is dict and "range" in template.globals
    doc = {"question": "这幅图的含义是什么？", **{f"option{i}": f"选项{i}" for i in range(1, 7)}}
    assert template.render(doc=doc, options=OPTIONS) == stock.get_template("none.jinja").render(
        doc=doc, options=OPTIONS
    )
    src = "{% set ns = namespace(n=0) %}{% for i in range(3) %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}"
    assert ours.from_string(src).render() == stock.from_string(src).render() == "3"
