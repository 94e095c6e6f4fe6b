"""The five groups at full size with the paper's backbones (random weights): hanyi's own ms per doc.

    .venv/bin/python benchmarks/paper_backbones.py [--only punrebus,cii,unpie,cvlue,vulca] [--device cpu|cuda]
        [--models DIR] [--workers 4]

1. Builds each paper backbone's architecture from its config (written below from the model cards; no download) with
   random weights, and a WordPiece tokenizer of the model's vocabulary size trained on the benchmarks' own texts
   (padded with unused entries to the exact size), into ``--models`` (default: a temporary folder):
   ``bert-base-multilingual-cased`` (UNPIE BERTScore, layer 9), ``mDeBERTa-v3-base-mnli-xnli`` (VULCA NLI; its
   SentencePiece tokenizer is stood in for by a WordPiece one of the same size), ``bge-large-zh-v1.5`` (VULCA
   embedder, CLS pooling) and ``all-MiniLM-L6-v2`` (Pun Rebus S_Sim, mean pooling). Random weights cost what trained
   ones cost: the scores are noise, the time is the architecture's.
2. Runs ``benchmarks/full_scale.py --parts table`` with these backbones (``HANYI_SCORER_DEVICE=--device``) and prints,
   per benchmark and phase, milliseconds per doc of hanyi's own work: loading (datasets + ``process_docs`` checks),
   building requests, scoring (filters + ``process_results``, the backbones included) and aggregation (their sum is
   the total); the replay model's time is the model's, not hanyi's, and is left out, as is ``other`` (lmms-eval's
   own work between the phases, printed beside). Then each backbone's seconds, and the budget line:
   1.5 ms per doc (1 % of a fast engine's 150 ms per doc).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

os.environ.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]
GROUPS = ("punrebus", "cii", "unpie", "cvlue", "vulca")
BUDGET_MS = 1.5
_BERT = {"hidden_act": "gelu", "max_position_embeddings": 512, "type_vocab_size": 2, "layer_norm_eps": 1e-12}
#: name -> (transformers model type, config (from the model card's config.json), tokenizer vocabulary size, role)
BACKBONES = {
    "bert-base-multilingual-cased": ("bert", {**_BERT, "vocab_size": 119547, "hidden_size": 768,
        "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072}, 119547, "bertscore"),
    "mDeBERTa-v3-base-mnli-xnli": ("deberta-v2", {"vocab_size": 251000, "hidden_size": 768, "num_hidden_layers": 12,
        "num_attention_heads": 12, "intermediate_size": 3072, "hidden_act": "gelu", "max_position_embeddings": 512,
        "type_vocab_size": 0, "relative_attention": True, "position_buckets": 256, "norm_rel_ebd": "layer_norm",
        "share_att_key": True, "pos_att_type": ["p2c", "c2p"], "position_biased_input": False,
        "max_relative_positions": -1, "layer_norm_eps": 1e-7,
        "id2label": {0: "entailment", 1: "neutral", 2: "contradiction"}}, 250102, "nli"),
    "bge-large-zh-v1.5": ("bert", {**_BERT, "vocab_size": 21128, "hidden_size": 1024, "num_hidden_layers": 24,
        "num_attention_heads": 16, "intermediate_size": 4096}, 21128, "embed_cls"),
    "all-MiniLM-L6-v2": ("bert", {**_BERT, "vocab_size": 30522, "hidden_size": 384, "num_hidden_layers": 6,
        "num_attention_heads": 12, "intermediate_size": 1536}, 30522, "embed_mean"),
}  # fmt: skip
#: backbone -> the settings that select it
ENV = {
    "bert-base-multilingual-cased": {"HANYI_UNPIE_BERTSCORE_MODEL": "{}", "HANYI_UNPIE_BERTSCORE_LAYERS": "9"},
    "mDeBERTa-v3-base-mnli-xnli": {"HANYI_VULCA_NLI_MODEL": "{}"},
    "bge-large-zh-v1.5": {"HANYI_VULCA_EMBED_MODEL": "{}"},
    "all-MiniLM-L6-v2": {"HANYI_PUNREBUS_SBERT_MODEL": "{}"},
}


def corpus(root: str) -> list[str]:
    """Every text cell of the built full-size datasets (the tokenizers' training text)."""
    import pyarrow.parquet as pq

    texts = []
    for path in sorted(glob.glob(os.path.join(root, "*", "**", "*.parquet"), recursive=True)):
        table = pq.read_table(path)
        for column in table.column_names:
            values = table.column(column).to_pylist()
            texts += [v for v in values if isinstance(v, str)]
            texts += [s for v in values if isinstance(v, list) for s in v if isinstance(s, str)]
    return texts


def wordpiece(texts: list[str], size: int, folder: str, lowercase: bool = False):
    """A BERT fast tokenizer with exactly ``size`` entries: WordPiece trained on ``texts``, then ``[unused{i}]``."""
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertTokenizerFast

    trainer = BertWordPieceTokenizer(lowercase=lowercase, strip_accents=False if not lowercase else None)
    trainer.train_from_iterator(texts, vocab_size=min(size, 30000), min_frequency=1, show_progress=False)
    vocab = sorted(trainer.get_vocab().items(), key=lambda kv: kv[1])
    tokens = [t for t, _ in vocab][:size]
    tokens += [f"[unused{i}]" for i in range(size - len(tokens))]
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(tokens) + "\n")
    return BertTokenizerFast(os.path.join(folder, "vocab.txt"), do_lower_case=lowercase, model_max_length=512)


