"""No run thrown away after generation (issue 13, item 3): an unforeseen error in ``process_results`` or in an
aggregation of a hanyi task, through the real lmms-eval evaluator, still yields results and a sample log holding
every response, with one error naming the task and metric; the saved sample log then re-scores through replay."""

from __future__ import annotations

import glob
import logging
import math
import os

import pytest

from hanyi import guard
from hanyi.report.lmms_output import save_like_cli

pytestmark = pytest.mark.slow


def _crash_on(monkeypatch, module, name, trigger=None):
    original = getattr(module, name)

    def boom(*args, **kwargs):
        if trigger is None or trigger in map(str, args):
            raise RuntimeError("unforeseen scoring bug")
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, boom)


def test_process_results_failure_keeps_every_response_and_names_the_task(
    replay, evaluate, monkeypatch, caplog, tmp_path
):
    from hanyi.metrics import choice_punrebus

    _crash_on(monkeypatch, choice_punrebus, "extract_first_char_letter", trigger="BOOM")
    records = [{"task": "punrebus_textonly", "doc_id": 0, "response": "BOOM"}]
    records += [{"task": "punrebus_textonly", "doc_id": i, "response": "A"} for i in range(1, 4)]
    with caplog.at_level(logging.ERROR, logger="hanyi.guard"):
        out = replay(records, ["punrebus_textonly"], on_missing="empty")
    assert "task punrebus_textonly: process_results failed on doc" in caplog.text
    assert "unforeseen scoring bug" in caplog.text and "accuracy" in caplog.text
    assert math.isnan(out["results"]["punrebus_textonly"]["accuracy,none"])  # never a number computed otherwise
    samples = {s["doc_id"]: s for s in out["samples"]["punrebus_textonly"]}
    assert samples[0][guard.ERROR_KEY] == "RuntimeError: unforeseen scoring bug"
    assert samples[0]["resps"] == [["BOOM"]] and samples[1]["resps"] == [["A"]]

    # on disk, as the CLI writes it; then fixed scoring re-scores the saved responses through replay
    model_dir = save_like_cli(out, str(tmp_path / "out"), model_args="pretrained=my/model")
    log_file = glob.glob(os.path.join(model_dir, "*_samples_punrebus_textonly.jsonl"))[0]
    with open(log_file, encoding="utf-8") as f:
        assert "BOOM" in f.read()
    monkeypatch.undo()
    from hanyi.models.replay import ReplayModel

    again = evaluate(["punrebus_textonly"], ReplayModel(path=model_dir, on_missing="empty"))
    value = again["results"]["punrebus_textonly"]["accuracy,none"]
    assert isinstance(value, float) and not math.isnan(value)
    assert {s["doc_id"]: s["resps"] for s in again["samples"]["punrebus_textonly"]}[0] == [["BOOM"]]
    assert not any(guard.ERROR_KEY in s for s in again["samples"]["punrebus_textonly"])


def test_aggregation_failure_gives_nan_for_that_metric_only_and_saves_samples(replay, monkeypatch, caplog):
    from hanyi.tasks.punrebus import aggregate

    _crash_on(monkeypatch, aggregate, "punrebus_accuracy_over_all")
    records = [{"task": "punrebus_matching", "doc_id": i, "response": "A"} for i in range(3)]
    with caplog.at_level(logging.ERROR, logger="hanyi.guard"):
        out = replay(records, ["punrebus_matching"], on_missing="empty")
    assert "task punrebus_matching: aggregation of metric accuracy_robust failed" in caplog.text
    res = out["results"]["punrebus_matching"]
    assert math.isnan(res["accuracy_robust,none"])
    assert isinstance(res["accuracy,none"], float) and not math.isnan(res["accuracy,none"])
    assert len(out["samples"]["punrebus_matching"]) >= 3


def test_guard_leaves_other_tasks_alone():
    assert not guard.is_hanyi_task("mmmu_val") and guard.is_hanyi_task("punrebus_textonly")
    agg = guard.guarded_aggregation("cii_none", "acc", lambda items: sum(items) / len(items))
    assert agg([1.0, 0.0]) == 0.5 and math.isnan(agg([1.0, guard.ScoringFailed()]))
    assert math.isnan(agg([1.0, float("nan")]))  # a plain NaN item is the function's business: here it gives NaN


def test_guarded_table_is_made_once_per_task_and_function():
    """lmms-eval asks for a task's aggregation table twice per metric: the wrappers are reused, not rebuilt, and a
    replaced function gets a new wrapper (issue 20)."""
    import lmms_eval.api.task as api_task

    guard.install()

    def acc(items):
        return sum(items) / len(items)

    def acc2(items):
        return max(items)

    task = object.__new__(api_task.ConfigurableTask)
    task._config = type("Config", (), {"task": "cii_none"})()
    task._aggregation_list = {"acc": acc}
    first, second = task.aggregation(), task.aggregation()
    assert first["acc"] is second["acc"] and first["acc"] is not acc and first["acc"]([1.0, 0.0]) == 0.5
    assert set(vars(task)) == {"_config", "_aggregation_list"}  # kept beside the task: a pickled task is unchanged
    task._aggregation_list = {"acc": acc2}
    assert task.aggregation()["acc"] is not first["acc"] and task.aggregation()["acc"]([1.0, 0.0]) == 1.0
    other = object.__new__(api_task.ConfigurableTask)
    other._config = type("Config", (), {"task": "cii_none"})()
    other._aggregation_list = {"acc": acc}
    assert other.aggregation()["acc"] is not first["acc"]  # per task: the wrapper names its own task
