"""The table lmms-eval prints for hanyi's five groups fits a terminal: at most 80 rows and 120 columns, and every group
prints its own headline row (issue 15 item 1).

The fast tests build results in lmms-eval 0.7.3's shape for every task and group the five group YAMLs name (every
metric of every ``metric_list``, confusion dicts included), and in the shape of the tiny-LLaVA demo run's results JSON
(:func:`demo_shaped`); the slow one prints the shared tiny-LLaVA run.
"""

from __future__ import annotations

import copy
import random

import pytest
import yaml

from hanyi.cli import _task_index
from hanyi.host import printed_table

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


#: Metrics the demo run (tiny random LLaVA, no scorer model, no judge) does not emit: out/demo/*_results.json.
DEMO_SILENT = ("correct_custom_judge", "judge_score", "meteor", "meteor_robust", "element_abs", "element_abs_capped")
DEMO_SILENT_PREFIXES = ("disamb_acc_bertscore", "expert_alignment", "feat", "primary_profile", "profile_", "qual_")
DEMO_SILENT_PREFIXES += ("rubric_", "sem_", "element_sim_custom_model")


def demo_shaped(results: dict) -> dict:
    """``results`` reshaped the way lmms-eval 0.7.3 hands the demo run to ``make_table`` (read off the demo's
    ``*_results.json``): entries sorted by name; a group without ``aggregate_metric_list`` is ``{" ": " ", "alias"}``;
    the aggregating groups again under ``"groups"``; ``n-shot`` for tasks only; ``higher_is_better`` for every entry;
    model- and judge-scored metrics absent; VULCA's evidence list and CII's per-category group means present."""
    out = {}
    for task, entry in sorted(results["results"].items()):
        entry = {
            k: v
            for k, v in entry.items()
            if k.split(",")[0].removesuffix("_stderr").removesuffix("_stderr_clt") not in DEMO_SILENT
            and not k.startswith(DEMO_SILENT_PREFIXES)
        }
        if task.startswith("vulca_"):
            entry["vulca_evidence,none"] = []
        out[task] = entry
    if "cii" in out:
        out["cii"] |= {k: v for k, v in out["cii_none"].items() if k.startswith("acc_") and "_stderr_clt" not in k}
    subtasks = results["group_subtasks"]
    aggregating = {g for g in subtasks if any("," in k for k in out[g])}
    for group in set(subtasks) - aggregating:
        out[group] = {" ": " ", "alias": out[group]["alias"]}
    hib = {t: {k.split(",")[0]: True for k in e if "," in k and "_stderr" not in k} for t, e in out.items()}
    return {
        **results,
        "results": out,
        "groups": {g: copy.deepcopy(out[g]) for g in sorted(aggregating)},
        "n-shot": {t: 0 for t in out if t not in subtasks},
        "higher_is_better": hib,
        "throughput": {"total_gen_tokens": 2972.0, "total_elapsed_time": 22.1, "avg_speed": 134.6, "avg_rank": 0.0},
    }


def table_rows(table: str) -> list[dict[str, str]]:
    """The rows of the first markdown table in ``table``, as ``{header: stripped cell}`` (unnamed columns dropped)."""
    lines = []
    for line in table.splitlines():
        if line.startswith("|"):
            lines.append(line)
        elif lines:
            break
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]
    return [{h: c for h, c in zip(header, row) if h} for row in rows]


def printed(results: dict) -> tuple[str, str]:
    """What lmms-eval's ``__main__`` prints: the wrapped ``make_table`` for results, and for groups if present."""
    import lmms_eval.utils

    printed_table.install()  # once per process (the start-up hook may have done it)
    groups = lmms_eval.utils.make_table(copy.deepcopy(results), "groups") if "groups" in results else ""
    return lmms_eval.utils.make_table(copy.deepcopy(results)), groups


def assert_every_group_prints_its_own_rows(results: dict, table: str, groups: tuple = GROUPS) -> list[dict]:
    """The group-row rule, checked on a printed table against ``results``; returns the parsed rows."""
    rows = table_rows(table)
    assert rows and all(r["Metric"] and r["Value"] for r in rows), rows  # no blank row
    for group in groups:
        values = [r["Value"] for r in rows if r["Tasks"] == group]
        assert values, f"{group}: no row of its own"
        assert all(float(v) == float(v) for v in values), (group, values)  # numeric (float() raises otherwise)
    keys = [(r["Tasks"], r["Filter"], r["Metric"]) for r in rows]
    assert len(keys) == len(set(keys)), "a row printed twice"
    printed_tasks = {r["Tasks"].removeprefix("- ") for r in rows}
    for group in groups:
        if any("," in k for k in results["results"][group]):
            continue  # an aggregating group (cii): its members may print under it
        for member in results["group_subtasks"][group]:
            assert member not in printed_tasks, f"{member} printed beside {group}'s rows"
    return rows


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
    assert {"matching · accuracy", "matching · accuracy_robust"} <= metrics["punrebus"]
    assert {"elements · element_abs", "elements · element_sim"} <= metrics["punrebus"]
    assert metrics["cii_none"] == {"acc", "acc_robust"} and metrics["cii"] == {"acc", "acc_robust"}
    assert "baseline · expert_alignment" in metrics["vulca"]  # declared by metadata.headline
    assert {"disambiguation_de · disamb_acc_bertscore", "grounding · exact_match"} <= metrics["unpie"]
    assert not any(isinstance(v, (dict, list)) for e in kept.values() for v in e.values())
    assert not any(m.split(" · ")[-1].startswith("accuracy_cat") for m in metrics["punrebus"])  # no breakdowns
    assert set(kept) == {"punrebus", "cvlue", "cii", "cii_none", "unpie", "vulca"}  # members are their group's rows
    assert all(metrics[t] for t in kept)  # no blank rows


