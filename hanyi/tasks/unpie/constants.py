"""UNPIE task constants: splits, languages, answer labels (paper App. E; spec §6.10). Release fields: hanyi.data.unpie."""

from hanyi.data.unpie import LANGUAGES, SPLITS

#: Task-id suffix -> dataset split. "All" is the unweighted mean of the two (paper §4, Tables 4-6).
SPLIT_SUFFIX = (("homo", "homographic"), ("hetero", "heterographic"))

#: Language code (dataset key) -> the English name used in the prompts and the output label ``[German]:``.
LANGUAGE_NAMES = (("de", "German"), ("fr", "French"), ("ko", "Korean"))

#: Prompt-variant modes: "vlm" (image attached), "text" (LM rows, no image), "sm" (caption pasted into the prompt).
MODES = ("vlm", "text", "sm")

#: The reconstruction judge key. Paper Table 6 "Correct" is GPT-4 (gpt-4-0613) with an unpublished prompt; hanyi's
#: prompt is its own (templates/judge_same_pun.jinja), so under any judge model the key is never the paper's
#: ``correct`` (STYLE 13; like the backbones' ``_custom_model`` keys, docs/backbones.md).
JUDGE_METRIC = "correct_custom_judge"

#: Echoed answer labels removed before scoring, per task kind (the prompts end with these labels).
ANSWER_LABELS = {"grounding": ("answer",), "reconstruction": ("English",)}

assert tuple(code for code, _ in LANGUAGE_NAMES) == LANGUAGES
assert tuple(split for _, split in SPLIT_SUFFIX) == SPLITS
