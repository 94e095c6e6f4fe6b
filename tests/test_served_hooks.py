"""The per-request hooks' shortcuts on a served model's path change no number: each shortcut against the full rule
it stands for, over a table of answers (benchmarks/served_cost.py measures what they save)."""

import pytest

ANSWERS = [
    "B", "", None, "cut", "Cut.", "[answer]: cut", "Here is the answer:\n**cut**", "buoys", "Sure! answer: «bank»",
    "是的", "答案：是的\n因为", "不是", "2个", "12个", "右边", "灯是关着的吗", "Answer: 2", " cut \n", "two", "没有。",
    "`cut`", "> for a song!", "Answer:\nbuoys", "是不是", "不", "\n\n", "有的", "一样吗",
]  # fmt: skip
GOLDS = ["cut", "buoy", "for a song", "Bank", "是", "不是", "2", "右边", "没有", "有"]
CASES = [(answer, gold) for gold in GOLDS for answer in ANSWERS]


@pytest.mark.parametrize(("answer", "gold"), CASES)
def test_unpie_grounding_flags_equal_their_full_rules(answer, gold):
    """``exact_match_lenient`` is not asked when the exact match holds; the robust answer is not matched again when
    it is the paper extraction's answer."""
    from hanyi.metrics import free_text
    from hanyi.tasks.unpie import utils

    sentence = "She kept the buoys in line at the bank; cut!"
    doc = {"unpie_id": "p1", "category": "homographic", "pun_sentence": sentence, "pun_phrase": gold}
    out = utils.unpie_grounding_process_results(doc, [answer])
    item, robust = out["exact_match"], out["exact_match_robust"]
    pred = free_text.extract_labelled_answer(answer, ("answer",))
    assert item["correct"] is free_text.exact_match(pred, gold)
    assert item["exact_match_lenient"] == out["exact_match_lenient"]
    assert out["exact_match_lenient"] == float(free_text.exact_match_lenient(pred, gold, sentence))
    assert robust["prediction"] == free_text.extract_after_preamble(answer, ("answer",))
    assert robust["correct"] is free_text.exact_match(robust["prediction"], gold)


@pytest.mark.parametrize(("answer", "gold"), CASES)
def test_cvlue_vqa_flags_equal_the_official_rule(answer, gold):
    """``strict`` is asked only when the lenient rule matched (strict only refuses more); the robust answer is not
    scored again when cleaning left it as it was."""
    from hanyi.metrics import short_answer_zh as zh
    from hanyi.tasks.cvlue import utils

    doc = {"question_id": 1, "image_path": "a.jpg", "answer": gold, "category": "c", "culture_group": "g"}
    out = utils.cvlue_vqa_process_results(doc, [answer])
    raw = answer if isinstance(answer, str) else None
    assert out["accuracy"]["v"] == float(zh.vqa_correct_official(raw, gold))
    assert out["accuracy"]["strict"] is zh.vqa_correct_official(raw, gold, strict=True)
    assert out["accuracy_robust"]["v"] == float(zh.vqa_correct_official(zh.clean_answer(raw), gold))


def test_the_table_exercises_each_shortcut():
    """The cases above reach both sides of every shortcut (else they could not catch a wrong one)."""
    from hanyi.metrics import free_text
    from hanyi.metrics import short_answer_zh as zh

    preds = [(free_text.extract_labelled_answer(a, ("answer",)), a, g) for a, g in CASES]
    assert any(free_text.exact_match(p, g) for p, _, g in preds)
    assert any(
        free_text.exact_match_lenient(p, g, "the buoys") and not free_text.exact_match(p, g) for p, _, g in preds
    )
    assert any(free_text.extract_after_preamble(a, ("answer",)) != p for p, a, _ in preds)
    lenient_only = [
        (a, g) for a, g in CASES if zh.vqa_correct_official(a, g) and not zh.vqa_correct_official(a, g, True)
    ]
    assert lenient_only and any(zh.vqa_correct_official(a, g, True) for a, g in CASES)
    assert any(isinstance(a, str) and zh.clean_answer(a) != a for a, _ in CASES)


def test_a_template_is_looked_up_once(monkeypatch):
    """Jinja's ``get_template`` takes a lock and reorders its LRU queue each call: a render reuses the template."""
    from hanyi.tasks import _common

    _common._template.cache_clear()
    env = _common._environment("unpie")
    calls = []
    original = env.get_template
    monkeypatch.setattr(env, "get_template", lambda *a, **k: calls.append(a) or original(*a, **k))
    texts = {_common.render("unpie", "grounding_image.jinja", pun_sentence=s, image_context="") for s in "abc"}
    assert len(texts) == 3 and len(calls) == 1
    _common._template.cache_clear()


def test_render_once_keys_on_the_values_the_template_reads():
    """The key is the values in the template's own (sorted) order of names: other variables do not split it."""
    from hanyi.tasks import _common

    _common._render_key.cache_clear()
    one = _common.render_once("unpie", "grounding_image.jinja", pun_sentence="A pun.", image_context="", lang="de")
    two = _common.render_once("unpie", "grounding_image.jinja", image_context="", pun_sentence="A pun.", x=object())
    assert one is two and "A pun." in one
    assert _common._render_key.cache_info().currsize == 1
    assert _common._key_names("unpie", "grounding_image.jinja") == ("image_context", "pun_sentence")


def test_a_decoded_picture_skips_the_cell_parser(monkeypatch):
    """A PIL image (what datasets' Image feature hands a task) goes straight to the RGB check."""
    from PIL import Image

    from hanyi.data import images

    monkeypatch.setattr(images, "image_source", lambda *a, **k: pytest.fail("parsed a decoded picture"))
    picture = Image.new("RGB", (4, 4))
    assert images.to_pil(picture) is picture
    assert images.to_pil(Image.new("L", (4, 4))).mode == "RGB"
