"""VULCA-Bench scores (Yu et al., arXiv 2601.07986): Dimension Coverage Rate and the L1-L5 layer scores, computed as
the release's evaluation code computes them (our bilingual sibling: :mod:`hanyi.metrics.vulca_bench_bilingual`).

Facts (keyword lists, weights, thresholds, the culture table) are those of GitHub ``yha9806/VULCA-Bench`` at commit
cfb0a8c (``evaluation/calculate_dcr.py``: ``CULTURE_DIMENSIONS``, ``LAYER_KEYWORDS``, ``CULTURAL_TERMS``, the layer
weights; ``evaluation/layer_scorer.py``: ``LAYER_DEFINITIONS`` and the 1-5 rubric). The functions are our own code;
``tests/metrics/test_vulca_bench_parity.py`` pins them against a transcription of the official ones.

The release's quirks are kept in the paper keys and documented in docs/vulca_bench.md: keywords match as
lower-cased substrings (``"ma"`` matches "many", ``"line"`` matches "outline"); the DCR never reads the annotated
dimensions (they only give ``reference_overlap``); an unknown culture takes the Western row of the table and no
cultural bonus; Hermitage and mural have no cultural terms.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence

LAYERS = ("L1", "L2", "L3", "L4", "L5")

#: culture -> (dimension-id prefix, total dimensions, 70 % threshold), as ``calculate_dcr.py`` has them (the README's
#: table differs for five cultures; the code decides: docs/vulca_bench.md).
CULTURES = {
    "chinese": ("CN", 30, 21),
    "western": ("WE", 22, 15),
    "japanese": ("JP", 27, 19),
    "korean": ("KR", 25, 18),
    "islamic": ("IS", 28, 20),
    "indian": ("IN", 30, 21),
    "hermitage": ("WS", 30, 21),
    "mural": ("MU", 30, 21),
}

#: The DCR's layer keywords (``calculate_dcr.py``), English then Chinese.
DCR_KEYWORDS = {
    "L1": (
        *"color composition line shape form tone contrast light shadow texture pattern rhythm balance".split(),
        *"颜色 构图 线条 造型 明暗 对比 纹理".split(),
    ),
    "L2": (
        *"brushwork technique medium material oil ink silk canvas paper pigment glaze wash stroke layer".split(),
        *"笔法 技法 媒材 油彩 水墨 绢本 纸本 颜料".split(),
    ),
    "L3": (
        *"symbol motif iconography allegory mythology tradition religious ritual auspicious metaphor represent".split(),
        *"象征 图像 寓意 典故 传统 宗教 仪式 吉祥".split(),
    ),
    "L4": (
        *"dynasty period century era movement school influence patron commission provenance style genre artist".split(),
        *"朝代 时期 世纪 流派 风格 影响 赞助".split(),
    ),
    "L5": (
        *"philosophy aesthetics spiritual transcend harmony beauty sublime emotion meaning interpretation theory".split(),
        *"哲学 美学 精神 超越 和谐 意境 气韵 情感".split(),
    ),
}

#: The DCR's weights per layer (L1-L2 higher: "more verifiable", says the release).
DCR_WEIGHTS = {"L1": 0.25, "L2": 0.25, "L3": 0.20, "L4": 0.15, "L5": 0.15}

#: Culture-specific terms of the DCR's bonus (0.04 each, at most 0.2); Hermitage and mural have none.
CULTURAL_TERMS = {
    "chinese": (
        *"qiyun gufa bimo cunfa liubai yijing xieyi gongbi".split(),
        *"气韵生动 骨法用笔 应物象形 随类赋彩 经营位置 传移模写 六法 三远 笔墨 墨分五色 留白 写意 工笔".split(),
    ),
    "western": (
        *"chiaroscuro sfumato impasto tenebrism perspective".split(),
        "vanishing point",
        *"baroque renaissance impressionism".split(),
    ),
    "japanese": ("wabi-sabi", "mono no aware", *"yugen ma notan ukiyo-e nihonga rinpa kano sumi-e".split()),
    "korean": tuple("minhwa chaekgeori sipjangsaeng munbangdo sumukhwa".split()),
    "islamic": tuple(
        "arabesque geometric calligraphy muqarnas tessellation kufic naskh thuluth miniature illumination".split()
    ),
    "indian": tuple("rasa bhava mudra mandala yantra mughal rajput pahari tanjore madhubani pattachitra".split()),
}

#: The layer scorer's keywords (``layer_scorer.py``, ``LAYER_DEFINITIONS``); each layer weighs 0.20.
LAYER_KEYWORDS = {
    "L1": (
        *"color colour hue tone shade tint line curve contour outline edge composition arrangement layout".split(),
        *"balance symmetry shape form silhouette figure ground light shadow contrast brightness darkness".split(),
        *"texture pattern rhythm movement flow".split(),
        *"颜色 色彩 色调 线条 轮廓 构图 形状 形态 光影 明暗 对比 纹理 节奏".split(),
    ),
    "L2": (
        "brushwork",
        "brush stroke",
        *"technique method oil watercolor ink tempera acrylic gouache canvas silk paper wood panel".split(),
        *"pigment paint medium material layer glaze wash impasto sfumato stroke application execution".split(),
        "rendering",
        *"笔法 笔触 技法 技巧 媒材 颜料 油彩 水墨 绢本 纸本 设色 渲染 皴法".split(),
    ),
    "L3": (
        *"symbol symbolism symbolic motif iconography icon emblem attribute allegory allegorical metaphor".split(),
        *"represent meaning significance tradition traditional mythology mythological legend narrative".split(),
        *"religious sacred spiritual ritual auspicious fortune blessing".split(),
        *"象征 图像 寓意 典故 传统 文化 神话 宗教 仪式 吉祥 祥瑞 隐喻".split(),
    ),
    "L4": (
        *"dynasty period era century date year artist painter master school workshop movement style".split(),
        *"influence influenced patron commission collection provenance renaissance baroque romantic".split(),
        *"impressionist ming qing song tang yuan".split(),
        *"朝代 时期 年代 世纪 画家 大师 流派 风格 影响 赞助 收藏 传承".split(),
    ),
    "L5": (
        *"philosophy philosophical aesthetic aesthetics beauty beautiful sublime transcendent spiritual".split(),
        *"spirit essence soul harmony harmonious unity wholeness meaning interpretation significance".split(),
        *"emotion feeling expression evoke theory principle concept idea".split(),
        *"气韵 意境 神韵 境界 精神 灵性 哲学 美学 和谐 统一 超越 感悟".split(),
        *"wabi sabi yugen aware rasa bhava".split(),
    ),
}
LAYER_WEIGHT = 0.20
#: Upper bounds of the keyword-match counts for layer scores 1..4 (0 -> 1, 1-2 -> 2, 3-5 -> 3, 6-10 -> 4, more -> 5).
LAYER_RUBRIC = (0, 2, 5, 10)

_DIM_ID = re.compile(r"([A-Z]{2})_(L[1-5])_D([1-9][0-9]*)")


def _hits(text: str, words: Iterable[str]) -> int:
    low = text.lower()
    return sum(1 for w in words if w.lower() in low)


def layer_coverage(critique: str, layer: str) -> float:
    """DCR coverage of one layer: keyword hits / max(3, 0.3 x keywords), capped at 1 (``calculate_layer_coverage``).

    >>> layer_coverage("Bold color and a diagonal line", "L1"), layer_coverage("", "L1")
    (0.3333333333333333, 0.0)
    """
    words = DCR_KEYWORDS.get(layer, ())
    if not critique or not words:
        return 0.0
    return min(1.0, _hits(critique, words) / max(3, len(words) * 0.3))


def cultural_bonus(critique: str, culture: str) -> float:
    """0.04 per culture-specific term present, at most 0.2; 0 for a culture without terms.

    >>> cultural_bonus("sfumato and chiaroscuro", "western"), cultural_bonus("sfumato", "mural")
    (0.08, 0.0)
    """
    terms = CULTURAL_TERMS.get(culture)
    if not critique or not terms:
        return 0.0
    return min(0.2, _hits(critique, terms) * 0.04)


def reference_layer_counts(dims) -> dict | None:
    """Annotated dimensions per layer (the release's ``reference_overlap``): None for none; a JSON string is parsed,
    else split at commas, as the release does.

    >>> reference_layer_counts('["KR_L1_D1", "KR_L1_D2", "KR_L5_D6"]')
    {'L1': 2, 'L2': 0, 'L3': 0, 'L4': 0, 'L5': 1}
    """
    if not dims:
        return None
    if isinstance(dims, str):
        try:
            dims = json.loads(dims)
        except ValueError:
            dims = dims.split(",")
    return {layer: sum(1 for d in dims if f"_{layer}_" in d) for layer in LAYERS}


def dcr(critique: str, culture: str, reference_dims=None) -> dict:
    """Dimension Coverage Rate as ``calculate_dcr.calculate_dcr`` returns it (paper key ``dcr``, 0-1).

    ``dcr = min(1, sum_l w_l * coverage_l + bonus)`` with ``w`` = :data:`DCR_WEIGHTS` and the cultural ``bonus``;
    rounded to 4 places, ``dcr_5scale`` = the unrounded value x 5 rounded to 2. The annotated dimensions do not enter
    the score (only ``reference_overlap``).

    >>> r = dcr("Ink wash on silk: the brushwork and liubai evoke harmony.", "Chinese")
    >>> r["dcr"], r["dcr_5scale"], r["cultural_bonus"], r["layer_scores"]["L2"]
    (0.2178, 1.09, 0.04, 0.6061)
    """
    culture = culture.lower()
    scores = {layer: layer_coverage(critique, layer) for layer in LAYERS}
    base = sum(scores[layer] * DCR_WEIGHTS[layer] for layer in scores)
    bonus = cultural_bonus(critique, culture)
    value = min(1.0, base + bonus)
    return {
        "dcr": round(value, 4),
        "dcr_5scale": round(value * 5, 2),
        "layer_scores": {k: round(v, 4) for k, v in scores.items()},
        "cultural_bonus": round(bonus, 4),
        "culture": culture,
        "reference_overlap": reference_layer_counts(reference_dims),
    }


def layer_score(critique: str, layer: str) -> dict:
    """One layer's 1-5 score from its keyword-match count (:data:`LAYER_RUBRIC`), as ``layer_scorer.score_layer``.

    >>> layer_score("color, line and composition", "L1")["score"], layer_score("", "L1")["score"]
    (3.0, 1.0)
    """
    words = LAYER_KEYWORDS.get(layer)
    if not critique or not words:
        return {"score": 1.0, "matches": 0, "evidence": []}
    low = critique.lower()
    matched = [w for w in words if w.lower() in low]
    score = 1.0 + sum(1 for bound in LAYER_RUBRIC if len(matched) > bound)
    return {"score": score, "matches": len(matched), "evidence": matched[:10]}


def layer_scores(critique: str) -> dict:
    """All five layers and the overall score (equal weights 0.2, rounded to 2), as ``layer_scorer.score_all_layers``;
    ``pyramid_inverted`` when L5 exceeds the L1-L4 mean by more than 0.5.

    >>> r = layer_scores("A sublime, spiritual harmony: beauty and emotion.")
    >>> r["overall_score"], r["l5_score"], r["pyramid_inverted"]
    (1.8, 4.0, True)
    """
    layers = {layer: layer_score(critique, layer) for layer in LAYERS}
    overall = sum(layers[layer]["score"] * LAYER_WEIGHT for layer in layers)
    foundation = sum(layers[layer]["score"] for layer in LAYERS[:4]) / 4
    top = layers["L5"]["score"]
    return {
        "layers": layers,
        "overall_score": round(overall, 2),
        "pyramid_inverted": top > foundation + 0.5,
        "l1_l4_avg": round(foundation, 2),
        "l5_score": top,
    }


def parse_dimensions(value) -> list[str]:
    """The annotated dimension ids of a row: a list, or the JSON string the release stores.

    >>> parse_dimensions('["KR_L1_D1", "KR_L2_D3"]')
    ['KR_L1_D1', 'KR_L2_D3']
    """
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, (list, tuple)) or not all(isinstance(d, str) for d in value):
        raise ValueError(f"covered_dimensions must be a list of dimension ids, got {type(value).__name__}")
    return list(value)


def bad_dimensions(dims: Sequence[str], culture: str) -> list[str]:
    """The ids of ``dims`` that are not ``<prefix>_L<1-5>_D<n>`` with the culture's prefix.

    >>> bad_dimensions(["KR_L1_D1", "JP_L2_D1", "KR_L6_D1"], "korean")
    ['JP_L2_D1', 'KR_L6_D1']
    """
    prefix = CULTURES[culture][0]
    return [d for d in dims if not ((m := _DIM_ID.fullmatch(d)) and m.group(1) == prefix)]
