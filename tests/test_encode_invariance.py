"""benchmarks/encode_invariance.py: its bit-for-bit checks flag a backbone whose output depends on the batch, and
only that; and the bert-score encoder it checks is the one bert-score scores with."""

from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _Fake:
    """Token ids of a string = its characters; output = the ids as floats, plus ``leak`` x (batch size - 1) x 1e-7
    on every value, or x (position) when ``by_position``: a backbone whose bits depend on the batch when leak != 0."""

    def __init__(self, leak: float = 0.0, by_position: bool = False):
        self.torch, self.leak, self.by_position = torch, leak, by_position

    def ids(self, text):
        return [ord(c) for c in text], [0] * len(text)

    def encode(self, rows):
        out = []
        for pos, (ids, _) in enumerate(rows):
            shift = (pos if self.by_position else len(rows) - 1) * self.leak * 1e-7
            out.append(torch.tensor(ids, dtype=torch.float32) * (1 + shift))
        return out


def _strings():
    # 40 distinct 3-letter strings (one length with >= 33) and one longer string for the padded check
    return [f"{a}{b}x" for a in "abcdefgh" for b in "vwxyz"] + ["a much longer string"]


def test_a_batch_independent_backbone_passes_every_check(bench_script):
    stats = bench_script("encode_invariance").check(_Fake(), _strings())
    assert {c: d for c, (d, _, _) in stats.items()} == dict.fromkeys(stats, 0)
    assert stats["batch"][1] == 19 and stats["position"][1] == 17 and stats["companions"][1] == 1


def test_a_backbone_whose_bits_follow_the_batch_size_fails_batch_but_not_the_fixed_shape_checks(bench_script):
    stats = bench_script("encode_invariance").check(_Fake(leak=1.0), _strings())
    assert stats["repeat"][0] == 0
    assert stats["batch"][0] == 19 and stats["batch"][2] > 0
    assert stats["position"][0] == 0 and stats["companions"][0] == 0  # same batch size: same bits


def test_a_backbone_whose_bits_follow_the_position_fails_position(bench_script):
    stats = bench_script("encode_invariance").check(_Fake(leak=1.0, by_position=True), _strings())
    assert stats["position"][0] > 0 and stats["repeat"][0] == 0


def test_the_checked_bertscore_encoder_gives_bert_scores_own_embeddings(tmp_path, bench_script):
    # the script's "bertscore" backbone must be what bert-score encodes with (ids and hidden states), else its
    # verdict would be about another computation
    pytest.importorskip("bert_score")
    import sys

    sys.path.insert(0, os.path.join(REPO, "tests", "fixtures", "vulca"))
    from bert_score.utils import get_bert_embedding
    from tiny_nli import build_tiny_nli

    script = bench_script("encode_invariance")
    bb = script.Backbone("bertscore", build_tiny_nli(str(tmp_path / "tiny")))
    text = "The painting shows the Qing court in spring"
    ours = bb.encode([bb.ids(text)])[0]
    theirs, mask, _ = get_bert_embedding([text], bb.net, bb.tok, {}.fromkeys(range(len(bb.tok)), 1.0), device="cpu")
    assert torch.equal(ours, theirs[0, : int(mask[0].sum())])
