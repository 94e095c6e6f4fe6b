"""Where a run's numbers come from, per task, read from what lmms-eval 0.7.3 keeps, and whether they compare with a
paper's.

lmms-eval writes, for every task, its fully resolved config (``configs[task]``: ``dataset_path`` after hanyi's
:mod:`hanyi.data.sources` resolved it, ``dataset_kwargs``, ``metadata``, the prompt kwargs), ``n-samples`` and
``config.limit`` into ``*_results.json``, and every scored doc into ``*_samples_<task>.jsonl`` (with
``--log_samples``): the filtered response and every item ``process_results`` returned, which for hanyi's metrics
carries the scorer backend that ran (``lemmatizer``, ``meteor_matcher``, ...). :func:`task_provenance` reads that
record back into one dict per task, so ``hanyi report`` and ``hanyi submit`` see the same facts:

``data_source``
    ``{"kind": "sample"}`` for the bundled synthetic sample, ``{"kind": "prepared", "path", "content_hash"}`` for a
    directory written by ``hanyi prepare`` (sha256 over its file names and bytes), ``{"kind": "hub", "hub_id",
    "revision"}`` for a hub dataset.
``scorer_backends``
    ``{field: [values seen]}`` from :func:`scorer_backends` (the one place to rewire to the resolver API).
``judge_model``, ``limit``, ``n_original``, ``n_effective``
    as recorded by lmms-eval.
``generation_failures``
    logged responses that are ``None`` or empty (``None`` when the run has no sample log: unknown, not zero).
``n_unscored``
    docs loaded and sent but left out of every score (:func:`unscored_docs`: a UNPIE caption task's doc without a
    caption, a doc whose image did not resolve); the doc count compared with a paper's is ``n_effective`` minus it.
``shortlist``
    for a re-ranking task (``dataset_name`` ending in ``_rerank``, CVLUE ITR), the stage-1 shortlist it re-ranked as
    ``hanyi prepare`` recorded it in the prepared data's ``hanyi_build.json`` (``itr_retriever``: origin, retriever
    id, revision, K, embedding hash, shortlist hash, stage-1 metrics); ``None`` when not recorded. Two runs whose
    shortlists differ (:func:`shortlist_id`) are not comparable with each other (``hanyi.report.retriever``).

:func:`comparability` turns a task's provenance and one paper anchor row into ``(comparable, reasons)``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re

from hanyi.data.sources import SAMPLE_DIR
from hanyi.results import samples

#: Sample-log fields that name the scorer backend that ran, and which of our metrics each one decides.
#: ``None`` = every metric of the task.
BACKEND_FIELDS: dict[str, tuple[str, ...] | None] = {
    "lemmatizer": ("element_abs", "element_abs_capped"),
    "meteor_matcher": ("meteor",),
    "embedder": None,
    "nli_model": None,
    "scorer_backend": None,
}
#: Backend values that are a fallback, not the paper's scorer.
FALLBACK_BACKENDS = frozenset({"rule_fallback", "exact+stem"})
#: Metric-name endings that mark a fallback or robust key (never the paper's computation).
FALLBACK_SUFFIXES = ("_robust", "_rule_lemma", "_exact_stem", "_chrf", "_fallback")
#: Metric-name endings of a key computed with a model, judge or embedder that is not the paper's.
CUSTOM_SUFFIXES = ("_custom_model", "_custom_judge")
#: Logged per-doc flags of a doc that was loaded and sent but left out of every score.
UNSCORED_FLAGS = ("caption_missing", "image_unresolved")
#: (task prefix, metric, what the paper leaves unspecified and the choice we made): a paper-named key whose value
#: depends on a choice the paper does not state is never comparable (docs/unpie.md, "Metrics").
UNSPECIFIED = (
    ("unpie_grounding", "exact_match", "the surface-match normalisation (ours: lowercase, NFKC, edge punctuation)"),
    ("unpie_disambiguation", "disamb_acc_bertscore", "the BERTScore variant (ours: mBERT layer 9, F1, no idf, no baseline rescaling)"),
    ("unpie_reconstruction", "bleu4", "the BLEU-4 implementation (ours: sacrebleu corpus BLEU, 13a tokenizer)"),
    ("unpie_reconstruction", "meteor", "the METEOR tokenisation (ours: NLTK METEOR on lowercased \\w+ / punctuation tokens)"),
)  # fmt: skip

#: (task prefix, metric prefixes, paper checkpoint) of the paper keys computed with a neural checkpoint: where
#: hanyi.backbones.KNOWN_FINGERPRINTS has no fingerprint of it, the run's copy is the paper's by name only.
CHECKPOINTS = (
    ("unpie_disambiguation", ("disamb_acc_bertscore",), "bert-base-multilingual-cased"),
    ("punrebus_elements", ("element_sim",), "all-MiniLM-L6-v2"),
    ("vulca", ("expert_alignment", "profile_", "primary_profile_rate_", "feat_", "qual_", "feature_profile"),
     "mDeBERTa-v3-base-mnli-xnli"),
    ("vulca", ("sem_",), "bge-large-zh-v1.5"),
)  # fmt: skip


def _has_suffix(metric: str, suffixes: tuple[str, ...]) -> bool:
    """Whether ``metric`` carries one of ``suffixes`` as a whole name part, at its end or before a split or variant
    part (``correct_custom_judge_homo``, ``meteor_exact_stem_robust``).

    >>> _has_suffix("correct_custom_judge_homo", CUSTOM_SUFFIXES), _has_suffix("acc_robustness", FALLBACK_SUFFIXES)
    (True, False)
    """
    return any(f"{s}_" in f"{metric}_" for s in suffixes)


def unscored_docs(task_results: dict | None, samples: list[dict] | None) -> int:
    """Docs loaded but left out of every score: from the sample log (a doc's logged ``caption_missing`` or
    ``image_unresolved`` flag, at top level or in an item), else the emitted counts of the same names.

    >>> unscored_docs(None, [{"caption_missing": 1.0}, {"exact_match": {"caption_missing": True}}, {"acc": {}}])
    2
    """
    if samples is not None:
        parts = ([s, *(v for v in s.values() if isinstance(v, dict))] for s in samples)
        return sum(1 for doc in parts if any(part.get(f) for part in doc for f in UNSCORED_FLAGS))
    counts = (v for k, v in (task_results or {}).items() if k.split(",")[0] in UNSCORED_FLAGS)
    return int(sum(v for v in counts if isinstance(v, (int, float)) and v == v))


def classify_source(dataset_path: str | None, dataset_kwargs: dict | None = None) -> dict:
    """The kind of data a task read, from the ``dataset_path`` lmms-eval recorded.

    >>> classify_source(os.path.join(SAMPLE_DIR, "cii"))["kind"]
    'sample'
    >>> classify_source("m-a-p/CII-Bench", {"revision": "abc"})
    {'kind': 'hub', 'hub_id': 'm-a-p/CII-Bench', 'revision': 'abc'}
    >>> classify_source(None)
    {'kind': 'unknown'}
    """
    if not dataset_path:
        return {"kind": "unknown"}
    path = str(dataset_path)
    sample_root = os.path.realpath(SAMPLE_DIR)
    if os.path.realpath(path).startswith(sample_root + os.sep) or "/hanyi/data/sample/" in path.replace(os.sep, "/"):
        return {"kind": "sample", "path": path}
    if os.path.isdir(path):
        return {"kind": "prepared", "path": path, "content_hash": directory_hash(path)}
    if os.path.isabs(path) or path.startswith("."):
        return {"kind": "prepared", "path": path, "content_hash": None}  # gone since the run
    return {"kind": "hub", "hub_id": path, "revision": (dataset_kwargs or {}).get("revision")}


@functools.lru_cache(maxsize=32)
def directory_hash(path: str) -> str:
    """``sha256:<hex>`` over every file's relative path and bytes, in sorted order (hidden files skipped)."""
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(f for f in files if not f.startswith(".")):
            full = os.path.join(root, name)
            digest.update(os.path.relpath(full, path).encode("utf-8") + b"\0")
            with open(full, "rb") as f:
                while block := f.read(1 << 20):
                    digest.update(block)
    return "sha256:" + digest.hexdigest()


