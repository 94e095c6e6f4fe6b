"""VULCA constants: the twelve paintings, the eight persona cards, the task conditions (spec §1.1, §3.2.4).

The paintings (``MONTHS``, ``TITLE_PREFIX``) live in ``hanyi.data.vulca_constants``, shared with the builder.
"""

from hanyi.data.vulca_constants import MONTHS, TITLE_PREFIX  # noqa: F401  (re-exported for the task glue)

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

#: Key suffix when the NLI model or template, or the embedder, is not the paper's (``hanyi.backbones``;
#: docs/backbones.md).
CUSTOM = "_custom_model"
