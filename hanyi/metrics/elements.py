"""Element-list answers ("name of element A, name of element B, etc"): parsing, S_Abs and S_Sim.

Paper: Zhang et al. 2024, "Creating a Lens of Chinese Culture" (arXiv 2406.10318v1), §4.2 equations (1) and (2).
The paper-faithful functions port the official scorer (``scorer/element_scorer.py``, repo
``zhang-tuo-pdf/Pun-Rebus-Art-Benchmark`` at 61c497f), quirks included:

1. only the first line of the response counts, and a response that is empty or starts with a newline is *unparsed*
   (the official log regex ``\\n\\n([^\\n]+)`` finds nothing; the image is left out of the average);
2. the line is split on the exact separator ``", "``;
3. every ``.``, ``(`` and ``)`` is removed from each element;
4. each element is lowercased, split on whitespace, each word lemmatised as a noun (NLTK WordNet), rejoined;
5. ground truth is lowercased and right-stripped but *not* lemmatised;
6. ``S_Abs`` counts ``g in p`` substring hits over every (g, p) pair, uncapped; ``S_Sim`` takes, for each g, the max
   cosine over P starting from 0 (all-MiniLM-L6-v2), then the mean over G (duplicates in G count), and the dataset
   value is the mean over the parsed images; both means in float32, as the official scorer's tensors
   (:func:`official_mean`). A cosine carries the backbone's float noise: compared across machines, batchings and
   processes within the tolerance of :mod:`hanyi.floats` (docs/dev/contributing.md), bit for bit only in one process.

NLTK's WordNet data is often absent offline; :func:`lemmatize_noun` then uses :func:`singularize_rule`, a rule-based
port of WordNet's noun morphology (see ``docs/punrebus.md``), and :func:`lemmatizer_backend` says which path ran. The
task then reports ``element_abs_rule_lemma`` / ``element_abs_capped_rule_lemma``, never the paper's key
(:mod:`hanyi.backbones`; ``hanyi setup`` installs WordNet).
Heavy imports (nltk, torch, sentence-transformers) happen inside the functions that need them.
"""

from __future__ import annotations

import functools
import math
import re
import threading
import weakref
from collections.abc import Sequence

import numpy as np

from hanyi.logs import get_logger
from hanyi.metrics.sbert_model import LOAD_LOCK as _LOAD_LOCK
from hanyi.metrics.sbert_model import SBERT_DEFAULT, SBERT_ENV, resolve_sbert_model  # noqa: F401  (public names)
from hanyi.metrics.sbert_model import load_model as _load_sbert

log = get_logger(__name__)

_CJK = re.compile(r"[\u4e00-\u9fff]")
_REMOVED = str.maketrans("", "", ".()")

# WordNet 3.0 results the rules below would miss (noun.exc entries, -ves -> -f, short words WordNet knows).
_IRREGULAR = {
    "children": "child", "men": "man", "women": "woman", "feet": "foot", "teeth": "tooth", "geese": "goose",
    "mice": "mouse", "oxen": "ox", "cacti": "cactus", "leaves": "leaf", "wolves": "wolf", "knives": "knife",
    "halves": "half", "calves": "calf", "shelves": "shelf", "loaves": "loaf", "wives": "wife", "lives": "life",
    "thieves": "thief", "scarves": "scarf", "elves": "elf", "hooves": "hoof", "sheaves": "sheaf", "dice": "die",
    "as": "a", "its": "it", "us": "u", "was": "wa", "ins": "in", "means": "mean", "species": "specie", "vases": "vas",
}  # fmt: skip
# Words WordNet keeps although they end in -s, and -ie nouns whose plural must not become -y.
_KEEP = frozenset("series news lotus citrus narcissus hibiscus cypress prunus fungus cactus iris osmanthus is".split())
_IE_NOUNS = frozenset(
    "magpie pie tie cookie genie movie zombie prairie rookie birdie collie sortie brownie pixie".split()
)
_ES_ENDINGS = ("ches", "shes", "xes", "sses", "uses", "zzes")


def singularize_rule(word: str) -> str:
    """Rule-based noun lemma, the fallback for WordNet's ``lemmatize(word, "n")`` when its data is missing.

    Follows WordNet's noun morphology (``-ies`` -> ``-y``, ``-ches/-shes/-xes/-zes/-sses`` drop ``es``, ``-s`` drops,
    ``-uses`` -> ``-us``, a small exception table) and keeps ``-ss``, ``-us``, ``-is``, ``'s`` words. Approximate for words WordNet does
    not know (it returns those unchanged); see docs/punrebus.md for the measured agreement.

    >>> [singularize_rule(w) for w in ["bats", "peaches", "butterflies", "leaves", "lotus", "cypress", "fish"]]
    ['bat', 'peach', 'butterfly', 'leaf', 'lotus', 'cypress', 'fish']
    """
    w = word.lower()
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    if len(w) <= 3 or w in _KEEP or not w.endswith("s") or w.endswith(("ss", "us", "is", "'s", "’s")):
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-1] if w[:-1] in _IE_NOUNS else w[:-3] + "y"
    if w.endswith(_ES_ENDINGS):
        return w[:-2]
    return w[:-1]