#: The manifest ``hanyi prepare`` writes beside a prepared dataset (:func:`hanyi.data.hubformat.write_hub_dataset`).
BUILD_MANIFEST = "hanyi_build.json"


def shortlist_record(config: dict, source: dict) -> dict | None:
    """The stage-1 shortlist record of a re-ranking task from its prepared data's manifest, or ``None``."""
    if not str(config.get("dataset_name") or "").endswith("_rerank") or not source.get("path"):
        return None
    path = os.path.join(str(source["path"]), BUILD_MANIFEST)
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f).get("itr_retriever")
    except (OSError, ValueError, AttributeError):
        return None
    return record if isinstance(record, dict) else None


def shortlist_id(prov: dict) -> tuple | None:
    """What makes two re-ranking runs comparable: ``(shortlist hash, K)``; ``None`` when not recorded.

    >>> shortlist_id({"shortlist": {"shortlist_sha256": "sha256:ab", "k": 16}})
    ('sha256:ab', 16)
    >>> shortlist_id({}) is None
    True
    """
    rec = prov.get("shortlist")
    return (rec.get("shortlist_sha256"), rec.get("k")) if isinstance(rec, dict) else None


def read_samples(samples_file: str | None) -> list[dict] | None:
    """The lines of one ``*_samples_<task>.jsonl``; ``None`` when there is no sample log or it is unreadable (the
    report says why in its position-bias notes, ``hanyi submit`` refuses it naming the line)."""
    if not samples_file or not os.path.exists(samples_file):
        return None
    try:
        return samples.read_samples(samples_file)
    except samples.SamplesFileError as exc:  # named, never skipped silently (as hanyi submit does)
        import logging

        logging.getLogger("hanyi.report").warning(
            "hanyi report: %s; this task's sample log is not used (no intervals, breakdowns or paired test for it)", exc
        )
        return None


