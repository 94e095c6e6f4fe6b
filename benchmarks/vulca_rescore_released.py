"""Re-score released Gemini critiques with our extractor + profile rules, next to the released per-file scores.

    HANYI_VULCA_NLI_MODEL=<nli model> python benchmarks/vulca_rescore_released.py [<dir with *.txt transcripts>]

Default dir: ../shared/data/vulca/emnlp2025_research_branch (two April transcripts). Released values come from
``combined_all_sources_profile_scores.csv`` (an unreleased continuous scorer, so they differ from the released rules
even with the same NLI model; with another NLI model, e.g. the tiny test model, every value differs).
"""

import csv
import glob
import os
import re
import sys

from hanyi.metrics.critique_profile import PROFILE_KEYS, profile_scores
from hanyi.metrics.critique_scoring import critique_features
from hanyi.metrics.zeroshot_nli import NLIConfig

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "vulca", "emnlp2025_research_branch")
CSV_COLS = (
    "comprehensive_analyst",
    "historically_focused",
    "technique_style_focused",
    "theory_comparison_focused",
    "general_descriptive",
)


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else SHARED
    released = {}
    with open(os.path.join(SHARED, "combined_all_sources_profile_scores.csv"), encoding="utf-8-sig") as f:
        for row in csv.DictReader(f):
            if row["source"] == "google_gemini-2.5pro":
                key = row["file_id"].split("\\")[-1]
                released[key] = [float(row[f"profile_score_{c}"]) for c in CSV_COLS]
    pattern = "gemini*.txt" if folder == SHARED else os.path.join("**", "*.txt")
    paths = sorted(glob.glob(os.path.join(folder, pattern), recursive=True))
    cfg = NLIConfig.from_env()
    feats = critique_features([open(p, encoding="utf-8").read().strip() for p in paths], cfg)
    if feats is None:
        raise SystemExit(f"NLI model {cfg.model!r} unavailable; set HANYI_VULCA_NLI_MODEL")
    print(
        f"NLI model: {cfg.model}  template: {cfg.template!r}  (values differ from the release unless this is mDeBERTa)"
    )
    print("file | ours (" + ", ".join(PROFILE_KEYS) + ") | released CSV")
    for path, f in zip(paths, feats):
        ours = profile_scores(*f["stance_top1"], f["features"], f["quality"])
        m = re.search(r"April_(basic|with_.*)\.txt$", os.path.basename(path))
        key = f"四月({m.group(1)}).txt" if m else os.path.basename(path)
        rel = released.get(key)
        print(f"{os.path.basename(path)} | {' '.join(f'{ours[k]:.3f}' for k in PROFILE_KEYS)} | "
              f"{' '.join(f'{v:.3f}' for v in rel) if rel else 'n/a'}")  # fmt: skip


if __name__ == "__main__":
    main()
