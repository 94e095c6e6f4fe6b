"""Build a tiny random-weight causal LM (Llama architecture) offline, for smoke runs through lm-eval's ``hf`` model.

``python -m hanyi.models.tiny_causal_lm <out_dir>`` writes a checkpoint of well under 1 MB (config, safetensors, and
the same on-the-spot byte-level BPE tokenizer with CJK merges as :mod:`hanyi.models.tiny_llava`) that
``lm_eval --model hf --model_args pretrained=<out_dir>,dtype=float32 --device cpu`` loads with no network.
Its answers and likelihoods are noise: it exercises the plumbing (prompting, generation, likelihood ranking,
scoring), not quality.
"""

from __future__ import annotations

import json
import os
import sys

from hanyi.models.tiny_llava import _tokenizer, tiny_text_config


def build_tiny_causal_lm(out_dir: str, seed: int = 0, vocab_size: int = 2000) -> str:
    """Write the tiny checkpoint to ``out_dir`` (idempotent: an existing complete build is reused). Returns the path."""
    marker = os.path.join(out_dir, "hanyi_tiny.json")
    if os.path.isfile(marker):
        return out_dir
    import torch
    from transformers import LlamaForCausalLM

    torch.manual_seed(seed)
    tokenizer = _tokenizer(vocab_size)
    config = tiny_text_config(tokenizer)
    model = LlamaForCausalLM(config).eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    params = sum(p.numel() for p in model.parameters())
    with open(marker, "w", encoding="utf-8") as f:
        json.dump({"kind": "llama-causal-lm", "seed": seed, "params": params}, f)
    return out_dir


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m hanyi.models.tiny_causal_lm <out_dir>")
    print(build_tiny_causal_lm(sys.argv[1]))
