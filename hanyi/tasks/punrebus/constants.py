"""Pun Rebus Art constants: the seven symbolic-matching options (paper Appendix A.3)."""

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