def scorer_backends(samples: list[dict] | None) -> dict[str, list[str]]:
    """``{backend field: sorted values}`` that the metric code logged per sample.

    This is the single place that decides which scorer backends ran; when hanyi's backbone resolver exposes the
    backends it resolved, rewire this function to it.

    >>> scorer_backends([{"element_abs": {"lemmatizer": "rule_fallback"}, "meteor": {"meteor_matcher": "exact+stem"}}])
    {'lemmatizer': ['rule_fallback'], 'meteor_matcher': ['exact+stem']}
    """
    found: dict[str, set[str]] = {}
    for sample in samples or ():
        for value in sample.values():
            if not isinstance(value, dict):
                continue
            for field in BACKEND_FIELDS:
                if isinstance(value.get(field), str):
                    found.setdefault(field, set()).add(value[field])
    return {k: sorted(v) for k, v in sorted(found.items())}


def response_of(sample: dict):
    """The (filtered) response of one logged sample: a string, or ``None``."""
    resp = sample.get("filtered_resps", sample.get("resps"))
    while isinstance(resp, list) and resp:
        resp = resp[0]
    if isinstance(resp, list):
        return None
    return resp


def generation_failures(samples: list[dict] | None) -> int | None:
    """Logged generations that returned ``None`` or an empty string; ``None`` without a sample log.

    >>> generation_failures([{"filtered_resps": ["A"]}, {"filtered_resps": [""]}, {"resps": [[None]]}])
    2
    """
    if samples is None:
        return None
    return sum(1 for s in samples if response_of(s) is None or not str(response_of(s)).strip())


def _judge_model(config: dict, samples: list[dict] | None) -> str | None:
    meta = config.get("metadata") or {}
    if meta.get("judge_model"):
        return str(meta["judge_model"])
    for sample in samples or ():
        for value in sample.values():
            if isinstance(value, dict) and isinstance(value.get("judge_model"), str):
                return value["judge_model"]
    return None