def build(name: str, folder: str, texts: list[str]) -> str:
    """``folder/name``: the architecture with random weights (seed 0) and its tokenizer; reused when there."""
    import torch
    from transformers import AutoConfig, AutoModel, AutoModelForSequenceClassification

    path = os.path.join(folder, name)
    if os.path.exists(os.path.join(path, ".done")):
        return path
    kind, config, vocab, role = BACKBONES[name]
    torch.manual_seed(0)
    tokenizer = wordpiece(texts, vocab, os.path.join(path, "tok"))
    cfg = AutoConfig.for_model(kind, **config)
    if role == "nli":
        tokenizer.model_input_names = ["input_ids", "attention_mask"]
        AutoModelForSequenceClassification.from_config(cfg).save_pretrained(path)
        tokenizer.save_pretrained(path)
    elif role == "bertscore":
        AutoModel.from_config(cfg).save_pretrained(path)
        tokenizer.save_pretrained(path)
    else:
        from sentence_transformers import SentenceTransformer, models

        hf = os.path.join(path, "hf")
        AutoModel.from_config(cfg).save_pretrained(hf)
        tokenizer.save_pretrained(hf)
        module = models.Transformer(hf, max_seq_length=512)
        pooling = models.Pooling(config["hidden_size"], pooling_mode="cls" if role == "embed_cls" else "mean")
        SentenceTransformer(modules=[module, pooling, models.Normalize()], device="cpu").save(path)
    open(os.path.join(path, ".done"), "w").close()
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(GROUPS))
    ap.add_argument("--device", default="cpu", help="HANYI_SCORER_DEVICE for the backbones (cpu, cuda)")
    ap.add_argument("--models", default="", help="folder for the built backbones (reused; default: a temp folder)")
    ap.add_argument("--workers", type=int, default=4, help="lmms-eval process_docs_parallel (its default: 4)")
    args = ap.parse_args()

    from hanyi.data.build_samples import FULL_SIZES, build_full, full_root

    sizes = {**FULL_SIZES, "vulca": min(FULL_SIZES["vulca"], 12)}
    t = time.perf_counter()
    build_full(GROUPS, full_root(), sizes)
    texts = corpus(full_root())
    folder = args.models or tempfile.mkdtemp(prefix="hanyi-paper-backbones-")
    env = dict(os.environ, HANYI_SCORER_DEVICE=args.device, HANYI_FULL_SCALE_BACKBONE_CHECK="0")
    for name in BACKBONES:
        path = build(name, folder, texts)
        env.update({k: v.format(path) for k, v in ENV[name].items()})
    print(f"backbones built in {time.perf_counter() - t:.0f} s under {folder} ({len(texts)} training texts)")
    print(f"device {args.device}; {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.2f}")
    cmd = [sys.executable, os.path.join(HERE, "full_scale.py"), "--parts", "table", "--only", args.only]
    proc = subprocess.run([*cmd, "--workers", str(args.workers)], env=env, capture_output=True, text=True)
    raw = [line.split(": ", 1)[1] for line in proc.stdout.splitlines() if line.startswith("raw figures: ")]
    if proc.returncode or not raw:
        sys.exit(f"full_scale.py failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    with open(raw[0]) as f:
        results = json.load(f)
    phases = ("load", "requests", "process_results", "aggregation", "other")
    print(f"\nms per doc of hanyi's own work (replay model excluded; budget {BUDGET_MS} ms per doc)")
    print(f"{'benchmark':<10}{'docs':>7}" + "".join(f"{p[:12]:>14}" for p in phases) + f"{'total':>10}{'budget':>9}")
    for case in args.only.split(","):
        r = results.get(case)
        if not r:
            continue
        ms = {p: 1000 * r["phases"].get(p, 0.0) / max(r["docs"], 1) for p in phases}
        total = sum(v for p, v in ms.items() if p != "other")  # other: lmms-eval's own work between the phases
        print(
            f"{case:<10}{r['docs']:>7}" + "".join(f"{ms[p]:>14.2f}" for p in phases)
            + f"{total:>10.2f}{total / BUDGET_MS:>8.1f}x"
        )  # fmt: skip
        for backbone, b in r.get("backbones", {}).items():
            print(
                f"    {backbone}: {b['in_run_s']:.1f} s in the run ({1000 * b['in_run_s'] / max(r['docs'], 1):.2f} ms "
                f"per doc), {b['calls']} calls, {b['distinct']} distinct inputs"
            )
    print(
        "(process_results includes the filters, so each backbone's batched pass; load includes the image checks; "
        "other: lmms-eval's own work between the phases, not in the total)"
    )


if __name__ == "__main__":
    main()
