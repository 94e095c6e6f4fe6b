"""The fixture of tests/test_plain_run.py: fixed answers for the five groups, and the headline numbers they scored.

Issue 26 asks that a plain lmms-eval run (start-up hook off, ``--include_path``, nothing of lmms-eval replaced) give
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
