"""Parity of hanyi.metrics.vulca_bench with the VULCA-Bench release's scoring code.

REFERENCE below is a transcription, kept apart from hanyi's code, of the release's ``evaluation/calculate_dcr.py``
(``calculate_layer_coverage``, ``calculate_cultural_bonus``, ``calculate_dcr``) and ``evaluation/layer_scorer.py``
(``count_keyword_matches``, ``score_layer``, ``score_all_layers``) at GitHub yha9806/VULCA-Bench @ cfb0a8c: same
control flow, order of summation and rounding. Its keyword tables are read from the release's files in a local
mirror when one is there (``$HANYI_VULCA_BENCH_MIRROR``, a bare git repository), so the tables themselves are pinned
too; without one, hanyi's tables stand in and only the arithmetic is compared.

The critiques: the real rows' expert references (both languages) from ``$HANYI_SHARED_DATA/vulca/vulca_bench_*.jsonl``
when present (skipped with the reason otherwise), and a set of crafted answers committed here.
"""

from __future__ import annotations

import ast
import glob
import json
import os
import subprocess
from collections import defaultdict

import pytest

from hanyi.metrics import vulca_bench as vb

SHARED = os.environ.get(
    "HANYI_SHARED_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data")
)
MIRROR = os.environ.get("HANYI_VULCA_BENCH_MIRROR", "/work/.mirror/yha9806+VULCA-Bench/repo")
RELEASE_COMMIT = "cfb0a8c"


