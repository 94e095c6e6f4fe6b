"""hanyi (含义, "implied meaning"): lmms-eval tasks for cultural and implied-meaning VLM benchmarks.

Importing this package is cheap (standard library only); it runs at every interpreter start-up through the
``_hanyi_autohook.pth`` discovery hook, see :mod:`hanyi._autohook` and ``docs/dev/discovery.md``.
"""

import os as _os

__version__ = "0.3.0"

#: Absolute path of the directory that holds every hanyi task YAML. Usable as ``--include_path``.
TASKS_DIR = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "tasks")

#: Absolute path of hanyi's lm-evaluation-harness task YAMLs (the text-only tasks). Usable as lm-eval's ``--include_path``.
LM_EVAL_TASKS_DIR = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "lm_eval_tasks")


def plain_doc(doc: str | None) -> str:
    """The first paragraph of a docstring as ``--help`` text: one line, without reST markup (double backticks, roles).

    >>> plain_doc("``hanyi report``: reports from :mod:`lmms_eval`\\n  output dirs.\\n\\nUsage: ...")
    'hanyi report: reports from lmms_eval output dirs.'
    """
    import re

    first = (doc or "").strip().split("\n\n")[0]
    first = re.sub(r":[a-z]+:`([^`]*)`", r"\1", first)
    return " ".join(first.replace("``", "").split())


#: The benchmarks, in the order of the README.
BENCHMARKS = ("punrebus", "cvlue", "cii", "unpie", "vulca", "vulca_bench")
