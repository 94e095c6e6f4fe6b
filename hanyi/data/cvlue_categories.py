"""CVLUE object categories (paper Table 3) and their culture groups: the one table every CVLUE file refers to.

Keys are the official image-folder slugs (``images/<split>/<A|B>/<slug>/...``, repo readme); display names are the
paper's Table 3 names; Chinese names are the repo's ``readme_zh``. Culture groups (paper §Analysis):

* ``coco``: the 15 categories overlapping with MS-COCO (italic in Table 3) - weakest link to Chinese culture;
* ``non_wordnet``: the 22 categories not in WordNet (bold in Table 3) - closest to Chinese culture. 18 are certain;
  the last 4 (``15-baozi``, ``51-staff``, ``59-spatula``, ``86-pipa``) are INFERRED from the lost bold markup
  (``NON_WORDNET_INFERRED``; spec §1.5);
* ``moderate``: the remaining 55.
"""

from __future__ import annotations

#: (slug, Table 3 display name, Chinese name), in the official order (Table 3 order, ids 1-92).
CATEGORIES = tuple(
    (slug, en, zh)
    for slug, en, zh in (
        line.strip().split("|")
        for line in """1-panda|panda|大熊猫; 2-cow|cow|牛; 3-fish|fish|鱼; 4-dog|dog|狗; 5-horse|horse|马; 6-chicken|chicken|鸡;
7-mouse|mouse|鼠; 8-bird|bird|鸟; 9-human|human|人; 10-cat|cat|猫; 11-hot_pot|hot pot|火锅; 12-rice|rice|米饭;
13-dumpling|dumpling|饺子; 14-noodles|noodles|面条; 15-baozi|stuffed bun|包子; 16-milk_tea|bubble tea|奶茶;
17-coke|coke|可乐; 18-milk|milk|牛奶; 19-tea|tea|茶; 20-porridge|porridge|粥; 21-alcohol|alcohol|酒;
22-hanfu|Hanfu|汉服; 23-tangzhuang|Tang suit|唐装; 24-chi_pao|cheongsam|旗袍; 25-suit|suit|西装;
26-t_shirt|T-shirt|T恤; 27-willow|willow|柳树; 28-ginkgo|ginkgo|银杏; 29-sycamore|Chinese parasol|梧桐;
30-birch|birch|白桦; 31-pine|pine|松树; 32-chrysanthemum|chrysanthemum|菊花; 33-peony|peony|牡丹;
34-orchid|orchid|兰科; 35-lotus|lotus|莲; 36-lily|lily|百合; 37-lychee|lychee|荔枝; 38-hawthorn|hawthorn|山楂;
39-apple|apple|苹果; 40-cantaloupe|cantaloupe|哈密瓜; 41-longan|longan|龙眼; 42-xiaobaicai|bok choy|小白菜;
43-potato|potato|马铃薯; 44-dabaicai|Chinese cabbage|大白菜; 45-carrot|carrot|胡萝卜; 46-cauliflower|cauliflower|花椰菜;
47-hoe|hoe|锄头; 48-plow|plow|犁; 49-harrow|harrow|耙; 50-sickle|sickle|镰刀; 51-staff|carrying pole|担杖;
52-spoon|spoon|汤勺; 53-bowl|bowl|碗; 54-cutting_board|cutting board|砧板; 55-chopsticks|chopsticks|筷子;
56-wok|wok|炒锅; 57-fan|fan|扇子; 58-chinese_cleaver|Chinese cleaver|菜刀; 59-spatula|wok spatula|锅铲; 60-tv|TV|电视;
61-table|table|桌子; 62-chair|chair|椅子; 63-refrigerator|refrigerator|冰箱; 64-stove|cooking stove|灶台;
65-ping_pong|Ping-Pong|乒乓球; 66-basketball|basketball|篮球; 67-swimming|swimming|游泳; 68-football|football|足球;
69-running|running|跑步; 70-lion_dance|lion dance|舞狮; 71-dragon_boat|dragon boat|龙舟;
72-national_flag|national flag|国旗; 73-mooncake|mooncake|月饼; 74-couplet|couplet|春联; 75-lantern|lantern|花灯;
76-pencil|pencil|铅笔; 77-blackboard|blackboard|黑板; 78-brush_pen|Chinese brush|毛笔; 79-chalk|chalk|粉笔;
80-ballpen|ballpoint|原子笔; 81-scissors|scissors|剪刀; 82-guzheng|Chinese zither|古筝; 83-erhu|erhu|二胡;
84-suona|suona|唢呐; 85-drums|drums|鼓; 86-pipa|pipa|琵琶; 87-calligraphy|brush calligraphy|书法;
88-shadowplay|Chinese shadow play|皮影; 89-papercutting|paper cutting|剪纸; 90-bingmayong|Terracotta Army|秦始皇兵马俑;
91-tripod|ding|鼎; 92-ceramic|ceramics|陶瓷""".split(";")
    )
)
SLUGS = tuple(slug for slug, _, _ in CATEGORIES)
COCO = frozenset(
    "2-cow 4-dog 5-horse 7-mouse 8-bird 9-human 10-cat 39-apple 46-cauliflower 52-spoon 53-bowl 60-tv 62-chair "
    "63-refrigerator 81-scissors".split()
)
NON_WORDNET_CERTAIN = frozenset(
    "11-hot_pot 16-milk_tea 22-hanfu 23-tangzhuang 24-chi_pao 58-chinese_cleaver 70-lion_dance 71-dragon_boat "
    "73-mooncake 78-brush_pen 82-guzheng 83-erhu 84-suona 87-calligraphy 88-shadowplay 89-papercutting "
    "90-bingmayong 91-tripod".split()
)
NON_WORDNET_INFERRED = frozenset(("15-baozi", "51-staff", "59-spatula", "86-pipa"))
NON_WORDNET = NON_WORDNET_CERTAIN | NON_WORDNET_INFERRED
CULTURE_GROUPS = ("non_wordnet", "moderate", "coco")
UNKNOWN = "unknown"
#: Table 3's 15 semantic fields (metric-key slugs), each with its number of categories, in Table 3 / id order.
FIELD_SIZES = (
    ("animal", 10), ("food", 5), ("beverages", 6), ("clothing", 5), ("plant", 10), ("fruit", 5), ("vegetable", 5),
    ("agriculture", 5), ("tool", 8), ("furniture", 5), ("sport", 5), ("celebrations", 6), ("education", 6),
    ("instruments", 5), ("arts", 6),
)  # fmt: skip
FIELDS = tuple(name for name, _ in FIELD_SIZES)
#: slug -> semantic field, from the id order of :data:`CATEGORIES` and :data:`FIELD_SIZES`.
FIELD_OF = dict(zip(SLUGS, (name for name, size in FIELD_SIZES for _ in range(size)), strict=True))


def culture_group(slug: str) -> str:
    """The culture group of a category slug (``unknown`` for a slug outside Table 3).

    >>> culture_group("84-suona"), culture_group("2-cow"), culture_group("1-panda"), culture_group("x")
    ('non_wordnet', 'coco', 'moderate', 'unknown')
    """
    if slug in NON_WORDNET:
        return "non_wordnet"
    if slug in COCO:
        return "coco"
    return "moderate" if slug in SLUGS else UNKNOWN


def semantic_field(slug: str) -> str:
    """The Table 3 semantic field of a category slug (``unknown`` for a slug outside Table 3).

    >>> semantic_field("84-suona"), semantic_field("15-baozi"), semantic_field("92-ceramic"), semantic_field("x")
    ('instruments', 'food', 'arts', 'unknown')
    """
    return FIELD_OF.get(slug, UNKNOWN)


def category_of(image_path: str) -> str:
    """The category slug of an official image path: its parent folder (spec §1.5).

    >>> category_of("images/val/A/84-suona/A-84-326.png")
    '84-suona'
    """
    parts = image_path.replace("\\", "/").split("/")
    return parts[-2] if len(parts) >= 2 else UNKNOWN