def _release_source(path: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", MIRROR, "show", f"{RELEASE_COMMIT}:{path}"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def _literal(source: str, name: str):
    """The value of the module-level assignment ``name = <literal>`` in ``source`` (read, never executed)."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise KeyError(name)


def _tables():
    dcr_src, layer_src = _release_source("evaluation/calculate_dcr.py"), _release_source("evaluation/layer_scorer.py")
    if dcr_src is None or layer_src is None:
        return None
    definitions = _literal(layer_src, "LAYER_DEFINITIONS")
    return {
        "CULTURE_DIMENSIONS": _literal(dcr_src, "CULTURE_DIMENSIONS"),
        "LAYER_KEYWORDS": _literal(dcr_src, "LAYER_KEYWORDS"),
        "CULTURAL_TERMS": _literal(dcr_src, "CULTURAL_TERMS"),
        "LAYER_DEFINITIONS": definitions,
    }


RELEASE = _tables()


# ----------------------------------------------------------------------------------------------------------------------
# REFERENCE: transcription of the release's functions (not hanyi's code). Tables: the release's (or hanyi's).
# ----------------------------------------------------------------------------------------------------------------------
class REFERENCE:
    LAYER_KEYWORDS = RELEASE["LAYER_KEYWORDS"] if RELEASE else {k: list(v) for k, v in vb.DCR_KEYWORDS.items()}
    CULTURAL_TERMS = RELEASE["CULTURAL_TERMS"] if RELEASE else {k: list(v) for k, v in vb.CULTURAL_TERMS.items()}
    LAYER_DEFINITIONS = (
        RELEASE["LAYER_DEFINITIONS"]
        if RELEASE
        else {k: {"keywords": list(v), "weight": 0.20} for k, v in vb.LAYER_KEYWORDS.items()}
    )

    @staticmethod
    def calculate_layer_coverage(critique, layer):
        if not critique:
            return 0.0
        critique_lower = critique.lower()
        keywords = REFERENCE.LAYER_KEYWORDS.get(layer, [])
        matches = sum(1 for kw in keywords if kw.lower() in critique_lower)
        if len(keywords) == 0:
            return 0.0
        coverage = min(1.0, matches / max(3, len(keywords) * 0.3))
        return coverage

    @staticmethod
    def calculate_cultural_bonus(critique, culture):
        if not critique or culture not in REFERENCE.CULTURAL_TERMS:
            return 0.0
        critique_lower = critique.lower()
        terms = REFERENCE.CULTURAL_TERMS[culture]
        matches = sum(1 for term in terms if term.lower() in critique_lower)
        return min(0.2, matches * 0.04)

    @staticmethod
    def calculate_dcr(critique, culture, reference_dims=None):
        culture = culture.lower()
        layer_scores = {}
        for layer in ["L1", "L2", "L3", "L4", "L5"]:
            layer_scores[layer] = REFERENCE.calculate_layer_coverage(critique, layer)
        weights = {"L1": 0.25, "L2": 0.25, "L3": 0.20, "L4": 0.15, "L5": 0.15}
        base_dcr = sum(layer_scores[lay] * weights[lay] for lay in layer_scores)
        cultural_bonus = REFERENCE.calculate_cultural_bonus(critique, culture)
        dcr = min(1.0, base_dcr + cultural_bonus)
        reference_overlap = None
        if reference_dims:
            if isinstance(reference_dims, str):
                try:
                    reference_dims = json.loads(reference_dims)
                except Exception:
                    reference_dims = reference_dims.split(",")
            ref_layers = defaultdict(int)
            for dim in reference_dims:
                for layer in ["L1", "L2", "L3", "L4", "L5"]:
                    if f"_{layer}_" in dim:
                        ref_layers[layer] += 1
            reference_overlap = {lay: ref_layers.get(lay, 0) for lay in ["L1", "L2", "L3", "L4", "L5"]}
        return {
            "dcr": round(dcr, 4),
            "dcr_5scale": round(dcr * 5, 2),
            "layer_scores": {k: round(v, 4) for k, v in layer_scores.items()},
            "cultural_bonus": round(cultural_bonus, 4),
            "culture": culture,
            "reference_overlap": reference_overlap,
        }

    @staticmethod
    def count_keyword_matches(text, keywords):
        text_lower = text.lower()
        matched = []
        for kw in keywords:
            if kw.lower() in text_lower:
                matched.append(kw)
        return len(matched), matched

    @staticmethod
    def score_layer(critique, layer):
        if not critique:
            return {"score": 1.0, "matches": 0, "evidence": []}
        layer_def = REFERENCE.LAYER_DEFINITIONS.get(layer)
        if not layer_def:
            return {"score": 1.0, "matches": 0, "evidence": []}
        num_matches, matched_keywords = REFERENCE.count_keyword_matches(critique, layer_def["keywords"])
        if num_matches == 0:
            score = 1.0
        elif num_matches <= 2:
            score = 2.0
        elif num_matches <= 5:
            score = 3.0
        elif num_matches <= 10:
            score = 4.0
        else:
            score = 5.0
        return {"score": score, "matches": num_matches, "evidence": matched_keywords[:10]}

    @staticmethod
    def score_all_layers(critique):
        layer_results = {}
        for layer in ["L1", "L2", "L3", "L4", "L5"]:
            layer_results[layer] = REFERENCE.score_layer(critique, layer)
        weights = {lay: REFERENCE.LAYER_DEFINITIONS[lay]["weight"] for lay in REFERENCE.LAYER_DEFINITIONS}
        weighted_sum = sum(layer_results[lay]["score"] * weights[lay] for lay in layer_results)
        l1_l4_avg = sum(layer_results[lay]["score"] for lay in ["L1", "L2", "L3", "L4"]) / 4
        l5_score = layer_results["L5"]["score"]
        inverted = l5_score > l1_l4_avg + 0.5
        return {
            "layers": layer_results,
            "overall_score": round(weighted_sum, 2),
            "pyramid_inverted": inverted,
            "l1_l4_avg": round(l1_l4_avg, 2),
            "l5_score": l5_score,
        }


# ----------------------------------------------------------------------------------------------------------------------

#: Crafted answers: empty, one language or both, every culture's terms, substring traps ("ma" in "many", "line" in
#: "outline"), caps reached, upper case, a culture unknown to the release and one with no terms.
CRAFTED = [
    ("", "chinese", None),
    ("   ", "western", []),
    ("Nothing relevant here.", "korean", '["KR_L1_D1"]'),
    ("COLOR, Line, composition; SHAPE and form.", "Western", "WE_L1_D1,WE_L2_D3"),
    (
        "Many outlines, some ma and notan, mono no aware, wabi-sabi, yugen; ukiyo-e by the Kano school.",
        "japanese",
        None,
    ),
    ("气韵生动，骨法用笔，留白与写意；绢本水墨，笔法精妙，意境深远，和谐超越。", "chinese", '["CN_L5_D1", "CN_L2_D2"]'),
    (
        "Arabesque, geometric tessellation, kufic and naskh calligraphy, miniature illumination, muqarnas.",
        "islamic",
        None,
    ),
    ("Rasa and bhava; a Mughal, Rajput and Pahari mandala with a mudra, yantra; Tanjore, Madhubani.", "indian", None),
    ("Minhwa and chaekgeori; sipjangsaeng, munbangdo, sumukhwa brushwork in ink on paper.", "korean", None),
    (
        "Chiaroscuro, sfumato, impasto, tenebrism, perspective with a vanishing point: Baroque after the Renaissance.",
        "western",
        None,
    ),
    (
        "A Dunhuang mural of the Tang dynasty: mineral pigment, religious ritual, sublime spiritual harmony.",
        "mural",
        None,
    ),
    ("Oil on canvas, a glaze over the layer; period style, patron commission, provenance.", "hermitage", None),
    (
        "A sublime, spiritual, transcendent beauty: harmony, essence, soul, emotion, feeling, expression, idea.",
        "thai",
        None,
    ),
    (" ".join(w for words in vb.LAYER_KEYWORDS.values() for w in words), "chinese", None),
    (" ".join(w for words in vb.DCR_KEYWORDS.values() for w in words), "western", None),
]


def _rows():
    files = sorted(glob.glob(os.path.join(SHARED, "vulca", "vulca_bench_*.jsonl")))
    rows = []
    for file in files:
        with open(file, encoding="utf-8") as f:
            rows += [json.loads(line) for line in f if line.strip()]
    return rows


def _check(critique, culture, dims):
    assert vb.dcr(critique, culture, dims) == REFERENCE.calculate_dcr(critique, culture, dims)
    assert vb.layer_scores(critique) == REFERENCE.score_all_layers(critique)


@pytest.mark.parametrize("critique, culture, dims", CRAFTED)
def test_crafted_answers_score_as_the_release_scores_them(critique, culture, dims):
    _check(critique, culture, dims)


def test_real_reference_critiques_in_both_languages_score_as_the_release_scores_them():
    rows = _rows()
    if not rows:
        pytest.skip(f"no real VULCA-Bench rows under {SHARED}/vulca (vulca_bench_*.jsonl)")
    for row in rows:
        for text in (row["critique_en"], row["critique_zh"]):
            _check(text, row["culture"], row["covered_dimensions"])
    assert len(rows) >= 1000  # the six subsets at hand hold 1,327 rows


def test_keyword_tables_are_the_releases():
    if RELEASE is None:
        pytest.skip(f"no mirror of the release at {MIRROR} (set HANYI_VULCA_BENCH_MIRROR)")
    assert {k: tuple(v) for k, v in RELEASE["LAYER_KEYWORDS"].items()} == vb.DCR_KEYWORDS
    assert {k: tuple(v) for k, v in RELEASE["CULTURAL_TERMS"].items()} == vb.CULTURAL_TERMS
    assert {k: tuple(v["keywords"]) for k, v in RELEASE["LAYER_DEFINITIONS"].items()} == vb.LAYER_KEYWORDS
    assert all(v["weight"] == vb.LAYER_WEIGHT for v in RELEASE["LAYER_DEFINITIONS"].values())
    table = {c: (v["prefix"], v["total"], v["threshold"]) for c, v in RELEASE["CULTURE_DIMENSIONS"].items()}
    assert table == vb.CULTURES


def test_the_paper_dcr_ignores_the_annotated_dimensions_and_ours_counts_a_concept_in_either_language():
    zh, en = "构图平衡，线条清晰，色彩温暖", "balanced composition, clear line, warm color"
    assert vb.dcr(en, "korean", ["KR_L1_D1"])["dcr"] == vb.dcr(en, "korean", ["KR_L5_D1"])["dcr"]
    assert vb.dcr(zh, "chinese")["dcr"] < vb.dcr(en, "chinese")["dcr"]  # the release's quirk: fewer Chinese keywords
    from hanyi.metrics.vulca_bench_bilingual import dcr_bilingual

    assert dcr_bilingual(zh, "chinese") == dcr_bilingual(en, "chinese")
