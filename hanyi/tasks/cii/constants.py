"""CII-Bench constants: option fields, label taxonomies (stored Chinese label -> metric suffix), few-shot exemplars.

Labels as stored in ``m-a-p/CII-Bench`` (spec §1.4); image types are matched on their Chinese part (``插画``).
"""

LETTERS = "ABCDEF"
OPTION_FIELDS = ("option1", "option2", "option3", "option4", "option5", "option6")

#: Fixed few-shot exemplars of the official loader (``src/infer/data_loader.py``), in order; excluded from scoring.
FEWSHOT_IDS = ("dev-33", "dev-34", "dev-35")

#: The CTC judge task keeps questions of this domain, one per distinct image (deduplicated by ``explanation``).
CTC_DOMAIN = "中华传统文化"

DOMAINS = (
    ("life", "生活"),
    ("art", "艺术"),
    ("society", "社会"),
    ("politics", "政治"),
    ("environment", "环境"),
    ("ctc", "中华传统文化"),
)
EMOTIONS = (("positive", "积极"), ("negative", "消极"), ("neutral", "中性"))
DIFFICULTIES = (("easy", "简单"), ("medium", "中等"), ("hard", "困难"))
#: Column order of the official ``eval_cii_sub.py``.
IMAGE_TYPES = (
    ("illustration", "插画"),
    ("painting", "绘画"),
    ("poster", "海报"),
    ("single_panel_comic", "单格漫画"),
    ("multi_panel_comic", "多格漫画"),
    ("meme", "梗图"),
)
#: Table 8 columns; ``其他`` (one question) is not reported, as in the paper.
RHETORICS = (
    ("metaphor", "隐喻"),
    ("exaggerate", "夸张"),
    ("symbolism", "象征"),
    ("contrast", "对比"),
    ("visual_dislocation", "视觉错位"),
    ("personification", "拟人"),
    ("analogy", "类比"),
    ("antithesis", "对立"),
)

#: Per-category metric name -> (field of the scored item, label). Fields: see ``utils.cii_process_results``.
CATEGORY_METRICS = {
    **{f"acc_domain_{k}": ("domain", v) for k, v in DOMAINS},
    **{f"acc_emotion_{k}": ("emotion", v) for k, v in EMOTIONS},
    **{f"acc_difficulty_{k}": ("difficulty", v) for k, v in DIFFICULTIES},
    **{f"acc_type_{k}": ("image_types", v) for k, v in IMAGE_TYPES},
    **{f"acc_rhetoric_{k}": ("rhetorics", v) for k, v in RHETORICS},
}

#: CTC judge metric name -> (field, label); ``ctc_score`` is the overall mean (Table 4).
CTC_METRICS = {
    "ctc_score": (None, None),
    **{f"ctc_score_difficulty_{k}": ("difficulty", v) for k, v in DIFFICULTIES},
    **{f"ctc_score_emotion_{k}": ("emotion", v) for k, v in EMOTIONS},
}
