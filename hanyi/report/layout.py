"""Sort a task's metric names into headline metrics and per-category tables, from the names alone.

The contributor guide's convention (``docs/contributing.md``, "Metric names"): per-category metrics are separate
metric names ``<metric>_<dimension>_<label>`` (``acc_domain_life``, ``accuracy_cat_A``). A name is read as a category
cell when a shorter metric of the same task is its prefix and the next word is a known dimension, or when it belongs
to a family of at least :data:`MIN_FAMILY` names sharing a first word that is not itself a metric (``feat_symbolism``,
``feat_use_of_color``, ...). A metric whose value is a dict of numbers is a category table by itself. Everything else
is a headline metric, so unknown tasks still get a complete (generic) table.
"""

from __future__ import annotations

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


def classify(names: list[str]) -> dict[str, Cell | None]:
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
    """
    known = set(names)
    out: dict[str, Cell | None] = {}
    for name in names:
        out[name] = None
        bases = [b for b in known if b != name and name.startswith(b + "_")]
        if bases:
            base = max(bases, key=len)
            dim, _, label = name[len(base) + 1 :].partition("_")
            if dim in DIMENSIONS and label:
                out[name] = Cell(base, dim, label)
            continue
        head, _, label = name.partition("_")
        if label and head not in known and sum(n.startswith(head + "_") for n in names) >= MIN_FAMILY:
            out[name] = Cell(head, head, label)
    return out


def category_tables(names: list[str]) -> tuple[list[str], dict[tuple[str, str], list[tuple[str, str]]]]:
    """``(headline names, {(base, dimension): [(label, metric name), ...]})``, both in first-seen order.

    >>> head, tables = category_tables(["acc", "acc_cat_A", "acc_cat_B", "acc_robust"])
    >>> head, tables
    (['acc', 'acc_robust'], {('acc', 'cat'): [('A', 'acc_cat_A'), ('B', 'acc_cat_B')]})
    """
    cells = classify(names)
    headline, tables = [], {}
    for name in names:
        cell = cells[name]
        if cell is None:
            headline.append(name)
        else:
            tables.setdefault((cell.base, cell.dimension), []).append((cell.label, name))
    return headline, tables
