"""benchmarks/punrebus_parity.py: the "official" path is independent of hanyi's lemmatiser (review defect 6)."""

import pytest


@pytest.fixture(scope="module")
def parity(bench_script):
    return bench_script("punrebus_parity")


def test_official_path_uses_the_lemmatiser_it_is_given_not_hanyis(parity, monkeypatch):
    from hanyi.metrics import elements as el

    monkeypatch.setattr(el, "lemmatize_noun", lambda w: w)  # hanyi's lemmatiser drifts: no lemmatisation at all
    log = parity.official_log([{"image_id": "fudao_1.jpg", "elements": "Bats, Peaches"}], "elements")
    wordnet_like = {"bats": "bat", "peaches": "peach"}.get
    abs_score, _sim, n = parity.official_elements(log, {"fudao": ["bat", "peach"]}, None, False, wordnet_like)
    assert (abs_score, n) == (1.0, 1)
    identity_score, _sim, _n = parity.official_elements(log, {"fudao": ["bat", "peach"]}, None, False, lambda w: w)
    assert identity_score == 1.0  # substring match: "bat" in "bats" -- the lemmatiser decides only non-substrings
    log = parity.official_log([{"image_id": "fudao_1.jpg", "elements": "Leaves"}], "elements")
    assert parity.official_elements(log, {"fudao": ["leaf"]}, None, False, {"leaves": "leaf"}.get)[0] == 1.0
    assert parity.official_elements(log, {"fudao": ["leaf"]}, None, False, lambda w: w)[0] == 0.0


def test_without_wordnet_the_script_stops_and_names_hanyi_setup(parity, monkeypatch):
    import nltk

    def missing(resource, *args, **kwargs):
        raise LookupError(f"Resource {resource} not found")

    monkeypatch.setattr(nltk.data, "find", missing)
    with pytest.raises(SystemExit, match="hanyi setup"):
        parity.official_lemmatizer()


def test_with_wordnet_the_official_lemmatiser_is_nltks(parity):
    nltk = pytest.importorskip("nltk")
    try:
        nltk.data.find("corpora/wordnet")
    except LookupError:
        pytest.skip("NLTK WordNet data not installed (hanyi setup)")
    lemmatize = parity.official_lemmatizer()
    assert [lemmatize(w) for w in ("bats", "peaches", "leaves", "geese")] == ["bat", "peach", "leaf", "goose"]
