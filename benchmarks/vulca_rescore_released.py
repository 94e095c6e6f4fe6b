"""Re-score the released Gemini 2.5 Pro critiques through the real lmms-eval evaluator and the replay model.

    HANYI_VULCA_NLI_MODEL=<local mDeBERTa-v3-base-mnli-xnli> python benchmarks/vulca_rescore_released.py [<dir>]

``<dir>`` (default ``../shared/data/vulca/emnlp2025_research_branch``) holds the two released April transcripts
(``gemini2.5_April_basic.txt``, ``gemini2.5_April_with_Su_Shi.txt``) and ``combined_all_sources_profile_scores.csv``.
The script builds a temporary prepared dataset with the real painting ids (April = doc ``04``) and synthetic images
(``hanyi.data.vulca.build_synthetic``, the hub-format writer of ``hanyi prepare vulca``), points ``HANYI_VULCA_DATA``
at it, writes replay records keyed by ``doc_id``, runs ``simple_evaluate`` with :class:`hanyi.models.replay.ReplayModel`
and prints our ``profile_*`` results next to the released per-file CSV values.

Conditions: the code's "basic" round sent core prompt + KB, so ``basic`` is re-scored as ``vulca_baseline_kb``;
``with_Su_Shi`` as ``vulca_persona_kb_su_shi``. The released values come from an unreleased continuous scorer (their
Theory&Comparison exceeds the 0.5 cap of the released rules), so they differ from ours even with the same NLI model;
with another NLI model (the tiny random test model is used when none is configured) every value differs.
"""

import csv
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "shared", "data", "vulca", "emnlp2025_research_branch")
RELEASED = {  # transcript -> (task, doc_id, file_id in the released CSV)
    "gemini2.5_April_basic.txt": ("vulca_baseline_kb", "04", "April\\四月(basic).txt"),
    "gemini2.5_April_with_Su_Shi.txt": ("vulca_persona_kb_su_shi", "04", "April\\四月(with_Su_Shi).txt"),
}
CSV_PROFILES = (
    "comprehensive_analyst",
    "historically_focused",
    "technique_style_focused",
    "theory_comparison_focused",
    "general_descriptive",
)


def released_scores(folder: str) -> dict:
    out = {}
    with open(os.path.join(folder, "combined_all_sources_profile_scores.csv"), encoding="utf-8-sig") as f:
        for row in csv.DictReader(f):
            if row["source"] == "google_gemini-2.5pro":
                out[row["file_id"]] = {k: float(row[f"profile_score_{k}"]) for k in CSV_PROFILES}
    return out


def main():
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("folder", nargs="?", default=SHARED, help=f"the released transcripts (default {SHARED})")
    folder = parser.parse_args().folder
    if not os.path.isdir(folder):
        raise SystemExit(f"{folder} not found: pass the folder holding the released transcripts")
    tmp = tempfile.mkdtemp(prefix="hanyi-vulca-rescore-")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_CACHE", os.path.join(tmp, "datasets"))
    note = ""
    if not os.environ.get("HANYI_VULCA_NLI_MODEL"):
        sys.path.insert(0, os.path.join(HERE, "..", "tests", "fixtures", "vulca"))
        from tiny_nli import build_tiny_nli

        os.environ["HANYI_VULCA_NLI_MODEL"] = build_tiny_nli(os.path.join(tmp, "tiny_nli"))
        note = " (tiny RANDOM test model: no HANYI_VULCA_NLI_MODEL set; the values only show the pipeline works)"

    from lmms_eval import evaluator
    from lmms_eval.tasks import TaskManager

    import hanyi
    from hanyi.data.vulca import build_synthetic
    from hanyi.models.replay import ReplayModel

    data_dir = os.path.join(tmp, "vulca")
    build_synthetic(data_dir, sorted({doc for _, doc, _ in RELEASED.values()}), builder="benchmarks/vulca_rescore")
    os.environ["HANYI_VULCA_DATA"] = data_dir
    records = os.path.join(tmp, "released.jsonl")
    with open(records, "w", encoding="utf-8") as f:
        for name, (task, doc, _) in RELEASED.items():
            with open(os.path.join(folder, name), encoding="utf-8") as t:
                f.write(json.dumps({"task": task, "key": {"doc_id": doc}, "response": t.read()}, ensure_ascii=False))
                f.write("\n")
    tasks = [task for task, _, _ in RELEASED.values()]
    t0 = time.perf_counter()
    out = evaluator.simple_evaluate(
        model=ReplayModel(path=records),
        tasks=tasks,
        task_manager=TaskManager("WARNING", include_path=hanyi.TASKS_DIR, include_defaults=False),
        bootstrap_iters=0,
        log_samples=True,
    )
    # profile_* are computed from the sample log, as hanyi report does (hanyi/metrics/vulca_breakdowns.py)
    from hanyi.metrics.from_samples import derive

    results = {
        task: {
            **{k.split(",")[0]: v for k, v in out["results"][task].items()},
            **{k.removesuffix("_custom_model"): v for k, (v, _) in derive(task, out["samples"][task]).items()},
        }
        for task in tasks
    }
    elapsed = time.perf_counter() - t0
    released = released_scores(folder)
    print(f"NLI model: {os.environ['HANYI_VULCA_NLI_MODEL']}{note}")
    print(f"evaluator run (replay model, {len(tasks)} tasks, 1 doc each): {elapsed:.1f} s")
    print(f"{'transcript':34s} {'profile':26s} {'ours':>7s} {'released':>9s}")
    for name, (task, _, file_id) in RELEASED.items():
        res = results[task]
        if f"profile_{CSV_PROFILES[0]}" not in res:
            raise SystemExit(f"{task}: no profile metrics (NLI model failed to load?) -> {sorted(res)}")
        for k in CSV_PROFILES:
            ours, rel = res[f"profile_{k}"], released.get(file_id, {}).get(k, float("nan"))
            print(f"{name:34s} {k:26s} {ours:7.3f} {rel:9.3f}")
        print(f"{name:34s} {'json_valid_rate':26s} {res['json_valid_rate']:7.3f}")
    print(
        "Released values come from an unreleased continuous scorer with mDeBERTa-v3-base-mnli-xnli; the released "
        "rules (ours) cap theory_comparison at 0.5. A different NLI model gives different values."
    )


if __name__ == "__main__":
    main()
