"""Build a tiny random-weight Chinese-CLIP checkpoint offline, for the CVLUE stage-1 retriever's tests and benchmark.

``python -m hanyi.models.tiny_chinese_clip <out_dir>`` writes a checkpoint of about 3 MB (config, safetensors, a
BERT WordPiece vocabulary of CJK characters, a Chinese-CLIP image processor) that
``hanyi prepare cvlue --itr-retriever <out_dir>`` loads with no network, exactly as it loads
``OFA-Sys/chinese-clip-vit-large-patch14``. Its embeddings are noise: it exercises the plumbing (encoding, cache,
top-K, shortlist, scoring), not retrieval quality.
"""

from __future__ import annotations

import os
import sys

#: Characters of the tiny vocabulary: the CJK Unified Ideographs block (any other character becomes ``[UNK]``).
_CJK = [chr(c) for c in range(0x4E00, 0xA000)]
_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def tiny_config(vocab_size: int, image_size: int = 32, projection_dim: int = 16):
    """A 1-layer text tower (BERT) and 1-layer vision tower (ViT, patch 16) of width 32, initialised wide enough that
    different inputs get different top-K lists (the tests compare rankings, which a collapsed model would not test)."""
    from transformers import ChineseCLIPConfig

    text = {
        "vocab_size": vocab_size,
        "hidden_size": 32,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "max_position_embeddings": 64,
        "initializer_range": 0.5,  # BERT's 0.02 maps every caption to nearly one vector (cosine 0.99999)
    }
    vision = {
        "hidden_size": 32,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "image_size": image_size,
        "patch_size": 16,
        "projection_dim": projection_dim,
        "initializer_factor": 5.0,  # images further apart (mean cosine 0.7 instead of 0.94)
    }
    return ChineseCLIPConfig(text_config=text, vision_config=vision, projection_dim=projection_dim)


def build_tiny_chinese_clip(out_dir: str, seed: int = 0, image_size: int = 32) -> str:
    """Write the tiny checkpoint to ``out_dir`` (idempotent for one seed) and return ``out_dir``."""
    import torch
    from transformers import BertTokenizer, ChineseCLIPModel, ChineseCLIPProcessor
    from transformers.models.chinese_clip.image_processing_pil_chinese_clip import ChineseCLIPImageProcessorPil

    os.makedirs(out_dir, exist_ok=True)
    vocab = os.path.join(out_dir, "vocab.txt")
    with open(vocab, "w", encoding="utf-8") as f:
        f.write("\n".join(_SPECIALS + _CJK) + "\n")
    tokenizer = BertTokenizer(vocab, do_lower_case=True, tokenize_chinese_chars=True)
    images = ChineseCLIPImageProcessorPil(
        size={"shortest_edge": image_size}, crop_size={"height": image_size, "width": image_size}
    )
    torch.manual_seed(seed)
    model = ChineseCLIPModel(tiny_config(len(tokenizer), image_size)).eval()
    model.save_pretrained(out_dir)
    ChineseCLIPProcessor(image_processor=images, tokenizer=tokenizer).save_pretrained(out_dir)
    return out_dir


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m hanyi.models.tiny_chinese_clip <out_dir>")
    print(build_tiny_chinese_clip(sys.argv[1]))
