"""Fixtures of the leaderboard's tests: real ``hanyi submit`` files of replay runs on the sample data.

``leaderboard_submissions`` (session-scoped) returns ``{name: path of a cii_submission.json}``. Every file is what
``hanyi submit OUT --benchmark cii --allow-sample`` wrote for a ``--model replay`` run of ``cii_none`` (multiple
choice, 12 sample docs) and ``cii_ctc`` (descriptions scored 1-5 by a judge, 2 sample docs) through the real lmms-eval
evaluator (``tests/conftest.py``'s ``replay``), the judge being tests/judge_server.py's fake OpenAI server:

* ``alpha``, ``beta``, ``html``: three models of one protocol (judge ``fake-judge-a``); ``html``'s model name is
  ``<img src=x onerror=alert(1)>`` (:data:`HTML_MODEL`), which is no reason to reject and must stay inert text;
* ``other_judge``: a fourth model judged by ``fake-judge-b`` (another protocol: ranked apart);
* ``tampered``: ``alpha``'s file with its claimed ``cii_none`` ``acc`` raised by 10 points (:data:`TAMPERED`);
* ``limit``: a ``--limit 3`` run, written with ``--allow-partial`` (rejected: not the full split).

The board that reads them has no judge configured (``HANYI_JUDGE_*`` unset), so judged metrics are re-aggregated from
the logged verdicts. The responses (:func:`responses`) are deterministic, so two sessions write the same predictions.
"""

from __future__ import annotations

import json
import os

import pytest

#: A model name that would run script if a page wrote it as HTML.
HTML_MODEL = "<img src=x onerror=alert(1)>"
#: (task, metric, added to the claimed value) of the ``tampered`` file.
TAMPERED = ("cii_none", "acc", 10.0)
#: name -> (model name, judge model, --limit)
RUNS = {
    "alpha": ("alpha-vl", "fake-judge-a", None),
    "beta": ("beta-vl", "fake-judge-a", None),
    "html": (HTML_MODEL, "fake-judge-a", None),
    "other_judge": ("gamma-vl", "fake-judge-b", None),
    "limit": ("delta-vl", "fake-judge-a", 3),
}
TASKS = ["cii_none", "cii_ctc"]


def responses(name: str) -> list[dict]:
    """Replay records of model ``name``: a letter per ``cii_none`` doc, a description per ``cii_ctc`` doc."""
    shift = sorted(RUNS).index(name) if name in RUNS else 0
    records = [
        {"task": "cii_none", "doc_id": i, "response": "ABCDEF"[(i * (shift + 1) + shift) % 6]} for i in range(12)
    ]
    records += [{"task": "cii_ctc", "doc_id": i, "response": f"画中之意 {name} {i}"} for i in range(2)]
    return records


@pytest.fixture(scope="session")
def leaderboard_submissions(replay, fake_judge, session_tmp) -> dict[str, str]:
    from hanyi.results.lmms_output import save_like_cli
    from hanyi.submit import main as submit

    root = os.path.join(session_tmp, "leaderboard")
    out: dict[str, str] = {}
    saved = {k: os.environ.get(k) for k in ("HANYI_JUDGE_BASE_URL", "HANYI_JUDGE_MODEL", "HANYI_JUDGE_CACHE_DIR")}
    try:
        with fake_judge() as judge:
            for name, (model, judge_model, limit) in RUNS.items():
                os.environ.update(
                    HANYI_JUDGE_BASE_URL=judge.base_url,
                    HANYI_JUDGE_MODEL=judge_model,
                    HANYI_JUDGE_CACHE_DIR=os.path.join(root, "judge-cache"),
                )
                kwargs = {"limit": limit} if limit else {}
                results = replay(responses(name), TASKS, **kwargs)
                results["config"]["model"] = model
                run_dir = os.path.join(root, "runs", name)
                save_like_cli(results, run_dir, model_args=f"path=replay-{name}.jsonl")
                sub_dir = os.path.join(root, "submissions", name)
                argv = [run_dir, "--benchmark", "cii", "--out", sub_dir, "--allow-sample"]
                assert submit([*argv, "--allow-partial"] if limit else argv) == 0
                out[name] = os.path.join(sub_dir, "cii_submission.json")
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    task, metric, delta = TAMPERED
    with open(out["alpha"], encoding="utf-8") as f:
        doc = json.load(f)
    doc["tasks"][task]["metrics"][metric] += delta
    os.makedirs(os.path.join(root, "submissions", "tampered"))
    out["tampered"] = os.path.join(root, "submissions", "tampered", "cii_submission.json")
    with open(out["tampered"], "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
    return out
