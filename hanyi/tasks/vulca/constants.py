"""VULCA constants: the twelve paintings, the eight persona cards, the task conditions (spec §1.1, §3.2.4)."""

#: (doc_id, month_en, month_zh sub-title) of the 清院 十二月令图 series; sub-titles as in the released folder names.
MONTHS = (
    ("01", "January", "一月_正月"), ("02", "February", "二月"), ("03", "March", "三月"), ("04", "April", "四月"),
    ("05", "May", "五月_龙舟竞渡"), ("06", "June", "六月"), ("07", "July", "七月"), ("08", "August", "八月_仲秋"),
    ("09", "September", "九月"), ("10", "October", "十月_开冬农闲"), ("11", "November", "十一月"),
    ("12", "December", "十二月"),
)  # fmt: skip
TITLE_PREFIX = "清_清院_十二月令图_"

#: persona id (file templates/personas/<id>.md, task suffix) -> output tag of the released transcripts.
PERSONAS = (
    ("mama_zola", "with_Mama_Zola"),
    ("okakura_kakuzo", "with_Okakura_Kakuzō"),
    ("elena_petrova", "with_Professor_Elena_Petrova"),
    ("brother_thomas", "with_Brother_Thomas"),
    ("john_ruskin", "with_John_Ruskin"),
    ("su_shi", "with_Su_Shi"),
    ("guo_xi", "with_Guo_Xi"),
    ("aris_thorne", "with_Dr_Aris_Thorne"),
)
PERSONA_IDS = tuple(pid for pid, _ in PERSONAS)

#: Group ``vulca`` (the paper's 12 x 9 protocol): baseline + the eight persona-with-KB conditions.
GROUP_TASKS = ("vulca_baseline", *(f"vulca_persona_kb_{pid}" for pid in PERSONA_IDS))
#: Ablations (group ``vulca_ablations``): baseline with KB (what the code's "basic" round sent), persona without KB.
ABLATION_TASKS = ("vulca_baseline_kb", *(f"vulca_persona_{pid}" for pid in PERSONA_IDS))
