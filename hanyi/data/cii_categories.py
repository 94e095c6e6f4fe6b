"""CII-Bench label taxonomies (stored Chinese label -> metric suffix) and the per-category metric names.

Labels as stored in ``m-a-p/CII-Bench`` (spec §1.4); image types are matched on their Chinese part (``插画``). The task
glue (``hanyi/tasks/cii``) and the report's breakdowns (``hanyi/metrics/cii_breakdowns.py``) both read this table.
"""

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

#: Table 1's columns besides Overall (domain and emotion): emitted by the tasks of Table 1's setting.
TABLE1_METRICS = {
    **{f"acc_domain_{k}": ("domain", v) for k, v in DOMAINS},
    **{f"acc_emotion_{k}": ("emotion", v) for k, v in EMOTIONS},
}

#: Every per-category metric name -> (field of the logged ``acc`` item, label): Table 1's columns, then the
#: difficulty (Table 7), image type (Table 6) and rhetoric (Table 8) breakdowns that ``hanyi report`` computes.
CATEGORY_METRICS = {
    **TABLE1_METRICS,
    **{f"acc_difficulty_{k}": ("difficulty", v) for k, v in DIFFICULTIES},
    **{f"acc_type_{k}": ("image_types", v) for k, v in IMAGE_TYPES},
    **{f"acc_rhetoric_{k}": ("rhetorics", v) for k, v in RHETORICS},
}
