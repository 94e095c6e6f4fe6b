"""``hanyi export lm-eval`` (issue 41 item 5): lm-eval task folders that need no hanyi give the hanyi lm-eval tasks'
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

from .test_export import _imports, _shadow_env  # noqa: E402

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
    assert ours.keys() == theirs.keys()
    for task, row in ours.items():
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


def test_the_export_passes_lm_evals_ruff_check(tmp_path):
    """Issue 41: lm-eval's own lint rules (its ruff config, recorded in docs/upstream/) find nothing in the hub-mode
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
