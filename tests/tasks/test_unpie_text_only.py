"""UNPIE's text-only tasks load without an image library: their docs carry no explanation image, the same
``image_sha256`` as the image tasks log, and every other field unchanged."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hanyi.data import unpie as data
from hanyi.data.sources import SAMPLE_DIR

datasets = pytest.importorskip("datasets")


@pytest.mark.parametrize(("kind", "lang"), [("grounding", None), ("reconstruction", "de")])
def test_text_docs_are_the_image_docs_without_the_image(kind, lang):
    rows = datasets.load_dataset(os.path.join(SAMPLE_DIR, "unpie"), split="homographic")
    image = data.expand(rows, kind, "homographic", lang).to_list()
    text = data.expand(rows, kind, "homographic", lang, text_only=True).to_list()
    assert "pun_exp_image" not in text[0] and "pun_exp_image" in image[0]
    assert [d["image_sha256"] for d in text] == [d["image_sha256"] for d in image]
    assert all(d["image_sha256"] for d in text)
    assert text == [{k: v for k, v in d.items() if k != "pun_exp_image"} for d in image]


BLOCKED = r"""
import os, sys
import datasets
from hanyi.data import unpie as data
from hanyi.data.sources import SAMPLE_DIR
from hanyi.tasks.unpie import loading
rows = datasets.load_dataset(os.path.join(SAMPLE_DIR, "unpie"), split="homographic")
docs = loading.unpie_reconstruction_text_de_split_docs(rows).to_list()
assert docs and "pun_exp_image" not in docs[0]
assert not [m for m in sys.modules if m == "PIL" or m.startswith("PIL.")]
print("ok")
"""


def test_a_text_task_loads_its_docs_with_pillow_blocked(tmp_path):
    """The task's own ``process_docs`` (what lmms-eval and lm-eval call) with Pillow unimportable, as in a venv with
    a text harness's dependencies only."""
    shadow = tmp_path / "PIL"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError(\"No module named 'PIL' (blocked)\")\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    env.update(HF_DATASETS_OFFLINE="1", HANYI_NO_AUTOHOOK="1")
    proc = subprocess.run([sys.executable, "-c", BLOCKED], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
