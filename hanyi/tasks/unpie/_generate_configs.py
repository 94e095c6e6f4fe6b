"""Regenerate the UNPIE task and group YAMLs from constants.py: ``python -m hanyi.tasks.unpie._generate_configs``.

Each task YAML is ``include`` + the keys it changes; the shared keys live in ``_default_template_yaml``, the three
``_<kind>_yaml`` files (one-split tasks) and the three ``_<kind>_all_yaml`` files (tasks that score both splits,
whose value is the paper's All). Run after changing constants; commit the output.

* ``unpie_<kind>[_<mode>][_<lang>]``: both splits, homographic docs then heterographic ones (loading.py); the groups
  ``unpie``, ``unpie_sm`` and ``unpie_text`` hold these.
* ``unpie_<kind>[_<mode>][_<lang>]_{homo,hetero}``: one split each, as before; tagged ``unpie_splits``,
  ``unpie_sm_splits`` and ``unpie_text_splits``, in no group.
"""

import os

from hanyi.tasks.unpie.constants import LANGUAGE_NAMES, SPLIT_SUFFIX

HERE = os.path.dirname(os.path.abspath(__file__))
#: The text-only (LM) groups are also lm-evaluation-harness groups: written there too, identical (docs/lm-eval.md).
LM_EVAL_DIR = os.path.join(HERE, "..", "..", "lm_eval_tasks", "unpie")
TEMPLATES = {  # (kind, mode) -> template; disambiguation has no LM variant (paper §4.1)
    ("grounding", "vlm"): "grounding_image.jinja",
    ("grounding", "text"): "grounding_text.jinja",
    ("grounding", "sm"): "grounding_image.jinja",
    ("disambiguation", "vlm"): "disambiguation.jinja",
    ("disambiguation", "sm"): "disambiguation.jinja",
    ("reconstruction", "vlm"): "reconstruction_image.jinja",
    ("reconstruction", "text"): "reconstruction_text.jinja",
    ("reconstruction", "sm"): "reconstruction_image.jinja",
}
IMAGE_SLOT = {"grounding": '""', "disambiguation": '""', "reconstruction": "(see the attached image)"}
MODE_INFIX = {"vlm": "", "text": "_text", "sm": "_sm"}


def _write(name, lines, folder=None):
    with open(os.path.join(folder or HERE, f"{name}.yaml"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


GROUP = {"vlm": "unpie", "text": "unpie_text", "sm": "unpie_sm"}


def _task(kind, mode, lang, suffix=None, split="homographic"):
    """One task YAML: one split (``suffix``: homo/hetero), or both (``suffix`` None: the test split is homographic,
    and process_docs appends the heterographic docs)."""
    stem = f"unpie_{kind}{MODE_INFIX[mode]}" + (f"_{lang}" if lang else "")
    # the caption tasks keep docs with no image and attach the captions; the text tasks' docs carry no image
    infix = {"sm": "_sm", "text": "_text"}.get(mode, "")
    docs = f"unpie_{kind}{infix}" + (f"_{lang}" if lang else "") + ("_split" if suffix else "") + "_docs"
    slot = IMAGE_SLOT[kind] if mode == "vlm" else '""'
    name = f"{stem}_{suffix}" if suffix else stem
    head = [f"task: {name}", f"include: _{kind}_yaml", f"tag: [{GROUP[mode]}_splits]", f"test_split: {split}"]
    if not suffix:
        head = [
            f"task: {name}",
            f"include: _{kind}_all_yaml",
            "test_split: homographic  # + heterographic (loading.py)",
        ]
    lines = head + [
        f"process_docs: !function loading.{docs}",
        "lmms_eval_specific_kwargs:",
        f"  default: {{mode: {mode}, template: {TEMPLATES[kind, mode]}, image_slot: {slot}}}",
    ]
    _write(name, lines)
    return stem


def _group(name, members, version):
    lines = [f"group: {name}", "task:"] + [f"  - {m}" for m in members]
    lines += ["metadata:", f"  version: {version}  # 0.2 its members score both splits (All); no per-split tasks"]
    _write(name, lines)
    if name == "unpie_text":
        _write(name, lines, LM_EVAL_DIR)


def main():
    groups = {"vlm": [], "text": [], "sm": []}
    for kind, mode in TEMPLATES:
        for lang in [code for code, _ in LANGUAGE_NAMES] if kind != "grounding" else [None]:
            for suffix, split in SPLIT_SUFFIX:
                _task(kind, mode, lang, suffix, split)
            groups[mode].append(_task(kind, mode, lang))
    for mode, name in GROUP.items():
        _group(name, groups[mode], "0.2")


if __name__ == "__main__":
    main()
