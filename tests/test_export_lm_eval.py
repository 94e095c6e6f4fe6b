"""``hanyi export lm-eval``: lm-eval task folders that need no hanyi give the hanyi lm-eval tasks'
numbers. Both sides run lm-eval's evaluator in a subprocess with the same fixed-answer model (answers from each doc:
right, padded, wrong, empty, picked by the prompt's hash, so a different prompt gives different numbers); the export's side has ``hanyi`` unimportable, as if copied into ``lm_eval/tasks/``."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

pytest.importorskip("lm_eval", reason="the lm-eval extra is not installed (pip install 'hanyi[lm-eval]')")

from hanyi.export import lm_eval_tasks  # noqa: E402

from .test_export import _imports, _shadow_env, hanyi_leftovers  # noqa: E402

TASKS = ["punrebus_textonly", "punrebus_textonly_mc", "cii_textonly", "cii_textonly_mc", "unpie_text",
         "unpie_text_splits"]  # fmt: skip

RUN = r"""
import json, sys, zlib
mode, tasks_dir, out = sys.argv[1:4]
if mode == "export":
    import lm_eval.tasks
    lm_eval.tasks.__path__.append(tasks_dir)  # as if the export were copied into lm_eval/tasks/
else:
    import hanyi._autohook, hanyi.lm_eval_tasks  # noqa: F401
from lm_eval import evaluator
from lm_eval.api.model import LM
from lm_eval.tasks import TaskManager

def answer(task, doc, i):
    if task.startswith("punrebus"):
        g = doc["categories"][0]; opts = [f"{g}. reason", f"\n  {g}", "A", f"**{g}**", "", "Based on it, F"]
    elif task.startswith("cii"):
        g = doc["answer"]; opts = [f"答案：{g}", "答案：A", f"The answer is ({g})", "", g]
    elif "grounding" in task:
        g = doc["pun_phrase"]; opts = [g, f"  {g}\n", "nothing", ""]
    else:
        g = doc["target"]; opts = [f'[English]: "{g}"', "", "a plain sentence", g.split(" ")[0]]
    return opts[i % len(opts)]

class Fixed(LM):
    def generate_until(self, requests, disable_tqdm=False):
        return [answer(r.task_name, r.doc, zlib.crc32(r.args[0].encode())) for r in requests]  # by prompt
    def loglikelihood(self, requests, disable_tqdm=False):
        return [(-(zlib.crc32(f"{r.task_name}|{r.args[0]}|{r.args[1]}".encode()) % 1000) / 100, False) for r in requests]
    def loglikelihood_rolling(self, requests, disable_tqdm=False):
        raise NotImplementedError

res = evaluator.simple_evaluate(model=Fixed(), tasks=sys.argv[4:], bootstrap_iters=0,
                                task_manager=TaskManager(include_path=tasks_dir, include_defaults=False))
