"""The tiny random LLaVA used by the tests and the demo: offline, CJK-capable, loadable by lmms-eval's llava_hf."""

from __future__ import annotations

import json
import os


def test_tokenizer_round_trips_chinese_and_has_cjk_tokens(tiny_llava):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_llava)
    text = "谐音画谜：马上封侯。这幅图的含义是什么？（Ａ）"
    ids = tok(text, add_special_tokens=False)["input_ids"]
    assert tok.decode(ids) == text
    assert tok.unk_token_id not in ids
    cjk_tokens = [
        t for t in tok.get_vocab() if any("\u4e00" <= ch <= "\u9fff" for ch in tok.convert_tokens_to_string([t]))
    ]
    assert len(cjk_tokens) >= 50, "the BPE vocabulary should hold merged CJK characters, not bytes only"
    assert "<image>" in tok.get_vocab()


def test_build_is_idempotent_and_small(tiny_llava):
    from hanyi.models.tiny_llava import build_tiny_llava

    assert build_tiny_llava(tiny_llava) == tiny_llava
    size = sum(os.path.getsize(os.path.join(tiny_llava, f)) for f in os.listdir(tiny_llava))
    assert size < 2_000_000
    assert json.load(open(os.path.join(tiny_llava, "hanyi_tiny.json")))["params"] < 500_000