def prompt_variant(config: dict, model: str = "") -> str | None:
    """The prompt variant a task rendered with (``lmms_eval_specific_kwargs`` as lmms-eval stores it resolved: the
    ``default`` block merged at top level, or the model's own block; then the blocks themselves).

    >>> prompt_variant({"lmms_eval_specific_kwargs": {"prompt": "matching", "prompt_variant": "code_exact"}})
    'code_exact'
    """
    kwargs = config.get("lmms_eval_specific_kwargs") or {}
    if not isinstance(kwargs, dict):
        return None
    for entry in (kwargs, kwargs.get(model) if model else None, kwargs.get("default")):
        if isinstance(entry, dict) and isinstance(entry.get("prompt_variant"), str) and entry["prompt_variant"]:
            return str(entry["prompt_variant"])
    return None


#: lmms-eval model names by the engine that generates, for :func:`model_backend` (the rest: ``transformers`` when the
#: wrapper loads Hugging Face weights in-process, else the model name itself).
_SERVED = ("openai", "async_openai", "openai_compatible", "openai_compatible_chat", "async_openai_compatible",
           "async_openai_compatible_chat", "litellm", "litellm_chat", "litellm_compatible")  # fmt: skip
_ENGINES = {"vllm": "vllm", "vllm_generate": "vllm", "sglang": "sglang", "srt_api": "sglang"}
_TRANSFORMERS = ("llava_hf", "qwen2_5_vl", "qwen2_vl", "qwen3_vl", "qwen3_5", "internvl_hf", "huggingface",
                 "async_hf_model", "async_hf", "llava_onevision1_5", "phi4_multimodal", "idefics2", "llama_vision",
                 "gemma3", "tiny_llava", "hf_vlm")  # fmt: skip


def _model_arg(model_args: str, *names: str) -> str | None:
    for part in str(model_args or "").split(","):
        key, sep, value = part.partition("=")
        if sep and key.strip() in names and value.strip():
            return value.strip()
    return None


def model_backend(model: str, model_args: str = "") -> dict:
    """Which engine generated a run's answers, from lmms-eval's ``--model`` and ``--model_args`` (as
    ``*_results.json`` records them): ``engine`` (``transformers``, ``vllm``, ``sglang``, ``openai-compatible server``,
    ``replay``, or the model name), and what else is known: the served model id and the endpoint's host for a served
    model (never its path, query or credentials), the tensor-parallel size for an in-process engine. Answers can move
    between engines for the same weights (docs/run-at-scale.md), so the report and the board name it. The engine
    behind an OpenAI-compatible endpoint (vLLM, SGLang, an API) is not visible to the client: ``served_by`` says so.

    >>> model_backend("openai", "model=Qwen/Qwen2.5-VL-7B-Instruct,base_url=http://user:pw@gpu7:8000/v1")
    {'engine': 'openai-compatible server', 'served_model': 'Qwen/Qwen2.5-VL-7B-Instruct', 'endpoint_host': 'gpu7:8000', 'served_by': 'not recorded by the client'}
    >>> model_backend("vllm", "model=Qwen/Qwen2.5-VL-72B-Instruct,tensor_parallel_size=8")
    {'engine': 'vllm', 'tensor_parallel_size': '8'}
    >>> model_backend("llava_hf", "pretrained=llava-hf/llava-1.5-7b-hf")
    {'engine': 'transformers'}
    """
    from urllib.parse import urlsplit

    name = str(model or "")
    if name in _SERVED:
        out = {"engine": "openai-compatible server"}
        if served := _model_arg(model_args, "model", "model_version"):
            out["served_model"] = served
        try:
            url = urlsplit(_model_arg(model_args, "base_url") or "")
            host = f"{url.hostname}:{url.port}" if url.port else url.hostname
        except ValueError:
            host = None
        out["endpoint_host"] = host or "from $OPENAI_API_BASE (not recorded)"
        out["served_by"] = "not recorded by the client"
        return out
    if name in _ENGINES:
        out = {"engine": _ENGINES[name]}
        if tp := _model_arg(model_args, "tensor_parallel_size", "tp_size", "tp"):
            out["tensor_parallel_size"] = tp
        return out
    if name in _TRANSFORMERS:
        return {"engine": "transformers"}
    if name.lower().startswith("replay") or name == "ReplayModel":
        return {"engine": "replay"}
    return {"engine": name or "unknown"}


