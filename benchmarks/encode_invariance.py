"""Is a string's encoding a function of the string alone? Bit-for-bit checks of unpadded same-length batches (CPU).

    .venv/bin/python benchmarks/encode_invariance.py [--threads 1,2] [--base] [--cost 400]

The aim is one process-wide cache of string encodings per backbone (BERTScore token embeddings, VULCA
sentence embeddings, NLI logits), shared by all tasks. A cache shared across tasks keeps every score independent of
which tasks run, and in which order, only if a string's outputs do not depend on what else is in its batch. Padding
is known to break that (docs/dev/performance.md); the proposal was to encode strings in batches of *identical token
length* (no padding) in a canonical order. This script tests that proposal on the tiny offline BERT of
``tests/fixtures/vulca/tiny_nli.py`` (2 layers, hidden 32) and, with ``--base``, on a random-weight model of
bert-base shape (12 layers, hidden 768, the tiny tokenizer), for three backbones:

* ``bertscore``: bert-score's encoder (``bert_score.utils.get_model`` at 2 layers; ``bert_encode`` hidden states);
* ``embed``: a SentenceTransformer over the same weights (mean pooling, L2-normalised), as the VULCA embedder;
* ``nli``: the sequence classifier's logits on (premise, ``"This example is Genre."``), as the VULCA NLI model.

For every token length with at least 33 distinct random strings (words of the fixture corpus), at each torch thread
count, it compares one string's output bit for bit (``torch.equal``):

* ``repeat``: alone, twice (the control: the same call must give the same bits);
* ``batch``: alone vs in a same-length batch of 2 vs of 17;
* ``position``: each of the same 17 strings one place earlier (the first moved last);
* ``companions``: in two same-length batches of 17 with different other strings, same position;
* ``padded``: alone vs padded next to a longer string (what bert-score and the NLI batches do now).

``--cost N`` also times encoding N distinct strings three ways with the bert-score encoder: bert-score's padded
batches of 64, same-length batches of up to 64, same-length batches of exactly 16 rows (a short group repeated to fill
the batch: one shape per length), and one string per call.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# this folder is not searched for packages (see benchmarks/full_scale.py)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]
sys.path.insert(0, os.path.join(HERE, "..", "tests", "fixtures", "vulca"))

CHECKS = ("repeat", "batch", "position", "companions", "padded")
HYPOTHESIS = "This example is Genre."


def random_strings(n: int, seed: int = 0, max_words: int = 14) -> list[str]:
    """``n`` distinct strings of 1..``max_words`` words drawn from the fixture's corpus (fixed seed)."""
    from tiny_nli import CORPUS

    words = " ".join(CORPUS).split()
    rng, out = random.Random(seed), {}
    while len(out) < n:
        out[" ".join(rng.choice(words) for _ in range(rng.randint(1, max_words)))] = None
    return list(out)


def build_base(tiny: str, out_dir: str) -> str:
    """A random-weight BERT of bert-base shape with the tiny model's tokenizer (no download), saved once."""
    if os.path.isfile(os.path.join(out_dir, "config.json")):
        return out_dir
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(tiny)
    config = BertConfig(vocab_size=len(tok), num_labels=3, id2label={0: "entailment", 1: "neutral", 2: "contradiction"})
    BertForSequenceClassification(config).eval().save_pretrained(out_dir)
    tok.save_pretrained(out_dir)
    return out_dir


class Backbone:
    """``encode(rows)``: rows of ``(input_ids, token_type_ids)``, padded to the longest with mask 0; one output per
    row (token vectors cut to the row's length, or one vector)."""

    def __init__(self, kind: str, path: str):
        import torch

        self.kind, self.torch = kind, torch
        if kind == "bertscore":
            from bert_score.utils import bert_encode, get_model, get_tokenizer

            self.tok, self.net, self.fwd = get_tokenizer(path), get_model(path, 2), bert_encode
        elif kind == "embed":
            from sentence_transformers import SentenceTransformer

            self.net = SentenceTransformer(path, device="cpu")
            self.tok = self.net.tokenizer
        else:
            from transformers import AutoModelForSequenceClassification, AutoTokenizer

            self.tok = AutoTokenizer.from_pretrained(path)
            self.net = AutoModelForSequenceClassification.from_pretrained(path).eval()

    def ids(self, text: str) -> tuple[list[int], list[int]]:
        if self.kind == "bertscore":
            from bert_score.utils import sent_encode

            ids = sent_encode(self.tok, text)
            return ids, [0] * len(ids)
        enc = self.tok(text, HYPOTHESIS) if self.kind == "nli" else self.tok(text)
        return list(enc["input_ids"]), list(enc.get("token_type_ids") or [0] * len(enc["input_ids"]))

    def encode(self, rows):
        torch = self.torch
        width = max(len(i) for i, _ in rows)
        ids = torch.tensor([i + [self.tok.pad_token_id] * (width - len(i)) for i, _ in rows])
        types = torch.tensor([t + [0] * (width - len(t)) for _, t in rows])
        mask = torch.tensor([[1] * len(i) + [0] * (width - len(i)) for i, _ in rows])
        with torch.inference_mode():
            if self.kind == "bertscore":
                out = self.fwd(self.net, ids, attention_mask=mask)
                return [out[r, : len(rows[r][0])].clone() for r in range(len(rows))]
            if self.kind == "embed":
                feats = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
                out = torch.nn.functional.normalize(self.net(feats)["sentence_embedding"], dim=-1)
            else:
                out = self.net(input_ids=ids, attention_mask=mask, token_type_ids=types).logits
        return [out[r].clone() for r in range(len(rows))]


