"""VULCA-Bench constants shared by the task and the board."""

#: The key of our uncalibrated 1-5 judge score (only with a judge configured): the only judged metric of every
#: ``vulca_bench_<culture>`` task, so the only key a board submission's ``verdicts`` may hold for one.
JUDGE_METRIC = "judge_score_uncalibrated"