#: One encode at a time: lmms-eval runs ``process_results`` in threads (``--process_docs_parallel``, 4 by default),
#: and a Hugging Face fast tokenizer shared by threads can fail ("Already borrowed").
_ENCODE_LOCK = threading.Lock()


def _wordnet_lemmatizer():
    """NLTK's ``WordNetLemmatizer`` when the ``wordnet`` backbone resolved (once per process, at task load), else
    ``None``; :mod:`hanyi.backbones` logs the one line saying which keys switch to the rule-based fallback."""
    from hanyi import backbones

    return _lemmatizer_instance() if backbones.available("wordnet") else None


@functools.lru_cache(maxsize=1)
def _lemmatizer_instance():
    from nltk.stem import WordNetLemmatizer

    return WordNetLemmatizer()


def lemmatizer_backend() -> str:
    """``"wordnet"`` when NLTK's WordNet lemmatiser is usable, else ``"rule_fallback"`` (logged once)."""
    return "wordnet" if _wordnet_lemmatizer() is not None else "rule_fallback"


def lemmatize_noun(word: str) -> str:
    """The scorer's per-word lemma: WordNet ``lemmatize(word, "n")``, or :func:`singularize_rule` without WordNet."""
    lem = _wordnet_lemmatizer()
    return lem.lemmatize(word, "n") if lem is not None else singularize_rule(word)


def normalise_prediction(element: str) -> str:
    """Steps 3-4 of the official scorer: drop ``.()``, lowercase, lemmatise each whitespace-separated word.

    >>> normalise_prediction("Peaches (桃).")
    'peach 桃'
    """
    return " ".join(lemmatize_noun(w) for w in element.translate(_REMOVED).lower().split())


def parse_elements_official(response: str | None) -> list[str] | None:
    """Paper-faithful element parse: first line, ``split(", ")``, normalised; ``None`` when the scorer skips it.

    >>> parse_elements_official("Bats, Peaches (桃), coin.\\nThe bats mean fortune.")
    ['bat', 'peach 桃', 'coin']
    >>> parse_elements_official("\\nBat, Peach") is None
    True
    """
    if not isinstance(response, str) or not response or response[0] == "\n":
        return None
    return [normalise_prediction(p) for p in response.split("\n", 1)[0].split(", ")]


def normalise_gt(element: str) -> str:
    """Ground truth as the scorer keeps it: lowercased and right-stripped, never lemmatised."""
    return element.lower().rstrip()


def element_abs(gold: Sequence[str], pred: Sequence[str]) -> float:
    """Official S_Abs of one instance: substring hits ``g in p`` over all pairs / |G|, uncapped (can exceed 1).

    >>> element_abs(["fish", "lotus"], ["goldfish", "fish", "lotus flower"])
    1.5
    """
    return sum(1 for g in gold for p in pred if g in p) / len(gold) if gold else 0.0


def element_abs_capped(gold: Sequence[str], pred: Sequence[str]) -> float:
    """Paper equation (1) with the scorer's matching: each GT element counts at most once, so the value is <= 1.

    >>> element_abs_capped(["fish", "lotus"], ["goldfish", "fish", "lotus flower"])
    1.0
    """
    return sum(1 for g in gold if any(g in p for p in pred)) / len(gold) if gold else 0.0


def has_cjk(text: str | None) -> bool:
    """True when ``text`` contains a CJK unified ideograph (U+4E00-U+9FFF), the paper's "Chinese response" test.

    >>> has_cjk("Fish跃龙门"), has_cjk("Fish")
    (True, False)
    """
    return bool(_CJK.search(text or ""))


def load_sbert(name: str | None = None):
    """The SentenceTransformer for ``name`` (resolved by :func:`resolve_sbert_model`), loaded once per process.

    Returns ``None`` (and logs a warning) when it cannot be loaded, e.g. offline without a local copy.
    """
    name = resolve_sbert_model(name)
    with _LOAD_LOCK:
        try:
            return _load_sbert(name)
        except Exception as exc:
            log.warning("hanyi punrebus: cannot load Sentence-BERT %r (%s); element_sim is not reported", name, exc)
            return None


#: ``{model: {string: vector}}``, per process: each distinct string is encoded once (:func:`encode_distinct`, in
#: batches) and read from here by every doc that names it; as large as the benchmark's distinct strings.
_ENCODINGS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: Strings per ``encode`` call: MiniLM's inputs are a few words, so a batch of 256 stays within a few MB.
ENCODE_BATCH = 256


