"""The table lmms-eval prints for hanyi's five groups fits a terminal: at most 80 rows and 120 columns (issue 15).

The fast tests build results in lmms-eval 0.7.3's shape for every task and group the five group YAMLs name (every
metric of every ``metric_list``, confusion dicts included); the slow one prints the shared tiny-LLaVA run.
"""

from __future__ import annotations

import copy
import random

import pytest
import yaml

from hanyi import printed_table
from hanyi.cli import _task_index

GROUPS = ("punrebus", "cvlue", "cii", "unpie", "vulca")


def synthetic_results(groups=GROUPS) -> dict:
    index = _task_index()
    rng = random.Random(0)
    results, subtasks, configs = {}, {}, {}

    def add(name, depth):
        entry = index[name]
        results[name] = {"alias": name if depth == 0 else " " * (depth - 1) + " - " + name}
        if entry["type"] == "group":
            subtasks[name] = [t for t in entry["tasks"] if isinstance(t, str)]
            with open(entry["yaml_path"], encoding="utf-8") as f:
                cfg = yaml.safe_load(f.read().replace("!function", "")) or {}
            for m in cfg.get("aggregate_metric_list") or []:
                results[name] |= {f"{m['metric']},none": rng.random(), f"{m['metric']}_stderr,none": "N/A"}
            for sub in subtasks[name]:
                add(sub, depth + 1)
            return
        configs[name] = {"metadata": entry["config"].get("metadata") or {}}
        for m in entry["config"].get("metric_list") or []:
            value = {"A": 1, "B": 2} if "confusion" in m["metric"] else rng.random()
            results[name] |= {f"{m['metric']},none": value, f"{m['metric']}_stderr,none": "N/A"}
            results[name][f"{m['metric']}_stderr_clt,none"] = rng.random() / 10

    for group in groups:
        add(group, 0)
    return {
        "results": results,
        "group_subtasks": subtasks,
        "configs": configs,
        "n-shot": {t: 0 for t in results},
        "higher_is_better": {},
    }


def original_make_table():
    import lmms_eval.utils

    return getattr(lmms_eval.utils.make_table, "__wrapped__", lmms_eval.utils.make_table)


def size(table: str) -> tuple[int, int]:
    lines = [line for line in table.splitlines() if line.strip()]
    return len(lines), max(map(len, lines))


def test_the_five_groups_print_at_most_80_rows_and_120_columns():
    results = synthetic_results()
    make_table = original_make_table()
    full_rows, full_width = size(make_table(copy.deepcopy(results)))
    rows, width = size(make_table(printed_table.headline_only(copy.deepcopy(results))))
    assert full_rows > 200 and full_width > 120  # what lmms-eval alone prints: the check is not vacuous
    assert rows <= 80 and width <= 120, (rows, width)


def test_headline_rows_keep_the_paper_metrics_and_their_robust_siblings():
    results = synthetic_results()
    before = copy.deepcopy(results)
    kept = printed_table.headline_only(results)["results"]
    assert results == before  # the results (and so the JSON) keep every number
    metrics = {t: {k.split(",")[0] for k in e if "," in k and "_stderr" not in k} for t, e in kept.items()}
    assert metrics["punrebus_matching"] == {"accuracy", "accuracy_robust"}
    assert metrics["punrebus_elements"] >= {"element_abs", "element_sim"}
    assert metrics["cii_none"] == {"acc", "acc_robust"} and metrics["cii"] == {"acc", "acc_robust"}
    assert metrics["vulca_baseline"] == {"expert_alignment"}  # declared by metadata.headline
    assert not any(isinstance(v, dict) for e in kept.values() for v in e.values())
    assert "unpie_disambiguation_de_homo" not in kept and "unpie_reconstruction_de" in kept  # nested: group row only
    assert all(metrics[t] for t in kept)  # no blank rows
    members = [t for g in GROUPS for t in results["group_subtasks"][g]]
    assert all(t in kept for t in members), [t for t in members if t not in kept]


def test_other_tasks_are_untouched_and_the_full_table_can_be_asked_for(monkeypatch):
    results = synthetic_results(("cii",))
    results["results"]["mmmu_val"] = {"alias": "mmmu_val", "acc,none": 0.5, "acc_cat_a,none": 0.1}
    assert printed_table.headline_only(results)["results"]["mmmu_val"] == results["results"]["mmmu_val"]
    monkeypatch.setenv("HANYI_FULL_TABLE", "1")
    assert printed_table.headline_only(results) is results


def test_the_start_up_hook_wrapped_lmms_evals_make_table(task_manager):
    import lmms_eval.utils

    assert getattr(lmms_eval.utils.make_table, "_hanyi_headline", False)
    assert printed_table.install() is False  # once only


@pytest.mark.slow
def test_the_shared_tiny_llava_run_prints_a_table_that_fits(llava_run):
    import lmms_eval.utils

    table = lmms_eval.utils.make_table(copy.deepcopy(llava_run))
    groups = lmms_eval.utils.make_table(copy.deepcopy(llava_run), "groups") if "groups" in llava_run else ""
    rows, width = size(table + "\n" + groups)
    assert rows <= 80 and width <= 120, (rows, width)
