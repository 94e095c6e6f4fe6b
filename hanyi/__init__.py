"""hanyi (含义, "implied meaning"): lmms-eval tasks for cultural and implied-meaning VLM benchmarks.

Importing this package is cheap (standard library only); it runs at every interpreter start-up through the
``_hanyi_autohook.pth`` discovery hook, see :mod:`hanyi._autohook` and ``docs/discovery.md``.
"""

import os as _os

__version__ = "0.3.0"

#: Absolute path of the directory that holds every hanyi task YAML. Usable as ``--include_path``.
TASKS_DIR = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "tasks")

#: Absolute path of hanyi's lm-evaluation-harness task YAMLs (the text-only tasks). Usable as lm-eval's ``--include_path``.
LM_EVAL_TASKS_DIR = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "lm_eval_tasks")

#: The five benchmarks, in the order of the README.
BENCHMARKS = ("punrebus", "cvlue", "cii", "unpie", "vulca")
