"""Hints name a documentation page a user can open: the installed package's copy, else the clone's."""

from __future__ import annotations

import os
import re

from hanyi import backbones, docpath


def test_a_hint_names_the_installed_copy_of_a_page(tmp_path, monkeypatch):
    installed = tmp_path / "site-packages" / "hanyi"
    (installed / "docs").mkdir(parents=True)
    (installed / "docs" / "judge.md").write_text("# judge\n")
    monkeypatch.setattr(docpath, "_PACKAGE", str(installed))
    assert docpath.doc("judge.md") == str(installed / "docs" / "judge.md")


def test_doctor_judge_fix_names_a_page_that_exists_here(monkeypatch):
    for name in ("HANYI_JUDGE_BASE_URL", "HANYI_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    fix = backbones.BACKBONES["judge"].fix()
    page = re.search(r"\(([^()]*judge\.md)\)", fix).group(1)
    assert os.path.isabs(page) and os.path.isfile(page), fix
