"""Model names on the board: a name must read as what it is.

* :func:`name_problems`: control, format (bidi overrides, zero-width), surrogate, private-use and unassigned
  characters are refused (``\\u202eLV-ahpla`` renders as "alpha-VL"); :func:`normal` is the NFKC form the board
  shows (full-width or ligature look-alikes become plain text);
* :func:`skeleton`: the Unicode TR39 skeleton of a name, from the confusables data of ``confusable_homoglyphs`` (each
  character mapped to one representative of its class of look-alikes), so that a Cyrillic ``аlpha-vl`` and a Latin
  ``alpha-vl`` share one skeleton: the intake refuses the later arrival of two names that look alike but differ;
* :func:`same_name`: the key under which two submissions of one benchmark bear the same name (flagged, not refused:
  one model may be submitted twice with other settings).
"""

from __future__ import annotations

import functools
import unicodedata

#: Unicode categories a name never holds.
BAD_CATEGORIES = {"Cc": "control", "Cf": "format (bidi or zero-width)", "Cs": "surrogate", "Co": "private-use",
                  "Cn": "unassigned", "Zl": "line separator", "Zp": "paragraph separator"}  # fmt: skip


def name_problems(name: str) -> list[str]:
    """Why ``name`` cannot be shown as a model name (``[]``: it can).

    >>> name_problems("alpha-vl"), name_problems("\\u202eLV-ahpla")
    ([], ['character U+202E (format (bidi or zero-width)) is not allowed in a name'])
    """
    bad = {}
    for c in name:
        kind = BAD_CATEGORIES.get(unicodedata.category(c))
        if kind:
            bad.setdefault(c, kind)
    out = [f"character U+{ord(c):04X} ({kind}) is not allowed in a name" for c, kind in list(bad.items())[:3]]
    if len(bad) > 3:
        out.append(f"... and {len(bad) - 3} more characters not allowed in a name")
    if not bad and not name.strip():
        out.append("an empty name")
    return out


@functools.lru_cache(maxsize=1)
def _prototypes() -> dict[str, str]:
    """Each confusable character -> the smallest code point of its class of look-alikes (the classes closed under
    the data's pairs, single characters only)."""
    from confusable_homoglyphs.confusables import confusables_data

    parent: dict[str, str] = {}

    def find(c: str) -> str:
        while parent.get(c, c) != c:
            parent[c] = parent.get(parent[c], parent[c])
            c = parent[c]
        return c

    for char, glyphs in confusables_data.items():
        if len(char) != 1:
            continue
        for g in glyphs:
            other = g.get("c")
            if isinstance(other, str) and len(other) == 1:
                a, b = find(char), find(other)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    return {c: find(c) for c in parent}


def skeleton(name: str) -> str:
    """The TR39-style skeleton: NFKC, each character replaced by its look-alike class's representative, case-folded
    (and mapped again).

    >>> skeleton("\\u0430lpha-vl") == skeleton("alpha-vl") != skeleton("beta-vl")
    True
    """
    table = _prototypes()
    text = "".join(table.get(c, c) for c in unicodedata.normalize("NFKC", name))  # before case: I and l alike
    return unicodedata.normalize("NFD", "".join(table.get(c, c) for c in text.casefold()))


def normal(name: str) -> str:
    """The name as the board shows it: NFKC-normalised, surrounding space stripped.

    >>> normal(" ａｌｐｈａ-VL ")
    'alpha-VL'
    """
    return unicodedata.normalize("NFKC", name).strip()


def same_name(name: str) -> str:
    """Two names that are the same text (after NFKC, case and surrounding space)."""
    return unicodedata.normalize("NFKC", name).casefold().strip()
