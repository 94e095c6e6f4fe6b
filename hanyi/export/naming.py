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
