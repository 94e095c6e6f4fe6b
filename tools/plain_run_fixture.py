"""The fixture of tests/test_plain_run.py: fixed answers for the five groups, and the headline numbers they scored.

A plain lmms-eval run (start-up hook off, ``--include_path``, nothing of lmms-eval replaced) must give
the same headline numbers as the hanyi of before, for the same replayed answers. This script made the fixture once,
with hanyi 0.3.0 (main at 63f95a4, every run-time patch installed by the start-up hook)::

    python tools/plain_run_fixture.py responses RUN_DIR tests/fixtures/plain_run/responses.jsonl
    python tools/plain_run_fixture.py expected tests/fixtures/plain_run/responses.jsonl \
        tests/fixtures/plain_run/expected.json
    NLTK_DATA=<dir with WordNet> python tools/plain_run_fixture.py expected tests/fixtures/plain_run/responses.jsonl \
        tests/fixtures/plain_run/expected_wordnet.json

(``expected_wordnet.json``: the same with NLTK's WordNet found, where Pun Rebus ``element_abs`` and UNPIE ``meteor``
are the paper's keys; ``tests/test_plain_run.py`` compares with the one that fits the machine.)

``responses``: from the sample logs of a tiny-LLaVA run of the five groups on the bundled sample data (``make demo``):
the gold target for docs with an even ``doc_id`` (so scores are not all 0), the model's own answer otherwise.
``expected``: runs ``lmms-eval --model replay`` on them and keeps every number of every task.

UNPIE's tasks were renamed after the fixture was made (task versions grounding 0.4, disambiguation 0.8,
reconstruction 0.8): ``unpie_<x>`` (``unpie_grounding``, ``unpie_disambiguation_<lang>``,
``unpie_reconstruction_<lang>``), a group of ``unpie_<x>_homo`` and ``unpie_<x>_hetero`` in 0.3.0, is now one task
that scores the docs of both splits, homographic ones first. :func:`merged_responses` and :func:`merged_expected`
map the fixture onto it, explicitly: a record of ``unpie_<x>_homo`` doc ``i`` answers ``unpie_<x>`` doc ``i``, one of
``unpie_<x>_hetero`` doc ``i`` answers ``unpie_<x>`` doc ``n + i`` (``n``: the number of homographic docs, the records
of ``unpie_<x>_homo``); the number ``<metric>`` of ``unpie_<x>_homo`` (``_hetero``) is ``<metric>_homo``
(``_hetero``) of ``unpie_<x>``, which ``hanyi report`` computes from the sample log, and the numbers of the group
``unpie_<x>`` are those of the task ``unpie_<x>``.
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import tempfile

GROUPS = "punrebus,cvlue,cii,unpie,vulca"
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HANYI_DATA_ROOT": "sample"}


def responses(run_dir: str, out: str) -> int:
    """Write one replay record per logged doc of every ``*_samples_<task>.jsonl`` under ``run_dir``."""
    files = sorted(glob.glob(os.path.join(run_dir, "*_samples_*.jsonl")))
    latest: dict[str, str] = {}
    for path in files:  # the newest file of each task (names start with the run's date)
        task = re.sub(r"^.*?_samples_", "", os.path.basename(path))[: -len(".jsonl")]
        latest[task] = path
    records = []
    for task, path in sorted(latest.items()):
        with open(path, encoding="utf-8") as f:
            for line in f:
                sample = json.loads(line)
                target, answer = sample.get("target"), sample.get("filtered_resps")
                if isinstance(answer, list):
                    answer = answer[0] if answer else ""
                use_target = sample["doc_id"] % 2 == 0 and isinstance(target, str)
                records.append({"task": task, "doc_id": sample["doc_id"], "response": target if use_target else answer})
    with open(out, "w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return len(records)


_UNPIE_SPLIT_TASK = re.compile(r"(unpie_(?:grounding|disambiguation_\w\w|reconstruction_\w\w))_(homo|hetero)")


def unpie_merged(task: str) -> tuple[str, str] | None:
    """``(task, split suffix)`` that hanyi 0.3.0's one-split UNPIE task ``task`` became, or None for another task.

    >>> unpie_merged("unpie_reconstruction_de_hetero"), unpie_merged("unpie_grounding")
    (('unpie_reconstruction_de', 'hetero'), None)
    """
    found = _UNPIE_SPLIT_TASK.fullmatch(task)
    return (found.group(1), found.group(2)) if found else None


def merged_records(records: list[dict]) -> list[dict]:
    """``records`` with each one-split UNPIE record moved to the task that scores both splits (see the module
    docstring); every other record unchanged."""
    homographic: dict[str, int] = {}
    for rec in records:
        merged = unpie_merged(rec["task"])
        if merged and merged[1] == "homo":
            homographic[merged[0]] = homographic.get(merged[0], 0) + 1
    out = []
    for rec in records:
        merged = unpie_merged(rec["task"])
        if merged:
            task, split = merged
            rec = {**rec, "task": task, "doc_id": rec["doc_id"] + (homographic[task] if split == "hetero" else 0)}
        out.append(rec)
    return out


def merged_responses(responses_file: str, out: str) -> int:
    """Write ``responses_file`` with :func:`merged_records`; returns the number of records moved."""
    with open(responses_file, encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    merged = merged_records(records)
    with open(out, "w", encoding="utf-8") as f:
        for rec in merged:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return sum(a["task"] != b["task"] for a, b in zip(records, merged))


def merged_expected(expected: dict) -> dict:
    """``expected`` (hanyi 0.3.0's numbers) with each one-split UNPIE task's ``<metric>,<filter>`` moved to
    ``<metric>_<split suffix>,<filter>`` of the task that scores both splits (see the module docstring)."""
    out: dict[str, dict] = {}
    for task, values in expected.items():
        merged = unpie_merged(task)
        if not merged:
            out.setdefault(task, {}).update(values)
            continue
        target = out.setdefault(merged[0], {})
        for key, value in values.items():
            metric, _, filt = key.partition(",")
            target[f"{metric}_{merged[1]},{filt}"] = value
    return out


def run_replay(responses_file: str, output_path: str, env: dict | None = None, extra_args=()) -> dict:
    """``lmms-eval --model replay`` on ``responses_file`` for the five groups; returns the results file's dict."""
    lmms_eval = os.path.join(os.path.dirname(sys.executable), "lmms-eval")
    cmd = [
        lmms_eval,
        "--model",
        "replay",
        "--model_args",
        f"path={responses_file}",
        "--tasks",
        GROUPS,
        "--output_path",
        output_path,
        "--log_samples",
        *extra_args,
    ]
    proc = subprocess.run(cmd, env={**os.environ, **OFFLINE, **(env or {})}, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"lmms-eval exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    (results,) = glob.glob(os.path.join(output_path, "*", "*_results.json"))
    with open(results, encoding="utf-8") as f:
        return json.load(f)


def numbers(results: dict) -> dict[str, dict[str, float]]:
    """``{task: {"metric,filter": value}}``: every number lmms-eval reported, standard errors left out."""
    out = {}
    for task, entry in results["results"].items():
        kept = {
            k: v
            for k, v in entry.items()
            if "," in k and "_stderr" not in k and isinstance(v, (int, float)) and not isinstance(v, bool)
        }
        out[task] = kept
    return out


def differences(found: dict, expected: dict) -> list[str]:
    """Every number of ``found`` that does not agree with ``expected`` under the float rule (:mod:`hanyi.floats`):
    a backbone value (the fixture was written on another machine) within its tolerance, every other number exactly."""
    from hanyi import floats

    return floats.differences(found, expected)


def expected(responses_file: str, out: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        found = numbers(run_replay(responses_file, tmp))
    with open(out, "w", encoding="utf-8") as f:
        json.dump(found, f, ensure_ascii=False, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    what, *args = sys.argv[1:]
    if what == "responses":
        print(responses(*args), "records")
    elif what == "expected":
        expected(*args)
    else:
        sys.exit(__doc__)
