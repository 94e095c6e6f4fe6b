"""lmms-eval's own, unpatched table for hanyi's five groups fits a terminal: at most 80 rows and 120 columns, the
"Groups" table included, because each task emits only its paper's main-table columns and their
``_robust`` siblings (breakdowns and diagnostics come from the sample log in ``hanyi report``).

Nothing of lmms-eval is wrapped: the tables below are what ``lmms-eval --tasks punrebus,cvlue,cii,unpie,vulca``
prints. The fast tests build results in lmms-eval 0.7.3's shape from the task YAMLs, for every metric a run can emit
with the paper's backbones, with fallbacks, and with other models (:func:`worst_case`); the slow one prints the shared
tiny-LLaVA run.
"""

from __future__ import annotations

import copy

import pytest
import yaml

from hanyi import backbones
from hanyi.cli import _task_index

GROUPS = ("punrebus", "cvlue", "cii", "unpie", "vulca")
MAX_ROWS, MAX_WIDTH = 80, 120


def _fallback_and_custom_keys() -> tuple[set[str], set[str], set[str]]:
    """(paper keys that have a stand-in, fallback keys, other-model keys) named by :data:`hanyi.backbones.BACKBONES`
    (wildcard families such as VULCA's ``<the same>_custom_model`` are matched by suffix in :func:`_emitted`)."""
    paper, fallback, custom = set(), set(), set()
    for b in backbones.BACKBONES.values():
        for key, stand_in in b.fallbacks.items():
            if stand_in:
                paper.add(key)
                fallback.add(stand_in)
        for key, other in (getattr(b, "custom", None) or {}).items():
            paper.add(key)
            custom.add(other)
    return paper, fallback, custom


def _emitted(metric: str, backbone_state: str, declared: set[str]) -> bool:
    """Whether a run with ``backbone_state`` ("paper": every paper backbone; "fallback": none, so the fallback keys;
    "custom": other models where hanyi allows them) can emit ``metric`` of a task that declares ``declared`` (a
    ``_robust`` sibling follows its key; a key whose ``<key>_custom_model`` is declared is replaced by it)."""
    paper, fallback, custom = _fallback_and_custom_keys()
    base = metric.removesuffix("_robust")
    is_custom = base in custom or base.endswith("_custom_model")
    if backbone_state == "paper":
        return base not in fallback and not is_custom
    if backbone_state == "fallback":
        return base not in paper and not is_custom
    replaced = base in paper or f"{base}_custom_model" in declared
    return base not in fallback and (is_custom or not replaced)


def worst_case(backbone_state: str, groups=GROUPS) -> dict:
    """``results`` in lmms-eval 0.7.3's shape for ``groups``: every metric each task's ``metric_list`` declares that a
    run with ``backbone_state`` can emit, each with a bootstrap and a CLT standard error (the widest table), and every
    group's ``aggregate_metric_list``; a group with one task gets its member's keys, as lmms-eval 0.7.3 copies them."""
    index = _task_index()
    results, groups_out, subtasks = {}, {}, {}

    def add(name, depth):
        entry = index[name]
        if entry["type"] == "tag":  # a tag runs its tasks and prints no row of its own (cii: cii_none)
            for task in entry["tasks"]:
                add(task, depth)
            return
        alias = name if depth == 0 else " " * (depth - 1) + " - " + name
        results[name] = {"alias": alias}
        if entry["type"] == "group":
            subtasks[name] = [t for t in entry["tasks"] if isinstance(t, str)]
            with open(entry["yaml_path"], encoding="utf-8") as f:
                cfg = yaml.safe_load(f.read().replace("!function", "")) or {}
            for sub in subtasks[name]:
                add(sub, depth + 1)
            metrics = [m["metric"] for m in cfg.get("aggregate_metric_list") or []]
            if metrics and len(subtasks[name]) == 1:
                metrics = [k.split(",")[0] for k in results[subtasks[name][0]] if "," in k and "_stderr" not in k]
            for metric in metrics:
                if _emitted(metric, backbone_state, set(metrics)):
                    results[name] |= {f"{metric},none": 0.5, f"{metric}_stderr,none": 0.01}
            if metrics:
                groups_out[name] = dict(results[name])
            return
        declared = {m["metric"] for m in entry["config"].get("metric_list") or []}
        for m in entry["config"].get("metric_list") or []:
            if _emitted(m["metric"], backbone_state, declared):
                results[name] |= {
                    f"{m['metric']},none": 0.5,
                    f"{m['metric']}_stderr,none": 0.01,
                    f"{m['metric']}_stderr_clt,none": 0.01,
                }

    for group in groups:
        add(group, 0)
    out = {"results": results, "group_subtasks": subtasks, "n-shot": {t: 0 for t in results}}
    if groups_out:
        out["groups"] = groups_out
    return out