def task_provenance(results: dict, task: str, samples: list[dict] | None) -> dict:
    """The provenance record of ``task`` in one parsed ``*_results.json`` (``samples`` = its sample log or ``None``)."""
    config = (results.get("configs") or {}).get(task) or {}
    run_config = results.get("config") or {}
    n = (results.get("n-samples") or {}).get(task) or {}
    source = classify_source(config.get("dataset_path"), config.get("dataset_kwargs"))
    return {
        "task": task,
        "data_source": source,
        "shortlist": shortlist_record(config, source),
        "prompt_variant": prompt_variant(config, str(run_config.get("model", ""))),
        "model_backend": model_backend(str(run_config.get("model", "")), str(run_config.get("model_args", ""))),
        "scorer_backends": scorer_backends(samples),
        "judge_model": _judge_model(config, samples),
        "limit": run_config.get("limit"),
        "n_original": n.get("original"),
        "n_effective": n.get("effective"),
        "generation_failures": generation_failures(samples),
        "n_unscored": unscored_docs((results.get("results") or {}).get(task), samples),
        "samples_logged": samples is not None,
    }


def fallback_reasons(prov: dict, metric: str) -> list[str]:
    """Reasons that ``metric`` was not computed with the paper's scorer.

    >>> fallback_reasons({"scorer_backends": {"lemmatizer": ["rule_fallback"]}}, "element_abs")
    ['fallback scorer (lemmatizer: rule_fallback)']
    >>> fallback_reasons({"scorer_backends": {"lemmatizer": ["rule_fallback"]}}, "element_sim")
    []
    """
    reasons = []
    if _has_suffix(metric, FALLBACK_SUFFIXES):
        reasons.append(f"fallback scorer ({metric} is not the paper's metric)")
    if _has_suffix(metric, CUSTOM_SUFFIXES):
        reasons.append(f"not the paper's scorer ({metric}: a model or judge other than the paper's)")
    task = str(prov.get("task") or "")
    for prefix, key, choice in UNSPECIFIED:
        if task.startswith(prefix) and (metric == key or metric.startswith(key + "_")):
            reasons.append(f"not specified by the paper: {choice}")
    from hanyi.backbones import KNOWN_FINGERPRINTS

    for prefix, keys, checkpoint in CHECKPOINTS:
        custom = _has_suffix(metric, CUSTOM_SUFFIXES + FALLBACK_SUFFIXES)
        if task.startswith(prefix) and metric.startswith(keys) and not custom and not KNOWN_FINGERPRINTS[checkpoint]:
            reasons.append(
                f"weights not verified ({checkpoint} recognised by name: no known fingerprint of its weights)"
            )
    for field, values in (prov.get("scorer_backends") or {}).items():
        affected = BACKEND_FIELDS.get(field)
        bad = [v for v in values if v in FALLBACK_BACKENDS]
        if bad and (affected is None or metric in affected):
            reasons.append(f"fallback scorer ({field}: {', '.join(bad)})")
    return reasons


#: Anchor values that say a field holds for any run (a random or human baseline row has no prompt and no judge).
ANY = "any"
#: The ``judge`` value of a table whose numbers no judge produced.
NO_JUDGE = "none"
#: The ``n`` / ``prompt_variant`` value where the paper does not publish it: never comparable.
UNPUBLISHED = "unpublished"


