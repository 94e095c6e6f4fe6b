"""Prompt rendering cost: templates are package files, loaded once, not re-checked on disk per doc (issue 20)."""

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
