"""Build a tiny random-weight LLaVA checkpoint offline, for smoke runs through lmms-eval's own ``llava_hf``.

``python -m hanyi.models.tiny_llava <out_dir>`` writes a ~1 MB checkpoint (config, safetensors, a byte-level BPE
tokenizer trained on the spot with CJK text, a CLIP image processor and a chat template) that
``--model llava_hf --model_args pretrained=<out_dir>,device_map=cpu,dtype=float32`` loads with no network.
Its answers are noise: it exercises the plumbing (prompting, images, generation, scoring), not quality.
"""

from __future__ import annotations

import json
import os
import random
import sys

CHAT_TEMPLATE = (
    "{% for message in messages %}{{ message['role'] }}: "
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'image' %}<image>{% elif part['type'] == 'text' %}"
    "{{ part['text'] }}{% endif %}{% endfor %}{% endif %}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)

_CORPUS = (
    "谐音画谜：年年有余。马上封侯。这幅图的含义是什么？请直接回答选项字母。",
    "This is a traditional Chinese artwork. Answer with the letter A, B, C, D, E, F or G.",
    "图中的物体位于哪里？请给出边界框坐标 [x1, y1, x2, y2]。",
    "What is the pun in this image? Explain the double meaning.",
)


def _tokenizer(vocab_size: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    rng = random.Random(0)
    corpus = list(_CORPUS) * 20
    corpus += ["".join(chr(0x4E00 + rng.randrange(3000)) for _ in range(24)) for _ in range(200)]
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<unk>", "<s>", "</s>", "<pad>", "<image>"]
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(corpus, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        extra_special_tokens={"image_token": "<image>"},
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def tiny_text_config(tokenizer):
    """The tiny Llama language model shared by the tiny LLaVA and the tiny causal LM (2 layers, width 32)."""
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )


def build_tiny_llava(out_dir: str, seed: int = 0, vocab_size: int = 2000) -> str:
    """Write the tiny checkpoint to ``out_dir`` (idempotent: an existing complete build is reused). Returns the path."""
    marker = os.path.join(out_dir, "hanyi_tiny.json")
    if os.path.isfile(marker):
        return out_dir
    import torch
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    torch.manual_seed(seed)
    tokenizer = _tokenizer(vocab_size)
    image_token_id = tokenizer.convert_tokens_to_ids("<image>")
    vision = CLIPVisionConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=32,
        patch_size=8,
        projection_dim=32,
    )
    text = tiny_text_config(tokenizer)
    config = LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_index=image_token_id,
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    model = LlavaForConditionalGeneration(config).eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    image_processor = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=8,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=CHAT_TEMPLATE,
    )
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir)
    processor.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    with open(marker, "w") as f:
        json.dump({"params": sum(p.numel() for p in model.parameters()), "seed": seed}, f)
    return out_dir


if __name__ == "__main__":
    print(build_tiny_llava(sys.argv[1] if len(sys.argv) > 1 else ".cache/tiny_llava"))
