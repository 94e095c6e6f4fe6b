"""Ours, not the release's: ``dcr_bilingual_robust``, the VULCA-Bench DCR with each keyword counted as one concept in
English or Chinese (docs/vulca_bench.md, "Metrics"). The paper DCR's keyword lists weigh the languages unequally, so
the release's own Chinese references score about half their English twins; here a critique and its faithful
translation score alike.
"""

from __future__ import annotations

from hanyi.metrics.vulca_bench import DCR_WEIGHTS, LAYERS, cultural_bonus

#: Ours: each DCR keyword of the release as one concept with its Chinese forms (the release's own Chinese keyword of
#: that concept first, then ours), plus the release's two Chinese keywords that have no English one (意境, 气韵) with
#: their pinyin and English forms. A concept counts once, in whichever language it is written.
BILINGUAL_CONCEPTS = {
    "L1": {
        "color": ("颜色", "色彩"),
        "composition": ("构图",),
        "line": ("线条",),
        "shape": ("造型", "形状"),
        "form": ("造型", "形态"),
        "tone": ("色调",),
        "contrast": ("对比",),
        "light": ("明暗", "光影"),
        "shadow": ("明暗", "阴影"),
        "texture": ("纹理", "质感"),
        "pattern": ("图案", "纹样"),
        "rhythm": ("节奏", "韵律"),
        "balance": ("平衡", "均衡"),
    },
    "L2": {
        "brushwork": ("笔法", "笔触"),
        "technique": ("技法", "技巧"),
        "medium": ("媒材", "媒介"),
        "material": ("材料", "材质"),
        "oil": ("油彩", "油画"),
        "ink": ("水墨", "墨色"),
        "silk": ("绢本", "绢"),
        "canvas": ("画布",),
        "paper": ("纸本", "宣纸"),
        "pigment": ("颜料", "矿物色"),
        "glaze": ("罩染", "釉"),
        "wash": ("渲染", "晕染"),
        "stroke": ("笔触", "用笔"),
        "layer": ("层次", "叠加"),
    },
    "L3": {
        "symbol": ("象征",),
        "motif": ("母题", "纹饰"),
        "iconography": ("图像",),
        "allegory": ("寓意", "寓言"),
        "mythology": ("神话",),
        "tradition": ("传统",),
        "religious": ("宗教",),
        "ritual": ("仪式",),
        "auspicious": ("吉祥", "祥瑞"),
        "metaphor": ("隐喻", "典故"),
        "represent": ("代表", "表现"),
    },
    "L4": {
        "dynasty": ("朝代", "王朝"),
        "period": ("时期",),
        "century": ("世纪",),
        "era": ("时代",),
        "movement": ("运动", "思潮"),
        "school": ("流派", "画派"),
        "influence": ("影响",),
        "patron": ("赞助",),
        "commission": ("委托", "订制"),
        "provenance": ("收藏", "来源"),
        "style": ("风格",),
        "genre": ("题材", "画科"),
        "artist": ("画家", "艺术家"),
    },
    "L5": {
        "philosophy": ("哲学", "思想"),
        "aesthetics": ("美学", "审美"),
        "spiritual": ("精神",),
        "transcend": ("超越",),
        "harmony": ("和谐",),
        "beauty": ("美感", "之美"),
        "sublime": ("崇高",),
        "emotion": ("情感",),
        "meaning": ("意义", "内涵"),
        "interpretation": ("诠释", "解读"),
        "theory": ("理论", "画论"),
        "意境": ("yijing", "artistic conception"),
        "气韵": ("qiyun", "spirit resonance"),
    },
}


def bilingual_coverage(critique: str, layer: str) -> float:
    """Ours: concepts of :data:`BILINGUAL_CONCEPTS` present (in either language) / max(3, 0.3 x concepts), at most 1.

    >>> bilingual_coverage("构图平衡，线条清晰，色彩温暖", "L1"), bilingual_coverage("balanced composition, clear line, warm color", "L1")
    (1.0, 1.0)
    """
    concepts = BILINGUAL_CONCEPTS[layer]
    if not critique:
        return 0.0
    low = critique.lower()
    hits = sum(1 for en, zh in concepts.items() if any(w.lower() in low for w in (en, *zh)))
    return min(1.0, hits / max(3, len(concepts) * 0.3))


def dcr_bilingual(critique: str, culture: str) -> float:
    """Ours (``dcr_bilingual_robust``): the DCR's weights and cultural bonus over :func:`bilingual_coverage`, unrounded,
    so that a critique and its faithful translation score alike (the paper DCR rates the release's own Chinese
    references at about half their English twins: docs/vulca_bench.md).

    >>> from hanyi.metrics.vulca_bench import dcr
    >>> round(dcr_bilingual("构图平衡，线条清晰，色彩温暖", "chinese"), 4), round(dcr("构图平衡，线条清晰，色彩温暖", "chinese")["dcr"], 4)
    (0.25, 0.0833)
    """
    base = sum(bilingual_coverage(critique, layer) * DCR_WEIGHTS[layer] for layer in LAYERS)
    return min(1.0, base + cultural_bonus(critique, culture.lower()))