def anchor_value(value, column: str | None = None):
    """One anchor field for one paper column: the value itself, or from a ``{column: value, "*": default}`` map.

    >>> anchor_value(800), anchor_value({"*": 1000, "All": 2000}, "All"), anchor_value({"Homo": 500}, "Hetero")
    (800, 2000, None)
    """
    if isinstance(value, dict):
        return value.get(column, value.get("*"))
    return value


def _anchor_reasons(prov: dict, anchor: dict) -> list[str]:
    """Why ``prov`` does not match how the paper produced one anchor number; a field the anchor lacks is a reason
    too (``unknown ...``): a number is comparable only when the paper side is known."""
    reasons = []
    if anchor.get("task") and anchor["task"] != prov.get("task"):
        reasons.append(f"a different task (paper row: {anchor['task']}, ours: {prov.get('task')})")
    variant = anchor.get("prompt_variant", anchor.get("variant"))
    ours = prov.get("prompt_variant") or "default"
    if variant is None:
        reasons.append("unknown prompt variant (the anchor records none)")
    elif variant != ANY and str(variant) != str(ours):
        reasons.append(f"a different prompt variant (paper row: {variant}, ours: {ours})")
    judge = anchor.get("judge")
    judge_ours = prov.get("judge_model")
    if judge is None:
        reasons.append("unknown judge (the anchor records none)")
    elif str(judge).lower() not in (NO_JUDGE, ANY):
        accepted = [str(j).lower() for j in (judge if isinstance(judge, list) else [judge])]
        if not judge_ours or str(judge_ours).lower() not in accepted:
            reasons.append(f"a different judge (paper: {judge}, ours: {judge_ours or 'not recorded'})")
    n, n_ours, unscored = anchor.get("n"), prov.get("n_effective"), prov.get("n_unscored") or 0
    n_ours = n_ours - unscored if isinstance(n_ours, int) else n_ours  # loaded, sent, left out: not scored
    if n is None:
        reasons.append("unknown doc count (the anchor records none)")
    elif n == UNPUBLISHED:
        reasons.append("unknown doc count (the paper does not publish it)")
    elif n != ANY and n_ours is None:
        reasons.append(f"unknown doc count (ours not recorded; the paper: {n})")
    elif n != ANY and int(n) != int(n_ours):
        reasons.append(
            f"{n} docs in the paper, {n_ours} here" + (f" ({unscored} loaded, not scored)" if unscored else "")
        )
    return reasons


def comparability(prov: dict, metric: str, anchor: dict | None = None) -> tuple[bool, list[str]]:
    """``(comparable, reasons)`` for our ``metric`` of a task with provenance ``prov`` against one paper number.

    ``anchor`` holds the paper side of that number (its table's fields for its column, overridden by its row's):
    ``task``, ``prompt_variant``, ``judge`` (``none``: no judge) and ``n``. Each of ``prompt_variant``, ``judge``
    and ``n`` must be present: a missing one makes the number "not comparable (unknown ...)", never comparable.
    ``anchor=None`` checks the run alone (data source, ``--limit``, scorer, failures). Every reason makes the
    comparison not comparable.

    >>> comparability({"data_source": {"kind": "sample"}, "task": "t"}, "acc")
    (False, ['sample data (the bundled synthetic sample, not the benchmark)'])
    >>> prov = {"data_source": {"kind": "hub"}, "task": "t", "n_effective": 765, "generation_failures": 0}
    >>> comparability(prov, "acc", {"n": 765, "judge": "none", "prompt_variant": "default"})
    (True, [])
    >>> comparability(prov, "acc", {"n": 765})[1]
    ['unknown prompt variant (the anchor records none)', 'unknown judge (the anchor records none)']
    >>> comparability({**prov, "limit": 10, "n_effective": 10}, "acc", {"n": 765, "task": "t2", "judge": "none",
    ...     "prompt_variant": "default"})[1]
    ['--limit 10', 'a different task (paper row: t2, ours: t)', '765 docs in the paper, 10 here']
    """
    reasons = []
    source = (prov.get("data_source") or {}).get("kind")
    if source == "sample":
        reasons.append("sample data (the bundled synthetic sample, not the benchmark)")
    elif source == "unknown":
        reasons.append("unknown data source (no task config in the results)")
    if prov.get("limit") not in (None, -1, "None"):
        reasons.append(f"--limit {prov['limit']}")
    reasons += fallback_reasons(prov, metric)
    failures = prov.get("generation_failures")
    if failures:
        reasons.append(f"{failures} failed or empty generation{'s' if failures != 1 else ''}")
    if anchor is not None:
        reasons += _anchor_reasons(prov, anchor)
    return not reasons, reasons