def encode_distinct(strings, model=None) -> int:
    """Encode every string of ``strings`` not yet in the process's cache, each distinct one once, in batches of
    :data:`ENCODE_BATCH` (sorted, so the batches do not depend on the order the strings came in); returns how many
    were encoded. The task's filter calls this with every gold and parsed element of the run before
    ``process_results`` scores the docs (:func:`hanyi.tasks.punrebus.utils` ``punrebus_encode_elements``).

    A batch's shape changes the last float32 bits of an encoding (at most 3.6e-7 on a cosine, measured), so a doc's
    S_Sim agrees across batchings within :mod:`hanyi.floats`' tolerance, and bit for bit only within one process."""
    model = model or load_sbert()
    if model is None:
        return 0
    cache = _ENCODINGS.setdefault(model, {})
    todo = sorted({s for s in strings if isinstance(s, str)} - cache.keys())
    with _ENCODE_LOCK:
        for i in range(0, len(todo), ENCODE_BATCH):
            chunk = todo[i : i + ENCODE_BATCH]
            vectors = model.encode(chunk, batch_size=ENCODE_BATCH, convert_to_tensor=True)
            cache.update(zip(chunk, vectors))
    return len(todo)


def official_mean(values: Sequence[float]) -> float:
    """``sum(values) / len(values)`` as the official scorer computes it on its CUDA float32 tensors: a running
    float32 sum from 0 in the given order, then (PyTorch's CUDA true division by a Python number) a float32
    multiplication by the float32 reciprocal of the count. Used for a doc's S_Sim (the mean over its gold elements)
    and for the dataset's (the mean over the parsed docs, in doc order). On CPU tensors PyTorch divides instead, at
    most one float32 unit apart. 0.0 for no values (the official scorer raises ``ZeroDivisionError``).

    >>> official_mean([0.1, 0.2, 0.3]) == float(np.float32(0.6000000238418579) * (np.float32(1) / np.float32(3)))
    True
    >>> official_mean([]), official_mean([0.0, 0.0])
    (0.0, 0.0)
    """
    if not len(values):
        return 0.0
    total = np.float32(0.0)
    for v in values:
        total = np.float32(total + np.float32(v))
    return float(total * (np.float32(1.0) / np.float32(len(values))))


def element_sim_scores(pairs: Sequence[tuple[Sequence[str], Sequence[str]]], model=None) -> list[float]:
    """S_Sim (paper eq. 2) of each ``(gold, pred)`` pair as the official scorer computes it: ``cos_sim`` of each gold
    and predicted element's encodings, for each gold element the running max from 0 (an empty ``pred`` gives 0),
    then :func:`official_mean` over the gold elements (duplicates count). Strings not yet encoded are encoded first,
    all at once (:func:`encode_distinct`); the cosines of a doc are one matrix (the same values within the float
    rule as one ``cos_sim`` call per pair). ``model``: a SentenceTransformer (:func:`load_sbert`)."""
    import torch
    from sentence_transformers import util

    model = model or load_sbert()
    encode_distinct([s for gold, pred in pairs for s in (*gold, *pred)], model)
    cache, scores = _ENCODINGS[model], []
    with _ENCODE_LOCK:
        for gold, pred in pairs:
            if not gold or not pred:  # the running max never moves from 0
                scores.append(0.0)
                continue
            cos = util.cos_sim(torch.stack([cache[g] for g in gold]), torch.stack([cache[p] for p in pred]))
            best = [max(np.float32(0.0), row.max()) for row in cos.cpu().numpy()]
            scores.append(official_mean(best))
    return scores


def element_sim_official(gold: Sequence[str], pred: Sequence[str], model) -> float:
    """A transcription of the official scorer's S_Sim of one image (``similarity_score_answers`` in
    ``scorer/element_scorer.py``, Pun-Rebus-Art-Benchmark at 61c497f, lines 61-72; spec §3.2), for parity checks:
    one ``encode`` call per string per pair, tensor output, ``cos_sim``, a running max that starts at the integer 0
    and becomes the 1x1 tensor, Python's ``sum`` of those over the gold elements divided by their count. Run on CPU
    tensors here, so the division is torch's CPU one (see :func:`official_mean` for CUDA's). Slow: tests only."""
    from sentence_transformers import util

    if not gold:
        return 0.0
    sim_score = []
    for g in gold:
        embedding_g = model.encode(g, convert_to_tensor=True)
        buffer_score = 0
        for p in pred:
            similarity = util.cos_sim(embedding_g, model.encode(p, convert_to_tensor=True))
            if similarity > buffer_score:
                buffer_score = similarity
        sim_score.append(buffer_score)
    value = sum(sim_score) / len(sim_score)
    return float(value)


def mean_or_zero(values: Sequence[float]) -> float:
    """Mean of ``values``; 0.0 for an empty sequence.

    The sum is exactly rounded (:func:`math.fsum`), so the mean does not depend on the order of ``values``: a
    multi-process run hands the aggregation its items rank by rank (docs 0, 2, 4, ..., then 1, 3, ...), and must
    give the single-process value to the last bit.

    >>> mean_or_zero([1.0, 0.5]), mean_or_zero([])
    (0.75, 0.0)
    """
    return math.fsum(values) / len(values) if values else 0.0
