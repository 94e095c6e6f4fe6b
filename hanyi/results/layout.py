"""Sort a task's metric names into headline metrics and per-category tables, from the names alone.

The contributor guide's convention (``docs/dev/contributing.md``, "Metric names"): per-category metrics are separate
metric names ``<metric>_<dimension>_<label>`` (``acc_domain_life``, ``accuracy_cat_A``). A name is read as a category
cell when a shorter metric of the same task is its prefix and the next word is a known dimension, or when it belongs
to a family of at least :data:`MIN_FAMILY` names sharing a first word that is not itself a metric (``feat_symbolism``,
``feat_use_of_color``, ...). A dict-valued metric (a row of Pun Rebus's confusion matrix) is shown as "(table)" in
the headline table and as a table of its own (``build.dict_tables``). Everything else is a headline metric, so unknown
tasks still get a complete (generic) table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Words that introduce a category dimension after a metric name.
DIMENSIONS = (
    "cat",
    "category",
    "domain",
    "emotion",
    "difficulty",
    "type",
    "rhetoric",
    "group",
    "culture",
    "field",
    "lang",
    "language",
    "persona",
    "split",
    "label",
    "source",
)
MIN_FAMILY = 3


@dataclass(frozen=True)
class Cell:
    base: str
    dimension: str
    label: str


def hint_patterns(hints: list[dict] | None) -> list[tuple[re.Pattern, str, dict]]:
    """Compile a benchmark's ``categories`` hints (from its anchor file) into ``(regex, dimension, labels)``.

    A hint is ``{bases: [accuracy, miou], pattern: "{base}_{label}_macro", dimension: culture group (macro),
    labels: {non_wordnet: Not in WordNet, coco: MS-COCO}}``; ``pattern`` defaults to ``{base}_{label}``.

    >>> [(rx.pattern, dim) for rx, dim, _ in hint_patterns([{"bases": ["acc"], "dimension": "g", "labels": {"a": "A"}}])]
    [('^(?P<base>acc)_(?P<label>a)$', 'g')]
    """
    out = []
    for hint in hints or []:
        labels = hint["labels"]
        bases = "|".join(re.escape(b) for b in hint["bases"])
        alts = "|".join(re.escape(k) for k in sorted(labels, key=len, reverse=True))
        pattern = (
            re.escape(hint.get("pattern", "{base}_{label}"))
            .replace(r"\{base\}", "{base}")
            .replace(r"\{label\}", "{label}")
        )
        pattern = pattern.replace("{base}", f"(?P<base>{bases})").replace("{label}", f"(?P<label>{alts})")
        out.append((re.compile(f"^{pattern}$"), hint["dimension"], labels))
    return out


def classify(names: list[str], hints: list[dict] | None = None) -> dict[str, Cell | None]:
    """``{name: Cell or None}``: ``None`` marks a headline metric.

    >>> out = classify(["acc", "acc_robust", "acc_domain_life", "acc_type_single_panel_comic", "parse_rate"])
    >>> out["acc"], out["acc_robust"], out["parse_rate"]
    (None, None, None)
    >>> out["acc_domain_life"]
    Cell(base='acc', dimension='domain', label='life')
    >>> out["acc_type_single_panel_comic"].label
    'single_panel_comic'
    >>> fam = classify(["feat_symbolism", "feat_use_of_color", "feat_line_quality", "expert_alignment"])
    >>> fam["feat_use_of_color"], fam["expert_alignment"]
    (Cell(base='feat', dimension='feat', label='use_of_color'), None)
    >>> classify(["exact_match", "exact_match_strict", "exact_match_lenient"])["exact_match"] is None
    True
    """
    known = set(names)
    compiled = hint_patterns(hints)
    out: dict[str, Cell | None] = {}
    for name in names:
        out[name] = None
        hit = next(((m, dim) for rx, dim, _ in compiled if (m := rx.match(name))), None)
        if hit:
            out[name] = Cell(hit[0]["base"], hit[1], hit[0]["label"])
            continue
        bases = [b for b in known if b != name and name.startswith(b + "_")]
        if bases:
            base = max(bases, key=len)
            dim, _, label = name[len(base) + 1 :].partition("_")
            if dim in DIMENSIONS and label:
                out[name] = Cell(base, dim, label)
            continue
        family = _family(name, names, known)
        if family:
            out[name] = Cell(family, family, name[len(family) + 1 :])
    return out


def _family(name: str, names: list[str], known: set[str]) -> str | None:
    """The longest ``_``-bounded prefix of ``name``, not itself a metric, shared by :data:`MIN_FAMILY` names.

    >>> names = ["primary_profile_rate_a", "primary_profile_rate_b", "primary_profile_rate_c", "feat_x_y"]
    >>> _family("primary_profile_rate_a", names, set(names)), _family("feat_x_y", names, set(names))
    ('primary_profile_rate', None)
    >>> names = ["element_abs_rule_lemma", "element_abs_capped_rule_lemma", "element_sim", "parse_rate"]
    >>> _family("element_sim", names, set(names)) is None  # fallback keys of element_abs, element_abs_capped
    True
    """
    parts = name.split("_")
    for cut in range(len(parts) - 1, 0, -1):
        prefix = "_".join(parts[:cut])
        members = [n for n in names if n.startswith(prefix + "_")]
        if prefix in known or len(members) < MIN_FAMILY:
            continue
        # variants of one metric (exact_match, exact_match_strict; element_abs_rule_lemma and
        # element_abs_capped_rule_lemma, fallback keys of element_abs, element_abs_capped) are not categories
        stems = {_stem(n) for n in names}
        if not any(o.startswith(_stem(m) + "_") for m in members for o in stems):
            return prefix
    return None


#: Key endings of a fallback, robust or custom-scorer variant of a metric (``element_abs_rule_lemma``).
VARIANT_SUFFIXES = ("_robust", "_rule_lemma", "_exact_stem", "_chrf", "_fallback", "_custom_model", "_custom_judge")


def _stem(name: str) -> str:
    """``name`` without its variant endings: ``element_abs_capped_rule_lemma`` -> ``element_abs_capped``."""
    while suffix := next((s for s in VARIANT_SUFFIXES if name.endswith(s)), None):
        name = name[: -len(suffix)]
    return name


def category_tables(
    names: list[str], hints: list[dict] | None = None
) -> tuple[list[str], dict[tuple[str, str], list[tuple[str, str]]]]:
    """``(headline names, {(base, dimension): [(label, metric name), ...]})``, both in first-seen order.

    >>> head, tables = category_tables(["acc", "acc_cat_A", "acc_cat_B", "acc_robust"])
    >>> head, tables
    (['acc', 'acc_robust'], {('acc', 'cat'): [('A', 'acc_cat_A'), ('B', 'acc_cat_B')]})
    >>> hint = {"bases": ["miou"], "dimension": "culture group", "labels": {"coco": "MS-COCO", "non_wordnet": "non-WN"}}
    >>> category_tables(["miou", "miou_coco", "miou_non_wordnet"], [hint])
    (['miou'], {('miou', 'culture group'): [('coco', 'miou_coco'), ('non_wordnet', 'miou_non_wordnet')]})
    """
    cells = classify(names, hints)
    headline, tables = [], {}
    for name in names:
        cell = cells[name]
        if cell is None:
            headline.append(name)
        else:
            tables.setdefault((cell.base, cell.dimension), []).append((cell.label, name))
    return headline, tables
