"""Build a tiny random-weight Qwen2.5-VL checkpoint offline, for smoke runs through lmms-eval's own ``qwen2_5_vl``.

``python -m hanyi.models.tiny_qwen2_5_vl <out_dir>`` writes a ~1 MB checkpoint (config, safetensors, a byte-level BPE
tokenizer trained on the spot with CJK text and Qwen's chat special tokens, a Qwen2-VL image processor and a ChatML
template) that ``--model qwen2_5_vl --model_args pretrained=<out_dir>,device=cpu,device_map=cpu`` loads with no
network where torchvision is installed. Its answers are noise: it exercises the plumbing (chat messages, the image
fetch and resize of qwen_vl_utils, the image-token expansion, generation, scoring), not quality.

Building needs no torchvision; running through lmms-eval's ``qwen2_5_vl`` does (docs/install.md, the table of
checked wrappers): ``qwen_vl_utils`` imports torchvision at import time, and transformers 5's Qwen2.5-VL processor
requires its torchvision-backed video processor even for images. So this writes the processor's parts as files (the
tokenizer, the image processor's config, a video processor config with the same patch sizes, the chat template and
``processor_config.json``) rather than constructing the processor; where torchvision is installed,
``AutoProcessor.from_pretrained`` assembles them.
"""

from __future__ import annotations

import json
import os
import random
import sys

#: Qwen's ChatML framing; an image part becomes <|vision_start|><|image_pad|><|vision_end|>, which the processor
#: expands to one pad token per merged patch (as Qwen2.5-VL's own template does).
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'image' or 'image' in part %}"
    "<|vision_start|><|image_pad|><|vision_end|>{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
)

_CORPUS = (
    "谐音画谜：年年有余。马上封侯。这幅图的含义是什么？请直接回答选项字母。",
    "This is a traditional Chinese artwork. Answer with the letter A, B, C, D, E, F or G.",
    '框出图中“唢呐”的位置 [{"bbox_2d": [12, 340, 560, 780], "label": "唢呐"}]',
    "What is the pun in this image? Explain the double meaning.",
)


def _tokenizer(vocab_size: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    rng = random.Random(0)
    corpus = list(_CORPUS) * 20
    corpus += ["".join(chr(0x4E00 + rng.randrange(3000)) for _ in range(24)) for _ in range(200)]
    tok = Tokenizer(models.BPE(unk_token="<|endoftext|>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(corpus, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<|endoftext|>",
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        extra_special_tokens={"image_token": "<|image_pad|>", "video_token": "<|video_pad|>"},
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def _write_json(path: str, data: dict) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)


def build_tiny_qwen2_5_vl(out_dir: str, seed: int = 0, vocab_size: int = 2000) -> str:
    """Write the tiny checkpoint to ``out_dir`` (idempotent: an existing complete build is reused). Returns the path.

    Sizes: vision tower 2 blocks of width 32 (patch 14, 2x2 merge, window attention in block 0, full in block 1),
    language model 2 layers of width 32 with multimodal RoPE sections summing to half the head dim.
    """
    marker = os.path.join(out_dir, "hanyi_tiny.json")
    if os.path.isfile(marker):
        return out_dir
    import torch
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    torch.manual_seed(seed)
    tokenizer = _tokenizer(vocab_size)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    head_dim = 16  # hidden 32 / 2 heads; mrope sections (t, h, w) cover head_dim / 2 rotary frequencies
    config = Qwen2_5_VLConfig(
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "num_key_value_heads": 2,
            "max_position_embeddings": 4096,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]},
            "bos_token_id": ids["<|endoftext|>"],
            "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
            "tie_word_embeddings": False,
        },
        vision_config={
            "depth": 2,
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_heads": 2,
            "out_hidden_size": 32,
            "fullatt_block_indexes": [1],
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "window_size": 112,
        },
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    assert sum(config.text_config.rope_parameters["mrope_section"]) * 2 == head_dim
    model = Qwen2_5_VLForConditionalGeneration(config).eval()
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    # The wrapper passes its own min/max_pixels to the processor; these are the processor's defaults.
    Qwen2VLImageProcessorPil().save_pretrained(out_dir)
    sizes = {"patch_size": 14, "temporal_patch_size": 2, "merge_size": 2}
    _write_json(
        os.path.join(out_dir, "video_preprocessor_config.json"),
        {"video_processor_type": "Qwen2VLVideoProcessor", **sizes},
    )
    _write_json(os.path.join(out_dir, "processor_config.json"), {"processor_class": "Qwen2_5_VLProcessor"})
    with open(os.path.join(out_dir, "chat_template.jinja"), "w", encoding="utf-8") as f:
        f.write(CHAT_TEMPLATE)
    with open(marker, "w") as f:
        json.dump({"params": sum(p.numel() for p in model.parameters()), "seed": seed}, f)
    return out_dir


if __name__ == "__main__":
    print(build_tiny_qwen2_5_vl(sys.argv[1] if len(sys.argv) > 1 else ".cache/tiny_qwen2_5_vl"))
