"""All five benchmark groups through the real lmms-eval evaluator with a real (tiny, random) VLM: lmms-eval's own
``llava_hf`` chat backend over the bundled sample data. Each benchmark's own tests check its metrics; this checks
the plumbing every benchmark shares."""

from __future__ import annotations

import math

from tests.conftest import DEMO_GROUPS


def test_every_benchmark_group_produced_results(llava_run, task_manager):
    expected = [g for g in DEMO_GROUPS if g in task_manager.all_tasks]
    assert "punrebus" in expected or "punrebus_matching" in llava_run["results"]
    for group in expected:
        leaves = [t for t in llava_run["results"] if t.startswith(group)]
        assert leaves, f"group {group} has no task results"


def test_every_task_scored_every_doc_with_finite_metrics(llava_run):
    for task, res in llava_run["results"].items():
        if task not in llava_run["samples"]:
            continue  # a group row
        n = llava_run["n-samples"][task]["effective"]
        assert len(llava_run["samples"][task]) == n > 0, task
        values = [v for k, v in res.items() if "," in k and "_stderr" not in k and isinstance(v, (int, float))]
        assert values, f"{task} emitted no numeric metric"
        assert all(math.isfinite(v) for v in values), (task, res)


def test_samples_carry_prompt_response_and_evidence(llava_run):
    samples = llava_run["samples"]["punrebus_matching"]
    for s in samples:
        assert s["arguments"][0][0] if "arguments" in s else True
        assert isinstance(s["filtered_resps"][0], str)
        assert set(s["accuracy"]) >= {"parsed", "correct", "pred", "gold"}
    assert llava_run["config"]["model"] == "llava_hf"
