"""``hanyi submit``: submission files from an lmms-eval output directory (run with ``--log_samples``).

Usage::

    hanyi submit OUTPUT_DIR --benchmark cvlue [--out DIR] [--model LABEL] [--name "Qwen2.5-VL 7B"] [model card flags]

* **cvlue**: ``cvlue_submission.json`` (the ``hanyi-submission`` format below, for ``hanyi leaderboard``) and the
  official CVLUE submission files (format of the official ``test_example/`` and the baseline repo):
  ``vqa_submit.json`` (``[{image, question_id, answer}]``), ``vg_submit.json`` (``[{ref_id, image, bbox: [x, y, w, h]}]``,
  absolute pixels), ``vd_submit.json`` (``[{image_id, dialog_id, question, answer_sort: [ids, best first]}]``),
  ``i2t_submit.json`` / ``t2i_submit.json`` (``{query: [top-N candidates]}``). Lists keep the dataset order, which the
  official merge relies on.
* **other benchmarks** (no official submission format exists): ``<benchmark>_submission.json`` in the documented
  ``hanyi-submission`` format (``docs/reading-results.md``): run metadata, per task the aggregated metrics and one
  prediction per doc with its evidence.

Every file is validated against its format before it is written; a violation is an error naming the record. Files
are standard JSON: a NaN or infinity never reaches them (a non-finite box is written as the empty, unparsed box; other
non-finite numbers as ``null``).

Completeness: each task's sample log must hold every doc of the dataset split exactly once (checked against the
results' ``n-samples``), each line with an integer ``doc_id``, and the run must not use ``--limit``. Otherwise the
command refuses, naming the task and the problem, unless ``--allow-partial`` is given; then the ``hanyi-submission``
document carries ``"partial": {task: [problems]}`` and CVLUE files get a ``PARTIAL.json`` beside them.

Data: a run on the bundled synthetic sample (``HANYI_DATA_ROOT=sample``, recognised from the ``dataset_path``
lmms-eval records) is no submission; the command refuses it unless ``--allow-sample`` is given, and then says so on
stderr and in the files (``"sample": [tasks]`` in the ``hanyi-submission`` document, and a ``SAMPLE.json`` beside
the files of either format).

Display name and model card: ``--model`` only picks a run when the folder holds several; ``--name`` and the other
model-card flags (:mod:`hanyi.submit.model_card`) write ``model_card`` into the ``hanyi-submission`` document, which
the board shows (the lmms-eval model class and ``model_args`` stay in provenance).

Modules: :mod:`hanyi.submit.samples` (reading sample logs, completeness), :mod:`hanyi.submit.hanyi_format` (the
``hanyi-submission`` document), :mod:`hanyi.submit.cvlue` (the official CVLUE files); this module is the command.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from hanyi import BENCHMARKS, plain_doc
from hanyi.submit.cvlue import (  # noqa: F401  (public API, importable from hanyi.submit)
    CVLUE_FILES,
    ITR_TOP_N,
    cvlue_files,
    cvlue_itr,
    cvlue_vd,
    cvlue_vg,
    cvlue_vqa,
    validate_cvlue,
)
from hanyi.submit.hanyi_format import (  # noqa: F401
    FORMAT_NAME,
    FORMAT_VERSION,
    hanyi_submission,
    validate_hanyi_submission,
)
from hanyi.submit.samples import (  # noqa: F401
    SubmissionError,
    _finite,
    _last_per_doc,
    check_complete,
    evidence,
    read_samples,
)


# ---- command --------------------------------------------------------------------------------------------------------
def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=plain_doc(__doc__))
    parser.add_argument("path", metavar="OUTPUT_DIR", help="lmms-eval output dir (or *_results.json) with sample logs")
    parser.add_argument("--benchmark", required=True, choices=BENCHMARKS)
    parser.add_argument(
        "--out", default=None, help="where to write (default: <OUTPUT_DIR>/hanyi_submission/<benchmark>)"
    )
    parser.add_argument(
        "--model", default=None, help="which run, by its report label, when the dir holds several models"
    )
    parser.add_argument(
        "--allow-partial",
        action="store_true",
        help="write even when a sample log is incomplete, duplicated or from a --limit run (the file says so)",
    )
    parser.add_argument(
        "--allow-sample",
        action="store_true",
        help="write even when the run used the bundled synthetic sample, not the benchmark (the file says so)",
    )
    from hanyi.submit.model_card import add_arguments

    add_arguments(parser)
    return parser


#: Why a run on the bundled sample is no submission.
SAMPLE_NOTE = "the run used the bundled synthetic sample (HANYI_DATA_ROOT=sample), not the benchmark's data"


def sample_tasks(run, tasks) -> list[str]:
    """The tasks of ``run`` whose data was the bundled synthetic sample (from the recorded ``dataset_path``)."""
    return [t for t in tasks if (run.tasks[t].provenance.get("data_source") or {}).get("kind") == "sample"]


def _pick_run(runs, label):
    if label is not None:
        picked = [r for r in runs if r.label == label]
        if not picked:
            raise SubmissionError(f"no run labelled {label!r}; runs: {', '.join(r.label for r in runs)}")
        return picked[0]
    if len(runs) > 1:
        raise SubmissionError(
            f"several models in these results; choose one with --model ({', '.join(r.label for r in runs)})"
        )
    return runs[0]


def make_submission(
    path: str,
    benchmark: str,
    out_dir: str,
    model: str | None = None,
    allow_partial: bool = False,
    allow_sample: bool = False,
    card: dict | None = None,
) -> list[str]:
    """Write the submission files of ``benchmark``; returns their paths.

    Refuses (:class:`SubmissionError`) a task without a sample log or with an incomplete one
    (:func:`check_complete`) unless ``allow_partial``, and a run on the bundled sample unless ``allow_sample``;
    then the problems are recorded in the output.
    """
    from hanyi.results.runs import benchmark_of, load_runs, parents_of

    run = _pick_run(load_runs([path]), model)
    parents = parents_of(run)
    tasks = sorted(t for t in run.tasks if benchmark_of(t, parents) == benchmark and not run.tasks[t].is_group)
    if not tasks:
        raise SubmissionError(f"no {benchmark} task in {path} (tasks: {', '.join(sorted(run.tasks)) or 'none'})")
    on_sample = sample_tasks(run, tasks)
    if on_sample and not allow_sample:
        raise SubmissionError(
            f"{SAMPLE_NOTE} ({', '.join(on_sample[:3])}{' ...' if len(on_sample) > 3 else ''}): not a submission. Run "
            f"on the benchmark (`hanyi tasks {benchmark}` shows where its data comes from), or pass --allow-sample "
            "to write the files anyway, marked as sample"
        )
    checked = [t for t in tasks if benchmark != "cvlue" or t in CVLUE_FILES]
    samples, partial = {}, {}
    for name in checked:
        task = run.tasks[name]
        if not task.samples_file:
            if benchmark == "cvlue":
                continue  # cvlue_files names the missing log
            partial[name] = ["no sample log beside the results (re-run lmms-eval with --log_samples)"]
            continue
        samples[name] = read_samples(task.samples_file)
        problems = check_complete(task, samples[name], run.limit)
        if problems:
            partial[name] = problems
    if partial and not allow_partial:
        lines = [f"{name}: {'; '.join(p)}" for name, p in sorted(partial.items())]
        raise SubmissionError(
            "incomplete results, not a submission (--allow-partial writes them anyway, marked partial):\n  "
            + "\n  ".join(lines)
        )
    samples = {name: _last_per_doc(rows) for name, rows in samples.items()}
    if benchmark == "cvlue":
        files = cvlue_files(run, samples)
        if partial:
            files["PARTIAL.json"] = {"partial": partial}
        if samples:  # beside the official files: the same predictions with what a leaderboard checks
            doc = hanyi_submission(run, benchmark, sorted(samples), samples)
            doc |= {"model_card": card} if card else {}
            doc |= {"partial": partial} if partial else {}
            doc |= {"sample": [t for t in on_sample if t in samples]} if on_sample else {}
            validate_hanyi_submission(doc)
            files[f"{benchmark}_submission.json"] = doc
    else:
        doc = hanyi_submission(run, benchmark, tasks, samples)
        if card:
            doc["model_card"] = card
        if partial:
            doc["partial"] = partial
        if on_sample:
            doc["sample"] = on_sample
        validate_hanyi_submission(doc)
        files = {f"{benchmark}_submission.json": doc}
    if on_sample:
        files["SAMPLE.json"] = {"sample": on_sample, "note": SAMPLE_NOTE}
    from hanyi.outputs import open_output

    os.makedirs(out_dir, exist_ok=True)
    written = []
    for name, data in files.items():
        target = os.path.join(out_dir, name)
        text = json.dumps(_redact_tree(_finite(data)), ensure_ascii=False, indent=1, allow_nan=False)
        with open_output(out_dir, target) as f:  # never through a symlink out of --out
            f.write(text)
        written.append(target)
    return written


def _redact_tree(value):
    from hanyi.redact import redact_tree

    return redact_tree(value)


def main(argv: list[str] | None = None, prog: str = "hanyi submit") -> int:
    from hanyi.results.runs import NoResultsError

    args = build_parser(prog).parse_args(argv)
    base = args.path if os.path.isdir(args.path) else os.path.dirname(args.path) or "."
    out_dir = args.out or os.path.join(base, "hanyi_submission", args.benchmark)
    from hanyi.submit.model_card import card_from_args

    try:
        card = card_from_args(args)
    except ValueError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    try:
        written = make_submission(
            args.path, args.benchmark, out_dir, args.model, args.allow_partial, args.allow_sample, card
        )
    except (NoResultsError, SubmissionError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    if any(os.path.basename(p) == "SAMPLE.json" for p in written):
        print(f"{prog}: {SAMPLE_NOTE}; written as asked (--allow-sample), marked as sample", file=sys.stderr)
    for path in written:
        print(path)
    return 0
