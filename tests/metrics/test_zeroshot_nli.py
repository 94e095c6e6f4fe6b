"""Zero-shot NLI: pipeline arithmetic with a fake scorer, label-id lookup, and equality with HF's pipeline."""

import math
import os
import sys

import pytest

from hanyi.metrics.critique_profile import FEATURE_LABELS, QUALITY_LABELS, STANCE_LABELS
from hanyi.metrics.zeroshot_nli import NLIConfig, extract_features, hf_logits_fn, label_ids, try_logits_fn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fixtures", "vulca"))
from tiny_nli import build_tiny_nli  # noqa: E402


@pytest.fixture(scope="module")
def tiny_nli(session_tmp):
    return build_tiny_nli(os.path.join(session_tmp, "tiny_nli"))


def fake(premises, hypotheses):
    """entail logit = index of the label in its set / 10, contra = 0: every value is known in closed form."""
    out = []
    for h in hypotheses:
        label = h[len("This example is ") : -1]
        for labels in (STANCE_LABELS, FEATURE_LABELS, QUALITY_LABELS):
            if label in labels:
                out.append([labels.index(label) / 10, 0.0])
    return out


def test_single_label_is_softmax_over_entailment_logits_and_multi_label_is_per_label():
    out = extract_features(["text"], fake, STANCE_LABELS, FEATURE_LABELS, QUALITY_LABELS)[0]
    z = sum(math.exp(i / 10) for i in range(10))
    assert out["stance"]["Strong Negation"] == pytest.approx(math.exp(0.9) / z)
    assert sum(out["stance"].values()) == pytest.approx(1.0)
    assert out["stance_top1"] == ["Strong Negation", pytest.approx(math.exp(0.9) / z)]
    assert out["features"]["Use of Color"] == pytest.approx(0.5)
    assert out["quality"]["Subjective/Biased View"] == pytest.approx(1 / (1 + math.exp(-1.0)))


@pytest.mark.parametrize(
    "id2label, expected",
    [({0: "entailment", 1: "neutral", 2: "contradiction"}, (0, 2)),  # mDeBERTa-v3-base-mnli-xnli
     ({0: "contradiction", 1: "neutral", 2: "entailment"}, (2, 0)),  # facebook/bart-large-mnli
     ({"0": "ENTAILMENT", "1": "CONTRADICTION"}, (0, 1))],
)  # fmt: skip
def test_label_ids_are_looked_up_by_name(id2label, expected):
    assert label_ids(id2label) == expected


def test_label_ids_without_entailment_raise():
    with pytest.raises(ValueError, match="entailment"):
        label_ids({0: "LABEL_0", 1: "LABEL_1"})


def test_template_without_placeholder_is_rejected():
    with pytest.raises(ValueError, match="template"):
        NLIConfig.from_env(template="This text is about")


def test_batched_scores_equal_the_hf_zero_shot_pipeline(tiny_nli):
    from transformers import pipeline

    texts = ["The court ladies watch lanterns in the first month. " * 200, "这幅画色彩富丽。"]  # first is truncated
    ours = extract_features(
        texts, hf_logits_fn(NLIConfig(model=tiny_nli, batch_size=7)), STANCE_LABELS, FEATURE_LABELS, QUALITY_LABELS
    )
    pipe = pipeline("zero-shot-classification", model=tiny_nli, device=-1)
    for text, mine in zip(texts, ours):
        stance = pipe(text, list(STANCE_LABELS), multi_label=False)
        assert dict(zip(stance["labels"], stance["scores"])) == pytest.approx(mine["stance"], abs=1e-5)
        quality = pipe(text, list(QUALITY_LABELS), multi_label=True)
        assert dict(zip(quality["labels"], quality["scores"])) == pytest.approx(mine["quality"], abs=1e-5)


def test_truncation_cuts_the_premise_only(tiny_nli):
    fn = hf_logits_fn(NLIConfig(model=tiny_nli, max_length=16))
    long = fn(["word " * 500], ["This example is Symbolism."])
    # with max_length 16 the hypothesis survives: a different hypothesis changes the logits
    other = fn(["word " * 500], ["This example is Genre."])
    assert long != other


def test_unavailable_model_warns_once_and_returns_none(caplog):
    cfg = NLIConfig(model="/nonexistent/nli-model")
    with caplog.at_level("WARNING"):
        assert try_logits_fn(cfg) is None and try_logits_fn(cfg) is None
    assert sum("cannot be loaded" in r.message for r in caplog.records) == 1


def test_id_level_pair_encoding_equals_the_tokenizer_and_is_used(tiny_nli, caplog):
    from transformers import AutoTokenizer

    from hanyi.metrics.zeroshot_nli import pair_layout

    tok = AutoTokenizer.from_pretrained(tiny_nli)
    cls, sep = tok.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    assert pair_layout(tok) == ([cls], [sep], [sep], ([0], 0, [0], 1, [1]))  # [CLS] A [SEP] B [SEP]
    fn = hf_logits_fn(NLIConfig(model=tiny_nli, batch_size=3))
    with caplog.at_level("INFO", logger="hanyi.metrics.zeroshot_nli"):
        fn(["lanterns " * 700, "short", "willows and pavilions " * 90], ["This example is Genre."] * 3)
    assert "id-level pair encoding differs" not in caplog.text  # the checked fast path stayed on