def printed(results: dict) -> str:
    """What lmms-eval 0.7.3's ``__main__`` prints: the results table, then the groups table when there is one."""
    from lmms_eval.utils import make_table

    table = make_table(copy.deepcopy(results))
    if "groups" in results:
        table += "\n\n" + make_table(copy.deepcopy(results), "groups")
    return table


def size(table: str) -> tuple[int, int]:
    lines = [line for line in table.splitlines() if line.startswith("|")]
    return len(lines), max(map(len, lines))


@pytest.mark.parametrize("backbone_state", ["paper", "fallback", "custom"])
def test_the_five_groups_print_at_most_80_rows_and_120_columns(backbone_state):
    results = worst_case(backbone_state)
    rows, width = size(printed(results))
    assert rows <= MAX_ROWS and width <= MAX_WIDTH, (backbone_state, rows, width)
    # not vacuous: every benchmark prints rows of its own
    table = printed(results)
    for benchmark in GROUPS:
        assert f"{benchmark}_" in table or f"|{benchmark} " in table, benchmark


def test_each_benchmark_prints_its_paper_columns():
    table = printed(worst_case("paper"))
    rows = {
        (line.split("|")[1].strip(" -"), line.split("|")[4].strip()) for line in table.splitlines()[2:] if "|" in line
    }
    for task, metric in [
        ("punrebus_matching", "accuracy"),
        ("punrebus_matching", "accuracy_robust"),
        ("punrebus_elements", "element_abs"),
        ("punrebus_elements", "element_sim"),
        ("cvlue_vqa", "accuracy"),
        ("cvlue_vg", "miou"),
        ("unpie_grounding", "exact_match"),
        ("unpie_disambiguation_de", "disamb_acc_bertscore"),
        ("unpie_reconstruction_ko", "bleu4"),
        ("vulca_baseline", "expert_alignment"),
    ]:
        assert (task, metric) in rows, (task, metric)
    assert any(metric == "acc_domain_life" for _, metric in rows)  # CII Table 1


def test_the_check_counts_what_lmms_eval_prints():
    """The budget check is not vacuous: with every metric of every ``metric_list`` (fallbacks and other-model keys
    beside the paper's, which no run emits together) the table is far over the budget."""
    everything = worst_case("paper")
    for state in ("fallback", "custom"):
        for task, entry in worst_case(state)["results"].items():
            everything["results"][task] |= entry
    rows, _ = size(printed(everything))
    assert rows > MAX_ROWS


@pytest.mark.slow
def test_the_shared_tiny_llava_run_prints_a_table_that_fits(llava_run):
    text = printed(llava_run)
    rows, width = size(text)
    # lmms-eval's own Stderr_Clustered column (17 characters), printed once a task sets a cluster_key
    limit = MAX_WIDTH + (len("|Stderr_Clustered") if "|Stderr_Clustered|" in text else 0)
    assert rows <= MAX_ROWS and width <= limit, (rows, width)
    for benchmark in GROUPS:  # every benchmark ran (cii is a tag: its task is cii_none)
        assert any(task.startswith(benchmark) for task in llava_run["results"]), benchmark