def test_a_group_without_aggregates_prints_its_members_headline_rows_as_its_own():
    results = synthetic_results(("punrebus",))
    matching = results["results"]["punrebus_matching"]
    row = printed_table.headline_only(results)["results"]["punrebus"]
    assert row["alias"] == "punrebus"
    for key in ("accuracy,none", "accuracy_stderr,none", "accuracy_stderr_clt,none"):
        assert row["matching · " + key] == matching[key]  # value and stderr copied from the member
    table = original_make_table()(printed_table.headline_only(copy.deepcopy(results)))
    rows = {r["Metric"]: r for r in table_rows(table)}
    assert rows["matching · accuracy"]["Tasks"] == "punrebus"
    assert rows["matching · accuracy"]["Value"] == f"{matching['accuracy,none']:.4f}"
    assert rows["matching · accuracy"]["Stderr_CLT"] == f"{matching['accuracy_stderr_clt,none']:.4f}"


def test_the_demo_shaped_five_groups_each_print_a_numeric_row_and_fit_the_terminal():
    results = demo_shaped(synthetic_results())
    before = copy.deepcopy(results)
    table, groups = printed(results)
    assert results == before
    rows = assert_every_group_prints_its_own_rows(results, table)
    assert groups == ""  # every group in "groups" is hanyi's: its rows are in the main table already
    n_rows, width = size(table + "\n" + groups)
    assert n_rows <= 80 and width <= 120, (n_rows, width)
    metrics = {(r["Tasks"], r["Metric"]) for r in rows}
    # the demo emits no model-scored metric: the paper column that was emitted, or a fallback, still prints
    assert ("punrebus", "elements · element_sim") in metrics  # a mapped paper column, not an "element_*" family cell
    assert ("unpie", "disambiguation_de · disamb_acc_chrf") in metrics  # first score with a robust sibling
    assert ("unpie", "disambiguation_de · disamb_acc_chrf_robust") in metrics
    assert ("unpie", "grounding · exact_match") in metrics  # mapped for the group's members (Homo / Hetero)
    full_rows, _ = size(original_make_table()(copy.deepcopy(results)))
    assert full_rows > 2 * n_rows  # what lmms-eval alone prints: the check is not vacuous


def test_an_entry_with_nothing_printable_says_so_in_one_row():
    results = demo_shaped(synthetic_results(("cvlue", "vulca")))
    for task in results["group_subtasks"]["vulca"]:  # nothing but N/A, a list and a dict
        results["results"][task] = {"alias": task, "x,none": "N/A", "vulca_evidence,none": [], "c,none": {"A": 1}}
    results["results"]["cvlue_vg"] = {"alias": " - cvlue_vg", "miou,none": "N/A"}
    rows = table_rows(printed(results)[0])
    vulca = [r for r in rows if r["Tasks"] == "vulca"]
    assert len(vulca) == len(results["group_subtasks"]["vulca"])
    assert all(r["Metric"].endswith(" · " + printed_table.NO_HEADLINE) and r["Value"] == "N/A" for r in vulca)
    cvlue = {r["Metric"]: r["Value"] for r in rows if r["Tasks"] == "cvlue"}
    assert cvlue["vg · " + printed_table.NO_HEADLINE] == "N/A" and float(cvlue["vqa · accuracy"]) >= 0
    results["results"]["vulca"] = {"alias": "vulca", "x,none": "N/A"}
    results["group_subtasks"]["vulca"] = []
    assert [r["Metric"] for r in table_rows(printed(results)[0]) if r["Tasks"] == "vulca"] == [
        printed_table.NO_HEADLINE
    ]


def test_the_groups_table_keeps_other_harness_groups_only():
    results = demo_shaped(synthetic_results(("cii", "unpie")))
    results["groups"]["mmmu"] = {"alias": "mmmu", "acc,none": 0.5}
    kept = printed_table.headline_only(copy.deepcopy(results), "groups")["groups"]
    assert list(kept) == ["mmmu"]
    assert [r["Groups"] for r in table_rows(printed(results)[1])] == ["mmmu"]


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
    table, groups = printed(llava_run)
    rows, width = size(table + "\n" + groups)
    assert rows <= 80 and width <= 120, (rows, width)
    ran = tuple(g for g in GROUPS if g in llava_run["results"])
    assert ran
    assert_every_group_prints_its_own_rows(llava_run, table, ran)