def short_reason(reasons: list[str]) -> str:
    """The mark printed beside a non-comparable row: ``not comparable (sample data)``.

    >>> short_reason(["sample data (the bundled synthetic sample, not the benchmark)", "--limit 2"])
    'not comparable (sample data; --limit 2)'
    >>> short_reason(["a different setting (paper row: SM)", "a different setting (paper row: LM)"])
    'not comparable (a different setting)'
    """
    short = list(dict.fromkeys(r.split(" (")[0] for r in reasons))  # each kind of reason once
    return "not comparable (" + "; ".join(short) + ")" if reasons else "comparable"


def combine(group: str, members: list[dict]) -> dict:
    """The provenance of a group from its tasks' records: sources, backends and failures pooled.

    >>> g = combine("g", [{"data_source": {"kind": "sample"}, "generation_failures": 1, "n_effective": 2},
    ...                   {"data_source": {"kind": "hub"}, "generation_failures": 0, "n_effective": 3}])
    >>> g["data_source"]["kind"], g["generation_failures"], g["n_effective"]
    ('sample', 1, 5)
    """
    members = [m for m in members if m]
    if not members:
        return {"task": group, "data_source": {"kind": "unknown"}}
    kinds = [(m.get("data_source") or {}).get("kind") for m in members]
    worst = next((k for k in ("sample", "unknown", "prepared", "hub") if k in kinds), "unknown")
    source = next(m["data_source"] for m, k in zip(members, kinds) if k == worst)
    backends: dict[str, set] = {}
    for m in members:
        for k, vals in (m.get("scorer_backends") or {}).items():
            backends.setdefault(k, set()).update(vals)
    failures = [m.get("generation_failures") for m in members]
    counts = [m.get("n_effective") for m in members]
    judges = sorted({m["judge_model"] for m in members if m.get("judge_model")})
    return {
        "task": group,
        "data_source": source,
        "prompt_variant": None,
        "scorer_backends": {k: sorted(v) for k, v in sorted(backends.items())},
        "judge_model": ", ".join(judges) or None,
        "limit": members[0].get("limit"),
        "n_effective": sum(counts) if all(isinstance(c, int) for c in counts) else None,
        "generation_failures": sum(failures) if all(isinstance(f, int) for f in failures) else None,
        "members": [m.get("task") for m in members],
    }


def installed_lmms_eval() -> str | None:
    """The installed lmms-eval release (``importlib.metadata``), or ``None``."""
    from importlib import metadata

    try:
        return metadata.version("lmms-eval")
    except metadata.PackageNotFoundError:
        return None


def lmms_eval_version(recorded: str, installed: str | None) -> str:
    """The Runs table's lmms-eval cell: the release the results file records, else the installed one. lmms-eval
    0.7.3 writes ``lmms_eval_version`` as ``<git branch>@<commit>`` of the directory it ran in (often the caller's own
    repository, not lmms-eval), which is no lmms-eval version: :func:`run_folder_git` shows it in a column of its own.

    >>> lmms_eval_version("0.7.3", "0.7.3"), lmms_eval_version("main@8c4e3881", "0.7.3")
    ('0.7.3', '0.7.3 (installed)')
    >>> lmms_eval_version("", None), lmms_eval_version("main@8c4e3881", None)
    ('unknown', 'unknown')
    """
    if re.fullmatch(r"v?\d+(\.\d+)+\S*", recorded or ""):
        return recorded
    return "unknown" if installed is None else f"{installed} (installed)"
