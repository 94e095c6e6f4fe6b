"""Plain lmms-eval tasks: nothing of lmms-eval is replaced to get a task's numbers.

* With the start-up hook off and ``--include_path``, the five groups give the numbers hanyi 0.3.0 gave (every
  run-time patch installed) for the same replayed answers (``tests/fixtures/plain_run``, made by
  ``tools/plain_run_fixture.py``).
* Loading and running one task of each benchmark leaves every public function and method of lmms-eval's task,
  evaluator and utils modules as it was (same object, same source file); with the hook on, only
  ``TaskManager.__init__`` (task discovery) differs.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

import hanyi
from hanyi import floats

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixtures", "plain_run")
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))

from plain_run_fixture import differences, merged_expected, merged_responses, numbers, run_replay  # noqa: E402

pytestmark = pytest.mark.slow


#: The fixture was written by hanyi 0.3.0 on another machine. A number that passes through a neural backbone (here
#: Pun Rebus element_sim, all-MiniLM-L6-v2) is compared within the float rule's tolerance (hanyi.floats,
#: docs/dev/contributing.md): its last bits follow the CPU, the thread count and the batch shape (0.3.0 encoded the corpus
#: in one batch, elements 1.7 each distinct string once in batches of 256, and averages in float32 as the official
#: scorer). Every other number is compared exactly: :func:`plain_run_fixture.differences`.
#: Entries of 0.3.0's results that are no longer results entries, each with the task that holds its numbers now:
#: ``cii`` was a group of the one task ``cii_none`` (lmms-eval 0.7.3 copied its keys, so Table 1 printed twice); since
#: CII 2.1 ``cii`` is a tag of ``cii_none``, so ``--tasks cii`` runs and prints ``cii_none`` alone.
GONE = {"cii": "cii_none"}


def _wordnet_found() -> bool:
    """Whether NLTK finds WordNet here (as the run's subprocess will): Pun Rebus ``element_abs`` and UNPIE ``meteor``
    are then the paper's keys, else their ``_rule_lemma`` / ``_exact_stem`` fallbacks (hanyi.backbones)."""
    import nltk

    try:
        nltk.data.find("corpora/wordnet")
    except LookupError:
        return False
    return True


def test_a_plain_run_gives_the_numbers_of_before(tmp_path):
    name = "expected_wordnet.json" if _wordnet_found() else "expected.json"  # both made by hanyi 0.3.0
    with open(os.path.join(FIXTURE, name), encoding="utf-8") as f:
        expected = json.load(f)
    # UNPIE's one-split tasks of 0.3.0 (unpie_<x>_homo/_hetero, in the group unpie_<x>) are now the task unpie_<x>,
    # which scores both splits: their answers and numbers are mapped onto it (tools/plain_run_fixture.py, docstring)
    expected = merged_expected(expected)
    responses = str(tmp_path / "responses.jsonl")
    assert merged_responses(os.path.join(FIXTURE, "responses.jsonl"), responses) > 0
    found = numbers(
        run_replay(
            responses,
            str(tmp_path / "out"),
            env={"HANYI_NO_AUTOHOOK": "1"},
            extra_args=["--include_path", hanyi.TASKS_DIR],
        )
    )
    for gone, holder in GONE.items():  # its numbers were the holder's (a one-task group's mean: float noise only)
        assert gone not in found
        assert all(math.isclose(v, expected[holder][k], rel_tol=1e-12) for k, v in expected.pop(gone).items())
    assert sorted(found) == sorted(expected)  # every task and group of the five groups ran
    compared = 0
    for task, values in found.items():
        new_keys = set(values) - set(expected[task])
        assert not new_keys, f"{task}: keys that hanyi 0.3.0 did not emit: {sorted(new_keys)}"
        compared += len(values)
    emitted = {task: {k: v for k, v in expected[task].items() if k in values} for task, values in found.items()}
    assert differences(found, emitted) == []
    assert compared >= 50  # 55: the per-split and diagnostic numbers (155) are now the report's, checked below
    _element_sim_is_the_official_loops(tmp_path / "out", found["punrebus_elements"])

    # every number no longer emitted is a breakdown that hanyi report computes from the sample log, the same value
    from hanyi.results.runs import load_runs

    (run,) = load_runs([str(tmp_path / "out")])
    moved = unpie_moved = 0
    for task, values in expected.items():
        if run.tasks[task].is_group:
            continue  # a group's breakdowns are its members' (lmms-eval 0.7.3 copied a one-task group's keys)
        unpie_moved += task.startswith("unpie_") and any(key not in found[task] for key in values)
        for key, value in values.items():
            metric, _, filt = key.partition(",")
            if key in found[task] or filt != "none":
                continue
            got = run.tasks[task].metrics.get(metric)
            assert got is not None and got.from_samples, (
                f"{task}: {metric} is neither emitted nor computed by the report"
            )
            same = (got.value is None and math.isnan(value)) or floats.same_value(key, got.value, value)
            # a Pun Rebus category with no parsed doc has no value (NaN), as officially; 0.3.0 gave 0.0
            same = same or (metric.startswith("accuracy_cat_") and value == 0.0 and got.value is None)
            assert same, (task, metric, got.value, value)
            moved += 1
    assert unpie_moved == 7  # the 7 UNPIE tasks: their Homo/Hetero values and diagnostics, from the report
    print(f"{compared} numbers emitted as before, {moved} computed from the sample log as before")
    _report_stands_on_its_own(tmp_path)


def _element_sim_is_the_official_loops(out, emitted):
    """Every logged S_Sim is the official scorer's loop (:func:`hanyi.metrics.elements.element_sim_official`, one
    ``encode`` call per string, recomputed here) within the float rule, and ``element_sim`` is, bit for bit, the
    official float32 mean of the logged scores in doc order (arithmetic on the logged numbers, no backbone)."""
    import glob

    from hanyi import floats
    from hanyi.metrics import elements as el

    model = el.load_sbert()
    if "element_sim,none" not in emitted:
        assert model is None or "element_sim_custom_model,none" in emitted
        return
    (path,) = glob.glob(os.path.join(str(out), "**", "*_samples_punrebus_elements.jsonl"), recursive=True)
    with open(path, encoding="utf-8") as f:
        lines = sorted((json.loads(line) for line in f), key=lambda sample: sample["doc_id"])
    scores = []
    for sample in lines:
        item = sample["element_sim"]
        if item["parsed"]:
            official = el.element_sim_official(item["gold"], item["pred"], model)
            assert floats.close(item["instance_score"], official), (item, official)
            scores.append(item["instance_score"])
    assert len(scores) >= 5 and emitted["element_sim,none"] == el.official_mean(scores)


def test_a_backbone_value_from_another_machine_passes_and_any_other_difference_fails():
    """The comparison of the plain run holds a backbone value to the float rule, not to 1e-8: element_sim as an AMD
    EPYC gave it for this fixture (1.3e-7 relative from the Intel value) passes; the same shift of a number that
    passes through no backbone, a missing key, or a backbone value 1e-4 off fails."""
    expected = {"punrebus_elements": {"element_sim,none": 0.19028734674470293, "element_abs,none": 0.375}}
    amd = {"punrebus_elements": {"element_sim,none": 0.19028732139203283, "element_abs,none": 0.375}}
    assert differences(amd, expected) == []
    assert differences({"punrebus_elements": {**amd["punrebus_elements"], "element_abs,none": 0.375 + 5e-8}}, expected)
    assert differences({"punrebus_elements": {"element_abs,none": 0.375}}, expected)
    off = {"punrebus_elements": {"element_sim,none": 0.19028734674470293 * (1 + 1e-4), "element_abs,none": 0.375}}
    assert differences(off, expected)


BLOCKED = r"""
import sys

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.startswith(("hanyi.tasks", "hanyi.host", "hanyi._autohook", "lmms_eval", "lm_eval")):
            raise ImportError(f"blocked for this test: {name}")
        return None

sys.meta_path.insert(0, Blocker())
from hanyi.report import main
sys.exit(main([sys.argv[1], "--out", sys.argv[2], "--no-plots"]))
"""


def _report_stands_on_its_own(tmp_path):
    """``hanyi report`` on a plain run imports nothing of the task code, the start-up hook, the
    host wing or the harnesses, and still gives every headline number of the five groups an interval."""
    env = {**os.environ, "HANYI_NO_AUTOHOOK": "1"}
    out = tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-c", BLOCKED, str(tmp_path / "out"), str(out)], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    intervals = [i for s in report["sections"] for i in s["intervals"]]
    with_ci = [i for i in intervals if i.get("ci_low") is not None]
    assert len(with_ci) >= 20, intervals[:5]
    # the recorded answers (fixtures/plain_run) cover the five groups they were recorded for, not VULCA-Bench
    assert {i["task"].split("_")[0] for i in with_ci} == set(hanyi.BENCHMARKS) - {"vulca_bench"}


SNAPSHOT = r"""
import importlib, inspect, json, os, sys

MODULES = ("lmms_eval.tasks", "lmms_eval.api.task", "lmms_eval.evaluator", "lmms_eval.evaluator_utils", "lmms_eval.utils")


def source(obj):
    try:
        return inspect.getsourcefile(obj)
    except TypeError:
        return None


def snapshot():
    out = {}
    for name in MODULES:
        module = importlib.import_module(name)
        for attr, obj in sorted(vars(module).items()):
            if attr.startswith("_") and attr != "__init__":
                continue
            if inspect.isfunction(obj) or inspect.isbuiltin(obj):
                out[f"{name}.{attr}"] = [id(obj), source(obj)]
            elif inspect.isclass(obj):
                for member, value in sorted(vars(obj).items()):
                    if member.startswith("_") and member != "__init__":
                        continue
                    fn = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
                    if isinstance(fn, property):
                        fn = fn.fget
                    if inspect.isfunction(fn):
                        out[f"{name}.{attr}.{member}"] = [id(fn), source(fn)]
    return out


before = snapshot()
from lmms_eval import evaluator
from lmms_eval.tasks import TaskManager

import hanyi
from hanyi.models.replay import ReplayModel

tasks = ["cii_none", "punrebus_matching", "cvlue_vqa", "unpie_grounding_homo", "vulca_baseline"]
path = os.path.join(sys.argv[1], "none.jsonl")
open(path, "w").close()
manager = TaskManager("WARNING", include_path=hanyi.TASKS_DIR, include_defaults=False)
results = evaluator.simple_evaluate(
    model=ReplayModel(path=path, on_missing="empty"), tasks=tasks, task_manager=manager, bootstrap_iters=0, log_samples=True
)
assert set(tasks) <= set(results["results"]), sorted(results["results"])
after = snapshot()
print(json.dumps({"before": before, "after": after}))
"""


def _snapshots(tmp_path, hook: str) -> tuple[dict, dict]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HANYI_DATA_ROOT": "sample"}
    env.pop("HANYI_NO_AUTOHOOK", None)
    if hook == "off":
        env["HANYI_NO_AUTOHOOK"] = "1"
    proc = subprocess.run(
        [sys.executable, "-c", SNAPSHOT, str(tmp_path)], env=env, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    return report["before"], report["after"]


def test_loading_and_running_hanyi_tasks_replaces_nothing_of_lmms_eval(tmp_path):
    """Identity and source file of every public function and method, before and after one task per benchmark is
    loaded and run. The hook (when on) wraps ``TaskManager.__init__`` when ``lmms_eval.tasks`` is imported, so it is
    compared across the two processes by source file: that is the only difference."""
    off_before, off_after = _snapshots(tmp_path / "off", "off")
    on_before, on_after = _snapshots(tmp_path / "on", "on")
    assert len(off_before) > 300  # the public functions and methods of the five modules
    assert off_after == off_before  # hook off: nothing replaced, not even discovery
    assert on_after == on_before  # hook on: nothing replaced while tasks load and run
    sources_off = {k: src for k, (_, src) in off_before.items()}
    sources_on = {k: src for k, (_, src) in on_after.items()}
    differ = sorted(k for k in set(sources_off) | set(sources_on) if sources_off.get(k) != sources_on.get(k))
    # the one class, TaskManager, as lmms_eval.tasks defines it and as lmms_eval.evaluator imports it
    assert differ and all(k.endswith(".TaskManager.__init__") for k in differ), differ
    assert "lmms_eval.tasks.TaskManager.__init__" in differ
    assert all(sources_on[k].endswith(os.path.join("hanyi", "host", "discovery.py")) for k in differ)
