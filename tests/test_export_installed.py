"""Exports made from an installed hanyi (the wheel, not the clone) carry the paper, BibTeX and data source.

The wheel is built with hatchling (the build backend) and unpacked into a temporary ``site`` directory, which is what
installing it amounts to; both exports then run in a subprocess whose ``hanyi`` is that copy, from a directory with no
``docs/`` in reach. A README or DETAILS.md rendered without its source page (an empty paper, ``% no BibTeX``, ``_Not
documented``) fails, and so does a link into hanyi's docs or a re-export notice.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import zipfile

import pytest

from hanyi import BENCHMARKS

#: The benchmarks the export covers (a benchmark added to hanyi joins once its settings are in the export's table).
EXPORTED = [b for b in ("punrebus", "cvlue", "cii", "unpie", "vulca") if b in BENCHMARKS]
ROOT = pathlib.Path(__file__).resolve().parent.parent
EXPORT = r"""
import sys
import hanyi
from hanyi.export import lm_eval_tasks, lmms_eval_tasks
assert hanyi.__file__.startswith(sys.argv[1]), hanyi.__file__
lmms_eval_tasks.export(sys.argv[2] + "/lmms", sys.argv[3].split(","))
lm_eval_tasks.export(sys.argv[2] + "/lm")
"""


def _install_wheel(tmp: pathlib.Path) -> pathlib.Path:
    hatchling = pytest.importorskip("hatchling.build")
    cwd = os.getcwd()
    os.chdir(ROOT)  # hatchling builds the project in the working directory
    try:
        name = hatchling.build_wheel(str(tmp / "dist"))
    finally:
        os.chdir(cwd)
    site = tmp / "site"
    with zipfile.ZipFile(tmp / "dist" / name) as whl:
        whl.extractall(site)
    return site


@pytest.fixture(scope="module")
def installed_export(tmp_path_factory) -> pathlib.Path:
    tmp = tmp_path_factory.mktemp("installed")
    site = _install_wheel(tmp)
    out = tmp / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HANYI_")}
    env.update(PYTHONPATH=str(site), HANYI_NO_AUTOHOOK="1")
    proc = subprocess.run([sys.executable, "-c", EXPORT, str(site), str(out), ",".join(EXPORTED)], cwd=tmp, env=env, capture_output=True,
                          text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _readmes(out: pathlib.Path) -> dict[str, str]:
    found = {f"lmms/{b}": out / "lmms" / b / "README.md" for b in EXPORTED}
    found |= {f"lm/{p.parent.name}": p for p in (out / "lm").glob("*/README.md")}
    return {k: p.read_text(encoding="utf-8") for k, p in found.items()}


def test_readmes_from_the_wheel_have_paper_bibtex_and_data_source(installed_export):
    readmes = _readmes(installed_export)
    assert len(readmes) == len(EXPORTED) + 3
    for name, text in readmes.items():
        paper = text.split("## Paper", 1)[1].split("\n## ", 1)[0] if "## Paper" in text else ""
        prose = re.sub(r"```bibtex.*?```|###.*", "", paper, flags=re.S).strip()
        assert len(prose) > 80, f"{name}: empty Paper section"
        bib = re.search(r"```bibtex\n(.*?)```", text, re.S)
        assert bib and bib.group(1).lstrip().startswith("@") and "no BibTeX" not in text, f"{name}: no BibTeX"
        assert "## Data access" in text and "The official release:" in text and "Licence:" in text, name
        assert "../docs/" not in text and "re-export" not in text, f"{name}: points into hanyi or says re-export"


def test_details_from_the_wheel_have_the_metric_definitions_and_deviations(installed_export):
    for bench in EXPORTED:
        text = (installed_export / "lmms" / bench / "DETAILS.md").read_text(encoding="utf-8")
        assert "_Not documented in the source page._" not in text, bench
        assert "## Metrics: definitions\n\n### " in text and "## Deviations from the paper\n\n### " in text, bench


def test_a_source_page_without_bibtex_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    from hanyi.export import lmms_eval_tasks as lt
    from hanyi.export import readme

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "cii.md").write_text("# CII-Bench\n\nNo citation here.\n", encoding="utf-8")
    monkeypatch.setattr(readme, "DOCS_DIR", str(docs))
    with pytest.raises(lt.ExportError, match=r"cii\.md has no title or no ```bibtex block"):
        lt.export(str(tmp_path / "out"), ["cii"])
    assert not (tmp_path / "out").exists()
    (docs / "cii.md").unlink()
    with pytest.raises(lt.ExportError, match=r"cii\.md is missing"):
        lt.export(str(tmp_path / "out"), ["cii"])
