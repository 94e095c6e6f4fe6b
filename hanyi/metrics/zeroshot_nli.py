"""Zero-shot NLI feature extraction, batched, with the semantics of Hugging Face's zero-shot pipeline.

VULCA (EMNLP 2025) §3.2 scores each critique against 38 labels by entailment. The released code [CODE] ran
``pipeline("zero-shot-classification", model="MoritzLaurer/mDeBERTa-v3-base-mnli-xnli")`` with the default
hypothesis template ``"This example is {}."``; the paper names "multilingual BART-large-mnli" and
``"This text is about L"`` [PAPER]. This module reproduces the pipeline's arithmetic on raw NLI logits:

* single-label (stance): softmax over the entailment logits of all candidate labels (scores sum to 1);
* multi-label (features, quality): per label, softmax over [contradiction, entailment]; neutral is ignored;
* premise-only truncation (``only_first``) to the tokenizer's ``model_max_length`` (512 for mDeBERTa).

Label ids are looked up by name in ``id2label`` (mDeBERTa: 0 = entailment; BART-MNLI: 2 = entailment). Instead of one
pipeline call per text and label set, all (text, label) pairs of all texts go through the model in fixed-size
batches. Heavy imports (torch, transformers) happen inside functions; a model is loaded once per process.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hanyi.logs import get_logger
from hanyi.metrics.device import scorer_device

log = get_logger(__name__)

DEFAULT_MODEL = "MoritzLaurer/mDeBERTa-v3-base-mnli-xnli"
DEFAULT_TEMPLATE = "This example is {}."
PAPER_TEMPLATE = "This text is about {}."
ENV_PREFIX = "HANYI_VULCA_NLI_"

#: ``logits_fn(premises, hypotheses) -> [[entailment, contradiction], ...]`` (one pair per input pair).
LogitsFn = Callable[[Sequence[str], Sequence[str]], Sequence[Sequence[float]]]


@dataclass(frozen=True)
class NLIConfig:
    """Which NLI model scores critiques, and how. ``from_env`` reads ``HANYI_VULCA_NLI_{MODEL,TEMPLATE,...}``."""

    model: str = DEFAULT_MODEL
    template: str = DEFAULT_TEMPLATE
    max_length: int | None = None  # None: the tokenizer's model_max_length, as the pipeline does
    batch_size: int = 32
    device: str = "cpu"

    @classmethod
    def from_env(cls, **overrides) -> NLIConfig:
        env = os.environ
        values = {
            "model": env.get(ENV_PREFIX + "MODEL") or DEFAULT_MODEL,
            "template": env.get(ENV_PREFIX + "TEMPLATE") or DEFAULT_TEMPLATE,
            "max_length": int(env[ENV_PREFIX + "MAX_LENGTH"]) if env.get(ENV_PREFIX + "MAX_LENGTH") else None,
            "batch_size": int(env.get(ENV_PREFIX + "BATCH_SIZE") or 32),
            "device": scorer_device(env.get(ENV_PREFIX + "DEVICE")),  # one rule: hanyi.metrics.device
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        if "{}" not in values["template"]:
            raise ValueError(f"NLI hypothesis template must contain '{{}}': {values['template']!r}")
        return cls(**values)


def label_ids(id2label: dict) -> tuple[int, int]:
    """(entailment id, contradiction id) looked up by name, never hard-coded.

    >>> label_ids({0: "entailment", 1: "neutral", 2: "contradiction"}), label_ids({"0": "CONTRADICTION", "2": "ENTAILMENT"})
    ((0, 2), (2, 0))
    """
    by_name = {str(name).lower(): int(idx) for idx, name in id2label.items()}
    entail = next((i for n, i in by_name.items() if n.startswith("entail")), None)
    contra = next((i for n, i in by_name.items() if n.startswith("contra")), None)
    if entail is None or contra is None:
        raise ValueError(f"NLI model config lacks entailment/contradiction labels: id2label={id2label}")
    return entail, contra


def single_label_scores(entail_logits: Sequence[float]) -> list[float]:
    """``multi_label=False``: softmax over the entailment logits of all candidate labels.

    >>> [round(p, 4) for p in single_label_scores([2.0, 0.0, 0.0])]
    [0.787, 0.1065, 0.1065]
    """
    top = max(entail_logits)
    exps = [math.exp(x - top) for x in entail_logits]
    total = sum(exps)
    return [e / total for e in exps]


def multi_label_score(entail_logit: float, contra_logit: float) -> float:
    """``multi_label=True``: P(entailment) from a softmax over [contradiction, entailment] of one label.

    >>> round(multi_label_score(1.0, -1.0), 4)
    0.8808
    """
    return 1.0 / (1.0 + math.exp(contra_logit - entail_logit))


def extract_features(
    texts: Sequence[str],
    logits_fn: LogitsFn,
    stance_labels: Sequence[str],
    feature_labels: Sequence[str],
    quality_labels: Sequence[str],
    template: str = DEFAULT_TEMPLATE,
) -> list[dict]:
    """Score every text against the three label sets with one batched NLI pass.

    Args:
        texts: premises (each stripped, as the code did).
        logits_fn: ``(premises, hypotheses) -> [[entail_logit, contra_logit], ...]``; see :func:`hf_logits_fn`.
        template: hypothesis template with ``{}`` for the label.

    Returns:
        per text ``{"stance": {label: p} (sums to 1), "stance_top1": [label, p], "features": {label: p},
        "quality": {label: p}}``. Ties in the stance keep the first label in ``stance_labels`` order.

    >>> fake = lambda premises, hyps: [[1.0 if "Genre" in h or "High" in h else 0.0, 0.0] for h in hyps]
    >>> out = extract_features(["a painting"], fake, ["High Praise", "Strong Negation"], ["Genre"], ["Clear Logic"])
    >>> out[0]["stance_top1"][0], round(out[0]["features"]["Genre"], 4), out[0]["quality"]["Clear Logic"]
    ('High Praise', 0.7311, 0.5)
    """
    labels = [*stance_labels, *feature_labels, *quality_labels]
    hypotheses = [template.format(label) for label in labels]
    premises = [t.strip() for t in texts for _ in labels]
    logits = list(logits_fn(premises, hypotheses * len(texts)))
    if len(logits) != len(premises):
        raise ValueError(f"NLI scorer returned {len(logits)} rows for {len(premises)} pairs")
    n_s, n_f = len(stance_labels), len(feature_labels)
    out = []
    for i in range(len(texts)):
        rows = logits[i * len(labels) : (i + 1) * len(labels)]
        stance = dict(zip(stance_labels, single_label_scores([r[0] for r in rows[:n_s]]), strict=True))
        top = max(stance_labels, key=lambda k: stance[k])
        multi = [multi_label_score(r[0], r[1]) for r in rows[n_s:]]
        out.append(
            {
                "stance": stance,
                "stance_top1": [top, stance[top]],
                "features": dict(zip(feature_labels, multi[:n_f], strict=True)),
                "quality": dict(zip(quality_labels, multi[n_f:], strict=True)),
            }
        )
    return out


class NLIUnavailable(RuntimeError):
    """The configured NLI model cannot be loaded (e.g. hub weights offline). The message says how to fix it."""


_LOAD_LOCK = threading.Lock()


def _load(model: str, device: str):
    """(tokenizer, model, (entail id, contra id)) or the :class:`NLIUnavailable` error; cached either way.

    lmms-eval runs ``process_results`` in threads; the lock makes the first load happen once.
    """
    with _LOAD_LOCK:
        return _load_unlocked(model, device)


@functools.lru_cache(maxsize=4)
def _load_unlocked(model: str, device: str):
    try:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(model)
        net = AutoModelForSequenceClassification.from_pretrained(model).to(device).eval()
    except Exception as exc:  # noqa: BLE001 - OSError offline, ValueError (bad config), ImportError...: reported once
        return NLIUnavailable(
            f"zero-shot NLI model {model!r} cannot be loaded ({type(exc).__name__}: {str(exc).splitlines()[0][:200]}). "
            f"Set {ENV_PREFIX}MODEL to a local copy of {DEFAULT_MODEL} (or another NLI checkpoint)."
        )
    return tokenizer, net, label_ids(net.config.id2label)


def pair_layout(tokenizer) -> tuple | None:
    """How ``tokenizer`` wraps a (premise, hypothesis) pair in special tokens, read off the tokenizer itself:
    ``(prefix ids, middle ids, suffix ids, (prefix types, A type, middle types, B type, suffix types))``, or ``None``
    when its pair encoding is not ``prefix + A + middle + B + suffix`` (then the tokenizer is called per batch).
    """
    a = tokenizer("painting", add_special_tokens=False)["input_ids"]
    b = tokenizer("example", add_special_tokens=False)["input_ids"]
    enc = tokenizer("painting", "example", return_token_type_ids=True)
    ids, tt = list(enc["input_ids"]), list(enc.get("token_type_ids") or [0] * len(enc["input_ids"]))
    for i in range(len(ids) - len(a) + 1):
        if ids[i : i + len(a)] != a:
            continue
        for j in range(i + len(a), len(ids) - len(b) + 1):
            if ids[j : j + len(b)] == b:
                k = j + len(b)
                return ids[:i], ids[i + len(a) : j], ids[k:], (tt[:i], tt[i], tt[i + len(a) : j], tt[j], tt[k:])
    return None


_REGISTERED: dict[str, LogitsFn] = {}


def register_logits_fn(name: str, fn: LogitsFn | None) -> None:
    """Serve ``HANYI_VULCA_NLI_MODEL=<name>`` from an in-process scorer ``fn`` instead of loading weights (``None``
    removes it). Used by tests (a deterministic fake through the real evaluator) and for custom scorers.

    >>> register_logits_fn("const-nli", lambda premises, hyps: [[0.0, 0.0]] * len(premises))
    >>> hf_logits_fn(NLIConfig(model="const-nli"))(["p"], ["h"])
    [[0.0, 0.0]]
    >>> register_logits_fn("const-nli", None)
    """
    if fn is None:
        _REGISTERED.pop(name, None)
    else:
        _REGISTERED[name] = fn


def hf_logits_fn(config: NLIConfig) -> LogitsFn:
    """A batched ``logits_fn`` over a transformers sequence classifier (loaded once per process).

    Raises :class:`NLIUnavailable` when the model cannot be loaded.
    """
    if config.model in _REGISTERED:
        return _REGISTERED[config.model]
    loaded = _load(config.model, config.device)
    if isinstance(loaded, NLIUnavailable):
        raise loaded
    tokenizer, net, (entail, contra) = loaded
    max_length = config.max_length or tokenizer.model_max_length
    if max_length is None or max_length > 100_000:  # tokenizers without a limit report a huge sentinel
        max_length = 512

    layout = pair_layout(tokenizer)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    with_types = "token_type_ids" in getattr(tokenizer, "model_input_names", ())
    checked = [layout is None]  # the first batch is checked against the tokenizer's own pair encoding

    def encode_ids(premises, hypotheses):
        """Input rows built from ids: each premise and hypothesis tokenized once (not once per pair), then cut
        ``only_first`` to ``max_length`` and wrapped in the tokenizer's own special tokens."""
        prem = {t: tokenizer(t, add_special_tokens=False)["input_ids"] for t in dict.fromkeys(premises)}
        hyp = {h: tokenizer(h, add_special_tokens=False)["input_ids"] for h in dict.fromkeys(hypotheses)}
        prefix, middle, suffix, types = layout
        n_special = len(prefix) + len(middle) + len(suffix)
        rows = []
        for p, h in zip(premises, hypotheses, strict=True):
            keep = max_length - n_special - len(hyp[h])
            if keep < 1:
                raise ValueError(f"hypothesis {h!r} leaves no room for the premise at max_length {max_length}")
            a, b = prem[p][:keep], hyp[h]
            ids = [*prefix, *a, *middle, *b, *suffix]
            tt = [*types[0], *[types[1]] * len(a), *types[2], *[types[3]] * len(b), *types[4]]
            rows.append((ids, tt))
        return rows

    def batch_tensors(rows):
        import torch

        width = max(len(ids) for ids, _ in rows)
        left = getattr(tokenizer, "padding_side", "right") == "left"

        def pad(seq, value):
            fill = [value] * (width - len(seq))
            return fill + seq if left else seq + fill

        enc = {
            "input_ids": torch.tensor([pad(ids, pad_id) for ids, _ in rows]),
            "attention_mask": torch.tensor([pad([1] * len(ids), 0) for ids, _ in rows]),
        }
        if with_types:
            enc["token_type_ids"] = torch.tensor([pad(tt, 0) for _, tt in rows])
        return enc

    def reference_batch(premises, hypotheses):
        return tokenizer(
            list(premises), list(hypotheses), truncation="only_first", max_length=max_length, padding=True,
            return_tensors="pt",
        )  # fmt: skip

    def run(premises, hypotheses):
        nonlocal layout
        import torch

        rows = encode_ids(premises, hypotheses) if layout is not None else None
        if rows is None:  # the tokenizer's own pair encoding, one call per batch (slower)
            order = sorted(range(len(premises)), key=lambda i: len(premises[i]))
        else:  # sort by token length, so each batch pads to its own longest row
            order = sorted(range(len(premises)), key=lambda i: len(rows[i][0]))
        out = []
        for start in range(0, len(order), config.batch_size):
            idx = order[start : start + config.batch_size]
            if rows is None:
                enc = reference_batch([premises[i] for i in idx], [hypotheses[i] for i in idx])
            else:
                enc = batch_tensors([rows[i] for i in idx])
                if not checked[0]:
                    checked[0] = True
                    ref = reference_batch([premises[i] for i in idx], [hypotheses[i] for i in idx])
                    if set(ref) != set(enc) or any(not torch.equal(ref[k], v) for k, v in enc.items()):
                        log.info("hanyi vulca: id-level pair encoding differs from %s; using its own", config.model)
                        layout, rows = None, None
                        return run(premises, hypotheses)
            with torch.inference_mode():
                logits = net(**{k: v.to(config.device) for k, v in enc.items()}).logits.float().cpu()
            out.extend(zip(idx, logits[:, [entail, contra]].tolist(), strict=True))
        out.sort(key=lambda r: r[0])
        return [r[1] for r in out]

    return run


def try_logits_fn(config: NLIConfig) -> LogitsFn | None:
    """:func:`hf_logits_fn`, or ``None`` after one warning per model when it cannot be loaded."""
    try:
        return hf_logits_fn(config)
    except NLIUnavailable as exc:
        _warn_once(str(exc))
        return None


@functools.lru_cache(maxsize=16)
def _warn_once(message: str) -> None:
    log.warning("hanyi vulca: %s NLI-derived metrics are not emitted.", message)
