"""The per-request hooks' shortcuts on a served model's path change no number: each shortcut against the full rule
it stands for, over a table of answers (benchmarks/served_cost.py measures what they save)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    calls = []
    env = _common._environment("cvlue")  # a template with a loop: rendered by Jinja
    original = env.get_template
    monkeypatch.setattr(env, "get_template", lambda *a, **k: calls.append(a) or original(*a, **k))
    texts = {_common.render("cvlue", "vd.jinja", caption="c", history=[], question=s) for s in "abc"}
    assert len(texts) == 3 and len(calls) == 1
    _common._template.cache_clear()


def test_render_once_keys_on_the_values_the_template_reads(monkeypatch):
    """The key is the values in the template's own (sorted) order of names: other variables do not split it."""
    from hanyi.tasks import _common

    # else joined, not cached (test_plain_render.py); _plain_join is memoised, so an earlier render in this process
    # would have compiled the join already: both go
    monkeypatch.setattr(_common, "_plain_parts", lambda *_: None)
    monkeypatch.setattr(_common, "_plain_join", lambda *_: None)
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


def _lenient_in_full(prediction, gold, sentence):
    """``exact_match_lenient`` as it reads every word of the sentence for every answer (the rule its shortcut keeps)."""
    import re
    import unicodedata

    from hanyi.metrics import free_text

    if free_text.exact_match(prediction, gold):
        return True
    p, g = free_text.normalise_answer(prediction), free_text.normalise_answer(gold)
    words = re.findall(r"\w+", unicodedata.normalize("NFKC", sentence or "").lower())
    return bool(p) and any(w == p and free_text.depluralise(w) == g for w in words)


LENIENT_TABLE = [
    ("buoys", "buoy", "She kept the buoys in line."), ("Buoys.", "buoy", "BUOYS ahead"), ("boxes", "box", "two boxes"),
    ("box", "boxes", "two boxes"), ("glass", "glas", "a glass"), ("s", "", "s es"), ("es", "", "es"), ("", "", "a"),
    ("cuts", "cut", "no such word"), ("ｂｕｏｙｓ", "buoy", "ｂｕｏｙｓ"), ("buoyss", "buoys", "buoyss"),
    ("churches", "church", "the churches"), ("B", "cut", "a cut"), (None, "cut", "cut"), ("cut", "cut", None),
    ("dogs", "dog", "hot-dogs"), ("Dogs!", "dog", "dogs"), ("ﬁsh", "fish", "ﬁsh"), ("İs", "i̇", "İs"),
]  # fmt: skip


@pytest.mark.parametrize(("prediction", "gold", "sentence"), LENIENT_TABLE)
def test_lenient_shortcut_equals_the_full_rule_on_a_table(prediction, gold, sentence):
    from hanyi.metrics import free_text

    assert free_text.exact_match_lenient(prediction, gold, sentence) is _lenient_in_full(prediction, gold, sentence)


def test_lenient_table_reaches_both_answers_past_the_exact_match():
    from hanyi.metrics import free_text

    found = {_lenient_in_full(*case) for case in LENIENT_TABLE if not free_text.exact_match(*case[:2])}
    assert found == {True, False}


WORDY = "abcsxzhe Sİı\u0307ｓﬁ-.!' \n"


@settings(max_examples=400, deadline=None)
@given(st.text(WORDY, max_size=8), st.text(WORDY, max_size=6), st.text(WORDY, max_size=30))
def test_lenient_shortcut_equals_the_full_rule(prediction, gold, sentence):
    from hanyi.metrics import free_text

    sentence = f"{sentence} {prediction}"  # the answer often is a word of the sentence: reach the word rule
    assert free_text.exact_match_lenient(prediction, gold, sentence) is _lenient_in_full(prediction, gold, sentence)


TOKENS = [
    "a", "b", " ", ":", "：", "*", "**", "_", "__", "#", "## ", ">", "`", "```", "=", "===", "-", "---", "\n", "\r\n",
    "\x0b", "\x1c", "\x85", "\u2028", "\u0301", "e", "\u1fef", "\u226f", ">\u0338", "\u00a0", "\u2000", "\t", '"',
    "«", "»", "“", "”", "[", "]", "answer", "[answer]", "translation", "Sure", "Here is", "German", "Sure!\n",
]  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=10).map("".join))
def test_a_plain_line_reads_as_the_paper_extraction_under_the_full_robust_rule(response):
    """Where the plain-line pattern holds, the robust rule in full gives the paper extraction's answer (the shortcut
    ``extract_after_preamble`` takes), and ``extract_after_preamble`` equals its full rule on every text."""
    import unicodedata

    from hanyi.metrics import free_text

    labels = ("answer",)
    full = free_text._after_preamble(unicodedata.normalize("NFC", response), labels)
    assert free_text.extract_after_preamble(response, labels) == full
    if plain_line(response):
        assert full == free_text.extract_labelled_answer(response, labels)


def plain_line(response) -> bool:
    """Whether ``extract_after_preamble`` takes its shortcut on ``response`` (the pattern on its NFC text)."""
    import unicodedata

    from hanyi.metrics import free_text

    if not isinstance(response, str):
        return False
    return free_text._PLAIN_LINE.fullmatch(unicodedata.normalize("NFC", response)) is not None


def test_plain_line_cases():
    assert plain_line("cut") and plain_line(" «Er kam.» ") and plain_line("")
    for text in ("a\nb", "**cut**", "answer: cut", "`cut`", "> cut", "---", "a\u2028b", "\u1fef", None):
        assert not plain_line(text), text


BLOCKS = [
    None, {}, {"mode": "sm"}, {"mode": "sm", "default": {"mode": "vlm"}}, {"default": {"mode": "vlm"}},
    {"mode": {"nested": 1}, "default": {}}, {"mode": None, "default": {}}, {"mode": ""}, {"other": 1},
    {"mode": {"nested": 1}}, {"default": {}, "x": {"mode": "sm"}},
]  # fmt: skip


@pytest.mark.parametrize("block", BLOCKS)
def test_one_prompt_setting_equals_prompt_kwargs(block):
    """``prompt_setting`` answers what ``prompt_kwargs`` does for that key, an incomplete model block's error too."""
    from hanyi.tasks._common import IncompleteModelBlock, prompt_kwargs, prompt_setting

    try:
        expected = prompt_kwargs(block, mode="vlm")["mode"]
    except IncompleteModelBlock as exc:
        with pytest.raises(IncompleteModelBlock, match=str(exc)[:40]):
            prompt_setting(block, "mode", "vlm")
    else:
        assert prompt_setting(block, "mode", "vlm") == expected


def test_the_visual_hook_signature_is_computed_once(monkeypatch):
    """lmms-eval asks for ``doc_to_visual``'s signature per doc: the hook carries it, the same two parameters."""
    import inspect

    from hanyi.tasks.unpie import utils

    code = utils.unpie_doc_to_visual.__code__
    assert code.co_varnames[: code.co_argcount] == ("doc", "lmms_eval_specific_kwargs")
    monkeypatch.setattr(inspect, "_signature_from_function", lambda *a, **k: pytest.fail("signature recomputed"))
    assert len(inspect.signature(utils.unpie_doc_to_visual).parameters) == 2
