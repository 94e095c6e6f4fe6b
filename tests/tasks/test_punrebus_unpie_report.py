"""Pun Rebus and UNPIE in ``hanyi report`` from a plain run's sample log alone.

A plain run (in-process lmms-eval, no run-time patch: no ``hanyi_per_doc`` statistics in the sample log) of both
groups on the fixed answers of tests/fixtures/plain_run: the report gives an interval for every headline number, and
gives the same intervals with ``hanyi.tasks`` impossible to import (the aggregations are found by the name lmms-eval
wrote in the results file, in hanyi/metrics).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from hanyi import TASKS_DIR

pytestmark = pytest.mark.slow

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools"))

from plain_run_fixture import merged_records  # noqa: E402

RESPONSES = os.path.join(os.path.dirname(HERE), "fixtures", "plain_run", "responses.jsonl")
BENCHMARKS = ("punrebus", "unpie")
#: Aggregations of these YAMLs that are not decomposed, so no interval comes from them: counts. (Pun Rebus's judge
#: score is decomposed since expression 1.4: the judge is asked per doc in process_results.)
NOT_DECOMPOSED = {"unpie_sum"}


def _aggregation_names() -> set[str]:
    names = set()
    for bench in BENCHMARKS:
        folder = os.path.join(TASKS_DIR, bench)
        for name in os.listdir(folder):
            if name.endswith(".yaml") or name.endswith("_yaml"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    names |= set(re.findall(r"aggregation:\s*!function\s+[\w.]*?\.(\w+)", f.read()))
    return names


@pytest.fixture(scope="module")
def plain_report(replay, tmp_path_factory):
    from hanyi.report import main as report_main
    from hanyi.results.lmms_output import save_like_cli

    with open(RESPONSES, encoding="utf-8") as f:
        records = [r for r in map(json.loads, f) if r["task"].startswith(BENCHMARKS)]
    records = merged_records(records)  # UNPIE's one-split answers onto the tasks that score both splits
    # a plain run: an in-process `hanyi eval` test earlier in this worker may have installed hanyi eval's run-time
    # extras (hanyi.host.run_intervals wraps TaskOutput.calculate_aggregate_metric); unwrapped for this run
    from lmms_eval.evaluator_utils import TaskOutput

    with pytest.MonkeyPatch.context() as mp:
        fn = TaskOutput.calculate_aggregate_metric
        mp.setattr(TaskOutput, "calculate_aggregate_metric", getattr(fn, "__wrapped__", fn))
        results = replay(records, list(BENCHMARKS))
    assert not any("hanyi_per_doc" in s for lines in results["samples"].values() for s in lines)
    root = tmp_path_factory.mktemp("punrebus_unpie")
    save_like_cli(results, str(root / "out"))
    assert report_main([str(root / "out"), "--out", str(root / "rep")]) == 0
    with open(root / "rep" / "report.json", encoding="utf-8") as f:
        return root, json.load(f)


def _intervals(report: dict) -> dict:
    return {(r["task"], r["metric"]): r for s in report["sections"] for r in s["intervals"]}


def test_every_headline_number_of_both_groups_has_an_interval_from_the_plain_sample_log(plain_report):
    from hanyi.results.decomposed import NONE_SCORED
    from hanyi.results.runs import load_runs

    root, report = plain_report
    assert [s["benchmark"] for s in report["sections"]] == list(BENCHMARKS)
    records = _intervals(report)
    (run,) = load_runs([str(root / "out")])
    # a diagnostic that the report computes from the sample log (UNPIE's answer_rate, exact_match_strict, ...) is not
    # a headline number of the task: shown, with no interval
    diagnostics = {(task, metric) for task, metric in records if run.tasks[task].metrics[metric].from_samples}
    assert ("unpie_grounding", "answer_rate") in diagnostics and ("unpie_grounding", "exact_match") not in diagnostics
    missing = [
        (task, metric, r.get("why"))
        for (task, metric), r in records.items()
        if r.get("ci_low") is None
        and r.get("unit") != "count"
        and r.get("why") not in ("no value", NONE_SCORED)
        and (task, metric) not in diagnostics
    ]
    assert missing == []
    # METEOR's key is the paper's with WordNet, the exact+stem fallback without it (hanyi.backbones)
    meteor = next(m for m in ("meteor_robust", "meteor_exact_stem_robust") if ("unpie_reconstruction_ko", m) in records)
    for key in [("punrebus_elements", "element_sim"), ("unpie_disambiguation_de", "disamb_acc_chrf"),
                ("unpie_reconstruction_fr", "bleu4"), ("unpie_reconstruction_ko", meteor),
                ("unpie_disambiguation_ko", "disamb_acc_chrf_robust"), ("unpie_grounding", "exact_match")]:  # fmt: skip
        r = records[key]  # the ones that had none before (their statistics needed a backbone at aggregation time)
        assert r["ci_low"] <= r["value"] + 1e-12 <= r["ci_high"] + 2e-12 and r["n"] > 0, key


BLOCKED = r"""
import importlib.abc, json, sys

class Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "hanyi.tasks" or name.startswith("hanyi.tasks."):
            raise ImportError(f"blocked: {name}")

sys.meta_path.insert(0, Blocked())
from hanyi.metrics import resample

names = json.loads(sys.argv[1])
found = {n: resample.is_decomposed(resample.by_name(n)) for n in names}
from hanyi.report import main
code = main([sys.argv[2], "--out", sys.argv[3]])
print(json.dumps({"found": found, "code": code, "tasks": sorted(m for m in sys.modules if m.startswith("hanyi.tasks"))}))
"""


def test_the_report_needs_no_task_code_and_gives_the_same_intervals(plain_report):
    root, report = plain_report
    names = sorted(_aggregation_names())
    assert len(names) >= 15
    proc = subprocess.run(
        [sys.executable, "-c", BLOCKED, json.dumps(names), str(root / "out"), str(root / "blocked")],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "HANYI_NO_AUTOHOOK": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["code"] == 0 and out["tasks"] == []
    assert {n for n, ok in out["found"].items() if not ok} == NOT_DECOMPOSED
    with open(root / "blocked" / "report.json", encoding="utf-8") as f:
        blocked = _intervals(json.load(f))
    assert blocked == _intervals(report)
