"""CII-Bench constants: option fields, few-shot exemplars, CTC metrics; label taxonomies: hanyi.data.cii_categories."""

from hanyi.data.cii_categories import (  # noqa: F401  (re-exported for the task glue)
    CATEGORY_METRICS,
    DIFFICULTIES,
    DOMAINS,
    EMOTIONS,
    IMAGE_TYPES,
    RHETORICS,
    TABLE1_METRICS,
)

LETTERS = "ABCDEF"
OPTION_FIELDS = ("option1", "option2", "option3", "option4", "option5", "option6")

#: Fixed few-shot exemplars of the official loader (``src/infer/data_loader.py``), in order; excluded from scoring.
FEWSHOT_IDS = ("dev-33", "dev-34", "dev-35")

#: The CTC judge task keeps questions of this domain, one per distinct image (deduplicated by ``explanation``).
CTC_DOMAIN = "中华传统文化"
