"""The ``hanyi`` command line (in-process; the lmms-eval CLI itself is exercised in test_discovery.py)."""

from __future__ import annotations

import json
import re

import pytest

from hanyi.cli import main


def test_tasks_lists_tasks_with_counts_and_source(capsys):
    assert main(["tasks", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["punrebus_matching"]["docs"] == "12"
    assert rows["punrebus_matching_5shot"]["docs"] == "7"  # process_docs drops the five exemplar stories' images
    assert rows["punrebus_matching"]["source"].endswith("sample/punrebus [images]")
    groups = [r for r in rows.values() if r["type"] == "group"]
    assert groups and all(re.fullmatch(r"\d+ tasks?", r["docs"]) for r in groups)


def test_tasks_filters_by_benchmark(capsys):
    assert main(["tasks", "cii", "--no-count", "--json"]) == 0
    names = [r["name"] for r in json.loads(capsys.readouterr().out)]
    assert all(n.startswith("cii") for n in names)


def test_prepare_rejects_unknown_benchmark(capsys):
    with pytest.raises(SystemExit):
        main(["prepare", "nope"])
