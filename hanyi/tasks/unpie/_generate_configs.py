"""Regenerate the UNPIE task and group YAMLs from constants.py: ``python -m hanyi.tasks.unpie._generate_configs``.

Each task YAML is ``include`` + the keys it changes; the shared keys live in ``_default_template_yaml`` and the
three ``_<kind>_yaml`` files. Run after changing constants; commit the output.
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
_DISAMB = ("disamb_acc_bertscore", "disamb_acc_bertscore_custom_model", "disamb_acc_chrf")
_RECON = ("pun_word_recovered", "bleu4", "meteor", "meteor_exact_stem")
AGGREGATE = {  # paper keys, their fallback keys, then the robust (_robust) twins
    "grounding": ("exact_match", "exact_match_strict", "exact_match_lenient", "answer_rate", "exact_match_robust"),
    "disambiguation": (*_DISAMB, "answer_rate", *(f"{m}_robust" for m in _DISAMB)),
    "reconstruction": ("correct_custom_judge", *_RECON, "answer_rate", *(f"{m}_robust" for m in _RECON)),
}
MODE_INFIX = {"vlm": "", "text": "_text", "sm": "_sm"}


def _write(name, lines, folder=None):
    with open(os.path.join(folder or HERE, f"{name}.yaml"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def _task(kind, mode, lang, suffix, split):
    stem = f"unpie_{kind}{MODE_INFIX[mode]}" + (f"_{lang}" if lang else "")
    infix = "_sm" if mode == "sm" else ""  # the caption tasks keep docs with no image and attach the captions
    docs = f"unpie_{kind}{infix}" + (f"_{lang}" if lang else "") + f"_{suffix}_docs"
    slot = IMAGE_SLOT[kind] if mode == "vlm" else '""'
    _write(
        f"{stem}_{suffix}",
        [
            f"task: {stem}_{suffix}",
            f"include: _{kind}_yaml",
            f"test_split: {split}",
            f"process_docs: !function loading.{docs}",
            "lmms_eval_specific_kwargs:",
            f"  default: {{mode: {mode}, template: {TEMPLATES[kind, mode]}, image_slot: {slot}}}",
        ],
    )
    return stem


#: Group versions that moved from 0.1 (0.2: correct -> correct_custom_judge, our judge prompt).
GROUP_VERSION = {"reconstruction": "0.2"}


def _group(name, members, metrics, version="0.1"):
    lines = [f"group: {name}", "task:"] + [f"  - {m}" for m in members]
    if metrics:
        lines.append("aggregate_metric_list:  # All = unweighted mean of Homo and Hetero (paper §4)")
        lines += [f"  - {{metric: {m}, aggregation: mean, weight_by_size: false}}" for m in metrics]
    _write(name, lines + ["metadata:", f"  version: {version}"])
    if name.startswith(("unpie_text", "unpie_grounding_text", "unpie_reconstruction_text")):
        _write(name, lines + ["metadata:", f"  version: {version}"], LM_EVAL_DIR)


def main():
    groups = {"vlm": [], "text": [], "sm": []}
    for kind, mode in TEMPLATES:
        for lang in [code for code, _ in LANGUAGE_NAMES] if kind != "grounding" else [None]:
            for suffix, split in SPLIT_SUFFIX:
                stem = _task(kind, mode, lang, suffix, split)
            _group(stem, [f"{stem}_{s}" for s, _ in SPLIT_SUFFIX], AGGREGATE[kind], GROUP_VERSION.get(kind, "0.1"))
            groups[mode].append(stem)
    for mode, name in (("vlm", "unpie"), ("text", "unpie_text"), ("sm", "unpie_sm")):
        _group(name, groups[mode], ())


if __name__ == "__main__":
    main()
