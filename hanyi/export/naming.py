"""Names and wording every part of the exporter shares: where the shared code goes and how hanyi's history is kept
out of exported text. A module of its own so that the exporter, the README writer and the pull request writer need
not import one another."""

from __future__ import annotations

import os
import re

#: Where the shared code goes, relative to ``<out>`` (= ``lmms_eval/tasks/``), and the package it is imported as. The
#: name says what the code serves, as upstream's own helpers do (``_task_utils/file_utils.py``, ``vqa_eval_metric.py``),
#: not which project exported it: every exported import line carries it, and upstream keeps no exporter's name.
LIB_DIR = os.path.join("_task_utils", "cultural_utils")
LIB_PACKAGE = "lmms_eval.tasks._task_utils.cultural_utils"

ISSUE_REF = re.compile(r"\bissues? \d+|\(#\d+\)")
_HISTORY = [
    (re.compile(r"\s*\((?:see )?issues? \d+[^()]*\)"), ""),  # a parenthesised ticket number and words
    (re.compile(r"\s*[;,:—–-]+\s*issues? \d+(?=\))"), ""),  # a ticket number closing a parenthesis after other words
    (re.compile(r"\b([Uu]ntil|[Ss]ince|[Bb]efore|[Aa]fter) issues? \d+"), r"\1 an earlier release"),
    (re.compile(r"\s*\(#\d+\)"), ""),
]


def without_history(text: str) -> str:
    """``text`` (a comment, a docstring, a README) without hanyi's issue numbers: a maintainer upstream cannot follow
    them. What names an issue otherwise is left for the dry run's check to report."""
    for pattern, repl in _HISTORY:
        text = pattern.sub(repl, text)
    return text


#: hanyi's commands and pages named in the prose an export copies (the benchmark pages' sections in README and
#: DETAILS, comments), reworded to what a user of the upstream tree has: the sample log (``--log_samples``) where
#: hanyi's report computes a breakdown from it, the NLTK command where ``hanyi setup`` installs WordNet; a pointer to
#: a page or module upstream does not have is dropped with its parentheses. In order; the leftover checks report
#: whatever a new wording needs (``tests/test_export.py``).
UPSTREAM_WORDING = (
    (r"\s*\(`hanyi report`, from the sample log\)", " (from the sample log)"),
    (r"(; |\()`hanyi/metrics/\w+_breakdowns\.py`,\s*", r"\1"),
    (r"; `hanyi/metrics/\w+_breakdowns\.py`\)", ")"),
    (r"\s*\(:?\w*:?`*hanyi[./]metrics[./]\w+_breakdowns(?:\.py)?`*\)", ""),
    (r"([Cc]omputed) by `hanyi report`(\s+)from", r"\1\2from"),
    (r"`hanyi report`(\s+)computes(\s+)them(\s+)from", r"they\1are\2computed\3from"),
    (r"`hanyi report`(\s+)computes(\s+)the rest(\s+)from", r"The rest\1is\2computed\3from"),
    (r"`hanyi report` adds from the sample log", "Computed from the sample log"),
    (r"What `hanyi report` computes from the sample log", "What is computed from the sample log"),
    (r"so `hanyi report` recomputes every interval from", "so every interval can be recomputed from"),
    (
        r"and `hanyi report` recomputes them and their intervals from",
        "and they and their intervals can be recomputed from",
    ),
    (r"`hanyi report` never marks them comparable", "they are never marked comparable"),
    (r"`hanyi report`'s interval and SE", "the resampled interval and SE"),
    (r"`hanyi report` gives its(\s+)exact", r"its\1exact"),
    (r"come from `hanyi report` over the sample log", "are computed from the sample log"),
    (r"\(ours, `hanyi report`\)", "(ours, from the sample log)"),
    (r"\(`hanyi report`\)", "(from the sample log)"),
    (r", and `hanyi report` converts \(anchor `scale: 100`\)", ""),
    (
        r"hanyi's one unit for all benchmarks(\s+)\(`docs/reading-results\.md`, \"Units\"\)",
        r"one unit for\1all these benchmarks",
    ),
    (r"(come\s+from the same log): `python -m hanyi\.report\.\w+ [^`]*`", r"\1"),
    (r"`hanyi prepare \w+` leaves", "The dataset preparation leaves"),
    (r"recorded in `hanyi_build\.json`", "recorded with the prepared dataset"),
    (r"`hanyi setup`", "`python -m nltk.downloader wordnet`"),
    (r" \(`hanyi eval`\)", ""),
    (r" \(`hanyi doctor`, docs/backbones\.md\)", ""),
    (r"\bhanyi's parser:", "our parser:"),
    (r"\| hanyi: ", "| ours: "),
    (r"not re-hosted by hanyi", "not re-hosted here"),
    (r"^Offline: `hanyi prepare[^\n]*\n", ""),
    (r" \(hanyi's `tests/[\w/.]+`\)", ""),
    (
        r"\. hanyi never changes globals after loading a template",
        ". Nothing changes globals after a template is loaded",
    ),
)


def upstream_wording(text: str) -> str:
    """``text`` with :data:`UPSTREAM_WORDING` applied."""
    for pattern, repl in UPSTREAM_WORDING:
        text = re.sub(pattern, repl, text, flags=re.M)
    return text
