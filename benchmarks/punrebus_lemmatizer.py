"""Agreement of hanyi's rule-based noun singulariser with WordNet's noun lemmatiser (the paper's), on Pun Rebus words.

Usage: python benchmarks/punrebus_lemmatizer.py [--wordnet-dir DIR] [--answer-sheet CSV]

WordNet 3.0 dictionary files (``index.noun``, ``noun.exc``) come from ``--wordnet-dir`` (default: NLTK's
``corpora/wordnet`` if installed, else Debian's ``/usr/share/wordnet`` from ``apt-get install wordnet-base``). NLTK's
``WordNetLemmatizer.lemmatize(w, "n")`` is reproduced from those files (``_morphy`` + shortest lemma). The vocabulary
is every word of the ground-truth elements, their regular plurals, and a list of words models often write.
Prints the agreement rate and every disagreement.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys

from hanyi.metrics.elements import singularize_rule

SUBS = [
    ("s", ""),
    ("ses", "s"),
    ("ves", "f"),
    ("xes", "x"),
    ("zes", "z"),
    ("ches", "ch"),
    ("shes", "sh"),
    ("men", "man"),
    ("ies", "y"),
]
EXTRA = (
    "bats peaches vases leaves olives fungi glasses shoes pages books emblems flowers knots greens blossoms branches "
    "rocks stones cranes magpies persimmons pomegranates lychees peonies chrysanthemums butterflies fishes deer geese "
    "ducks mandarin ducks clouds waves mountains trees pines bamboos plums orchids coins ingots boys children gourds "
    "as is has was this its his us bus gas species series news means iris moss grass dress cross brass cypress lotus "
    "hibiscus narcissus citrus prunus immortals dragons phoenixes lions tigers horses monkeys bees wasps squirrels "
    "grapes vines melons seeds dates jujubes peanuts chestnuts lanterns vessels jars bowls dishes boxes foxes fungus"
).split()


def plural(word):
    """The regular English plural of ``word`` (what a model writing plurals would produce)."""
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def wordnet_dir(explicit):
    if explicit:
        return explicit
    try:
        import nltk

        return str(nltk.data.find("corpora/wordnet"))
    except Exception:
        return "/usr/share/wordnet"


def load_wordnet(root):
    lemmas = set()
    with open(os.path.join(root, "index.noun"), encoding="utf-8") as f:
        for line in f:
            if not line.startswith(" "):
                lemmas.add(line.split(" ", 1)[0])
    exc = {}
    with open(os.path.join(root, "noun.exc"), encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            exc[parts[0]] = parts[1:]
    return lemmas, exc


def wordnet_lemma(word, lemmas, exc):
    forms = exc[word] if word in exc else [word[: -len(o)] + n for o, n in SUBS if word.endswith(o)]
    found = []
    for form in [word] + forms:
        if form in lemmas and form not in found:
            found.append(form)
    return min(found, key=len) if found else word


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wordnet-dir")
    ap.add_argument(
        "--answer-sheet",
        default=os.path.join(
            os.path.dirname(__file__), "..", "..", "shared", "data", "pun_rebus", "answer_sheet_w_element.csv"
        ),
    )
    args = ap.parse_args(argv)
    root = wordnet_dir(args.wordnet_dir)
    if not os.path.isfile(os.path.join(root, "index.noun")):
        print(f"no WordNet dictionary files under {root}; nothing to compare")
        return 0
    lemmas, exc = load_wordnet(root)
    vocab = set(EXTRA)
    if os.path.isfile(args.answer_sheet):
        with open(args.answer_sheet, encoding="utf-8-sig") as f:
            for row in list(csv.reader(f))[1:]:
                for element in row[3:]:
                    for w in element.lower().split():
                        vocab.update({w, plural(w)})
    vocab = sorted(vocab)
    bad = [
        (w, wordnet_lemma(w, lemmas, exc), singularize_rule(w))
        for w in vocab
        if wordnet_lemma(w, lemmas, exc) != singularize_rule(w)
    ]
    print(f"words compared: {len(vocab)}; agree: {len(vocab) - len(bad)} ({1 - len(bad) / len(vocab):.2%})")
    for w, ref, ours in bad:
        print(f"  {w!r}: wordnet={ref!r} rule={ours!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
