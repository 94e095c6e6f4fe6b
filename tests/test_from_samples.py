"""Breakdowns computed by the report from the sample log (hanyi.metrics.from_samples)."""

import json
import logging

import pytest

from hanyi.metrics import from_samples
from hanyi.results.runs import Metric, add_from_samples


@pytest.fixture
def registered(monkeypatch):
    from_samples.registry()  # the real modules register now, into the real registry (restored after the test)
    monkeypatch.setattr(from_samples, "_REGISTRY", [])
    monkeypatch.setattr(from_samples, "MODULES", ())

    @from_samples.breakdown(r"toy_.*", "acc", lower_is_better=("miss_x",))
    def _by_group(values):
        groups = sorted({v["g"] for v in values})
        out = {
            f"acc_group_{g}": sum(v["c"] for v in values if v["g"] == g) / sum(v["g"] == g for v in values)
            for g in groups
        }
        out["miss_x"] = 0.0
        out["order"] = "".join(v["g"] for v in values)
        return out

    return _by_group


def test_derive_reads_the_source_metric_in_doc_order(registered):
    lines = [
        {"doc_id": 2, "acc": {"g": "b", "c": 1}},
        {"doc_id": 0, "acc": {"g": "a", "c": 0}},
        {"doc_id": 1, "acc": {"g": "a", "c": 1}},
    ]
    out = from_samples.derive("toy_task", lines)
    assert out["acc_group_a"] == (0.5, True)
    assert out["acc_group_b"] == (1.0, True)
    assert out["miss_x"] == (0.0, False)
    assert out["order"] == ("aab", True)  # doc order, not file order


def test_derive_skips_other_tasks_emitted_names_and_incomplete_logs(registered):
    lines = [{"doc_id": 0, "acc": {"g": "a", "c": 1}}]
    assert from_samples.derive("other_task", lines) == {}
    assert "acc_group_a" not in from_samples.derive("toy_task", lines, emitted={"acc_group_a"})
    assert from_samples.derive("toy_task", lines + [{"doc_id": 1}]) == {}  # a line without the source metric
    assert from_samples.derive("toy_task", None) == {}


def test_a_breakdown_that_fails_is_left_out_with_a_warning(registered, caplog):
    lines = [{"doc_id": 0, "acc": "not a dict"}]
    with caplog.at_level(logging.WARNING, logger="hanyi.metrics.from_samples"):
        assert from_samples.derive("toy_task", lines) == {}
    assert "no breakdown from acc" in caplog.text


def test_report_metrics_get_the_breakdowns_marked(registered):
    metrics = {"acc": Metric("acc", 0.5)}
    add_from_samples(metrics, "toy_task", [{"doc_id": 0, "acc": {"g": "a", "c": 1}}])
    assert metrics["acc_group_a"].value == 1.0 and metrics["acc_group_a"].from_samples
    assert metrics["miss_x"].higher_is_better is False
    assert not metrics["acc"].from_samples


def test_the_registry_modules_import_nothing_of_the_tasks_or_the_host():
    import subprocess
    import sys

    code = (
        "import sys; from hanyi.metrics import from_samples; from_samples.registry(); "
        "bad = [m for m in sys.modules if m.startswith(('hanyi.tasks', 'lmms_eval', 'hanyi.host.discovery', 'hanyi.guard'))]; "
        "print(json.dumps(bad))"
    )
    out = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