def check(backbone: Backbone, strings: list[str]) -> dict:
    """Per check: ``[mismatching strings, strings compared, largest |difference|]`` over all lengths with >= 33."""
    torch = backbone.torch
    by_len: dict[int, list] = {}
    for s in strings:
        row = backbone.ids(s)
        by_len.setdefault(len(row[0]), []).append(row)
    longest = max((rows[0] for rows in by_len.values()), key=lambda r: len(r[0]))
    stats = {c: [0, 0, 0.0] for c in CHECKS}

    def same(check_name, a, b):
        st = stats[check_name]
        st[1] += 1
        if not torch.equal(a, b):
            st[0] += 1
            st[2] = max(st[2], (a.float() - b.float()).abs().max().item())

    for length, rows in sorted(by_len.items()):
        if len(rows) < 33 or length >= len(longest[0]):
            continue
        rows = sorted(rows)[:33]
        alone = [backbone.encode([r])[0] for r in rows[:17]]
        b2, b17 = backbone.encode(rows[:2]), backbone.encode(rows[:17])
        b17_rot = backbone.encode(rows[1:17] + rows[:1])  # every string one place earlier, the first last
        other = backbone.encode([rows[0], *rows[17:33]])
        padded = backbone.encode([rows[0], longest])
        same("repeat", alone[0], backbone.encode([rows[0]])[0])
        for i in range(17):
            same("batch", alone[i], b17[i])
        for i in range(2):
            same("batch", alone[i], b2[i])
        for i in range(17):
            same("position", b17[i], b17_rot[(i - 1) % 17])
        same("companions", b17[0], other[0])
        same("padded", alone[0], padded[0])
    return stats


def cost(path: str, n: int) -> dict:
    """Seconds to encode ``n`` distinct strings with the bert-score encoder, each way of :data:`__doc__` (best of 3);
    bert-score's own order for the padded batches (word count, descending)."""
    bb = Backbone("bertscore", path)
    strings = random_strings(n, seed=1, max_words=30)
    rows = {s: bb.ids(s) for s in strings}
    padded_order = sorted(strings, key=lambda s: len(s.split(" ")), reverse=True)
    same_len = sorted(rows.values(), key=lambda r: (len(r[0]), r[0]))
    groups: dict[int, list] = {}
    for r in same_len:
        groups.setdefault(len(r[0]), []).append(r)
    ways = {
        "padded batches of 64": lambda: [
            bb.encode([rows[s] for s in padded_order[i : i + 64]]) for i in range(0, n, 64)
        ],
        "same-length batches of <= 64": lambda: [
            bb.encode(g[i : i + 64]) for g in groups.values() for i in range(0, len(g), 64)
        ],
        "same-length batches of exactly 16 (filler rows)": lambda: [
            bb.encode((g[i : i + 16] * 16)[:16]) for g in groups.values() for i in range(0, len(g), 16)
        ],
        "one string per call": lambda: [bb.encode([r]) for r in same_len],
    }
    out = {}
    for name, fn in ways.items():
        best = []
        for _ in range(3):
            t = time.perf_counter()
            fn()
            best.append(time.perf_counter() - t)
        out[name] = min(best)
    return out


def main() -> None:
    import torch
    from tiny_nli import build_tiny_nli

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default=f"1,{torch.get_num_threads()}", help="torch thread counts to try ('': none)")
    ap.add_argument("--strings", type=int, default=3000)
    ap.add_argument("--base", action="store_true", help="also a random-weight bert-base-shaped model")
    ap.add_argument("--cost", type=int, default=0, help="time encoding this many distinct strings four ways")
    args = ap.parse_args()
    default_threads = torch.get_num_threads()
    root = os.path.join(tempfile.gettempdir(), "hanyi_encode_invariance")
    models = {"tiny (2 layers, hidden 32)": build_tiny_nli(os.path.join(root, "tiny"))}
    if args.base:
        base = build_base(models["tiny (2 layers, hidden 32)"], os.path.join(root, "base"))
        models["bert-base shape (12 layers, hidden 768)"] = base
    threads = [int(x) for x in args.threads.split(",") if x.strip()]  # none: only the timings
    strings = random_strings(args.strings)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads by default; {len(strings)} random strings")
    print("cells: strings whose output differs bit for bit / strings compared (largest |difference|)")
    for label, path in models.items():
        for kind in ("bertscore", "embed", "nli") if threads else ():
            bb = Backbone(kind, path)
            for n in threads:
                torch.set_num_threads(n)
                stats = check(bb, strings)
                cells = "  ".join(f"{c} {d}/{t} ({m:.1e})" for c, (d, t, m) in stats.items())
                print(f"{label:<40} {kind:<10} threads={n}: {cells}")
        torch.set_num_threads(threads[-1] if threads else default_threads)
        if args.cost:
            secs = cost(path, args.cost)
            print(
                f"{label}: encoding {args.cost} distinct strings: "
                + ", ".join(f"{k} {v:.2f} s" for k, v in secs.items())
            )


if __name__ == "__main__":
    main()