assert mode != "export" or not [m for m in sys.modules if m == "hanyi" or m.startswith("hanyi.")]
json.dump(res["results"], open(out, "w"), default=str)
"""


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("lm-export"))
    lm_eval_tasks.export(out, data_root="sample")
    return out


def _run(mode, tasks_dir, env, tmp) -> dict:
    out = os.path.join(tmp, f"{mode}.json")
    proc = subprocess.run([sys.executable, "-c", RUN, mode, tasks_dir, out, *TASKS], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out, encoding="utf-8") as f:
        return json.load(f)


@pytest.mark.slow
def test_exported_lm_eval_tasks_give_hanyis_numbers_with_hanyi_blocked(exported, tmp_path):
    import hanyi

    env = {k: v for k, v in os.environ.items() if not k.startswith("HANYI_")}
    ours = _run("hanyi", hanyi.LM_EVAL_TASKS_DIR, {**env, "HANYI_DATA_ROOT": "sample"}, str(tmp_path))
    theirs = _run("export", exported, _shadow_env(str(tmp_path)), str(tmp_path))
    # the collecting groups are tags in the export (lm-eval's CI loads a group beside its tasks only so): no row
    assert theirs.keys() <= ours.keys() and ours.keys() - theirs.keys() <= {"unpie_text", "punrebus_text"}
    for task, row in ((t, r) for t, r in ours.items() if t in theirs):
        got = {k: v for k, v in theirs[task].items() if k.endswith(",none")}
        want = {k: v for k, v in row.items() if k.endswith(",none")}
        assert got.keys() == want.keys(), task
        for key, value in want.items():
            same = value == got[key] or (isinstance(value, float) and math.isnan(value) and math.isnan(got[key]))
            assert same, f"{task} {key}: hanyi {value!r} != export {got[key]!r}"
    assert 0 < ours["punrebus_textonly"]["accuracy,none"] < ours["punrebus_textonly"]["accuracy_robust,none"]
    assert 0 < ours["cii_textonly"]["acc,none"] < 100 and "acc_loglik,none" in theirs["cii_textonly_mc"]


def test_exported_yaml_and_code_name_no_hanyi_module(exported):
    """Plain YAML: no ``!function hanyi.*`` and no metric_list read at run time; no ``hanyi`` import anywhere."""
    for root, _, files in os.walk(exported):
        for name in files:
            if name.endswith((".py", ".yaml", "_yaml")) and "sample" not in root:
                with open(os.path.join(root, name), encoding="utf-8") as f:
                    text = f.read()
                assert "!function hanyi." not in text and "metric_list: !function" not in text, name
                if name.endswith(".py"):
                    assert not [m for m in _imports(os.path.join(root, name)) if m.split(".")[0] == "hanyi"], name


def test_no_exported_file_names_hanyi(exported):
    """As for lmms-eval (``tests/test_export.py``): nothing that lands in ``lm_eval/tasks/`` names hanyi, its pages
    or its tickets, and every module or file a comment names is in the export."""
    found = hanyi_leftovers(exported, "lm_eval.tasks")
    assert not found, f"{len(found)} leftovers, the first:\n" + "\n".join(found[:25])


def test_the_export_passes_lm_evals_ruff_check(tmp_path):
    """lm-eval's own lint rules (its ruff config, recorded in docs/upstream/) find nothing in the hub-mode
    export (the pull request's), as its pre-commit checks a pull request (78 findings before: broad excepts,
    typing-only imports, zip without ``strict=``, ...); and the export logs with :mod:`logging`, as lm-eval's tasks
    do (no loguru)."""
    exported = str(tmp_path / "hub")
    lm_eval_tasks.export(exported, data_root="hub")
    config = os.path.join(
        os.path.dirname(os.path.dirname(__file__)), "docs", "upstream", "lm-evaluation-harness.ruff.toml"
    )
    py = [os.path.join(root, f) for root, _, files in os.walk(exported) for f in files if f.endswith(".py")]
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--config", config, *py],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert not [p for p in py if "loguru" in _imports(p)]


CI_TASK_TEST = r"""
import glob, os, sys
import lm_eval.tasks
lm_eval.tasks.__path__.append(sys.argv[1])  # as if the export were copied into lm_eval/tasks/
from lm_eval.tasks import TaskManager
from lm_eval.tasks._yaml_loader import load_yaml
names = set()  # lm-eval's tests/utils.py parser over the changed files: a task YAML gives its task, a group its group
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*", "*.yaml"))):
    config = load_yaml(path, resolve_func=False)
    names.add(config["task"] if isinstance(config["task"], str) else config["group"])
loaded = TaskManager(include_path=sys.argv[1]).load(sorted(names))["tasks"]
print(len(names), len(loaded))
"""


@pytest.mark.slow
def test_lm_evals_ci_task_test_loads_every_changed_yaml_together(exported, tmp_path):
    """lm-eval's CI (``tests/test_tasks.py`` over the changed files) loads every task and group of the pull request's
    YAMLs in one ``TaskManager.load``, which refuses a group beside one of its own tasks (``Duplicate task
    'unpie_grounding_text': found in both ... and 'unpie_text'``). Groups that only collect tasks are exported as
    tags, so the whole export loads at once."""
    proc = subprocess.run([sys.executable, "-c", CI_TASK_TEST, exported], cwd=str(tmp_path),
                          env=_shadow_env(str(tmp_path)), capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    names, loaded = map(int, proc.stdout.split()[-2:])
    assert names == loaded >= 16
    for tag, member in (("unpie_text", "unpie_grounding_text.yaml"), ("punrebus_text", "punrebus_textonly.yaml")):
        bench = tag.split("_")[0]
        assert not os.path.exists(os.path.join(exported, bench, f"{tag}.yaml"))
        with open(os.path.join(exported, bench, member), encoding="utf-8") as f:
            assert f"tag: [{tag}]" in f.read()


TEXT_ONLY = r"""
import sys
import lm_eval.tasks
lm_eval.tasks.__path__.append(sys.argv[1])
from lm_eval.tasks import TaskManager
manager = TaskManager(include_path=sys.argv[1])
for name in sys.argv[2:]:
    for task in manager.load([name])["tasks"].values():
        docs = list(task.eval_docs)
        assert docs and all(task.doc_to_text(doc) for doc in docs), name
assert "PIL" not in sys.modules or sys.modules["PIL"] is None
print("ok")
"""


@pytest.mark.slow
def test_text_only_tasks_need_no_image_library(exported, tmp_path):
    """A text-only task sends no image, so a text-only run needs no Pillow: the CII docs are read with their image
    column left undecoded, UNPIE's text docs carry no explanation image (``datasets`` decodes an ``Image`` column with Pillow when a row is read). Pillow is made
    unimportable here, as in a venv with lm-eval's own extras only."""
    env = _shadow_env(str(tmp_path))
    pil = tmp_path / "shadow" / "PIL"
    pil.mkdir()
    (pil / "__init__.py").write_text("raise ImportError(\"No module named 'PIL' (blocked)\")\n")
    proc = subprocess.run([sys.executable, "-c", TEXT_ONLY, exported, "cii_textonly", "cii_textonly_mc",
                           "punrebus_textonly", "punrebus_textonly_mc", "unpie_grounding_text",
                           "unpie_reconstruction_text_de_homo"], cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]
