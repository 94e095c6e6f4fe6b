"""Pun Rebus Art constants: options (paper Appendix A.3), prompt variants, 5-shot exemplar stories."""

#: Option letter -> option text, as in the paper's prompt (Appendix A.3).
OPTIONS = (
    ("A", "Longevity and Good Health"),
    ("B", "Happiness, Joy, Good Luck"),
    ("C", "Prestige, Promotion, and Good Exam Results"),
    ("D", "Fecundity, Harmonious Relationship and Family"),
    ("E", "Wealth or Prosperity"),
    ("F", "Moral Integrity, Eremitism"),
    ("G", "Peace and Protection from Evil, Societal Harmony"),
)
LETTERS = "".join(letter for letter, _ in OPTIONS)

#: ``prompt_variant`` values: "paper" renders templates/<prompt>.jinja, others templates/<prompt>_<variant>.jinja.
PROMPT_VARIANTS = ("paper", "code_exact", "qwen_code_exact")

#: 5-shot exemplars: the first image (by file name) of each of these single-label stories, five distinct categories,
#: including the paper's "Quail" exemplar (安居图). All images of these stories are removed from the 5-shot eval set.
FIVE_SHOT_STORIES = ("anjutu", "fuzaiyanqian", "bidingshengguan", "dafugui", "gaofengliangjie")

#: Judge metric of punrebus_expression (not in the paper; emitted only when a judge is configured).
JUDGE_METRIC = "judge_score"
