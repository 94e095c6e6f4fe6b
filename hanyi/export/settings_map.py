"""Where the exported tasks take each ``HANYI_*`` setting from: one table, applied as a source rewrite.

hanyi reads its settings from ``HANYI_*`` environment variables (``hanyi/settings.py``); an upstream
lmms-eval folder reads none. Each name the exported code reads gets the source an upstream task uses for the same
thing (:data:`SETTINGS`):

* ``("env", NAME)``: upstream's own environment variable (the judge: ``OPENAI_API_URL`` and ``MODEL_VERSION``, as
  ``lmms_eval/llm_judge`` and ``mmvet``/``llava-in-the-wild``/``mathvista`` read them);
* ``("metadata", BENCH, KEY)``: key ``KEY`` of ``metadata:`` in ``BENCH/_default_template_yaml`` (upstream task
  ``utils.py`` files read ``config["metadata"][...]`` of their YAML the same way);
* ``("default", KEY)``: not settable in the export; hanyi's default applies (upstream's judge tasks fix temperature,
  token limit and retries in code the same way);
* ``("hanyi", TEXT)``: hanyi's own machinery, never read by the exported code (dropped from tables, ``TEXT`` in prose).

The rewrite has three points, all in :func:`rewrite`: every ``HANYI_*`` token becomes its label (the env name or the
key; an unlisted token stops the export), ``os.environ``/``os.getenv`` reads go through the generated
``task_settings.environ`` (a read-only mapping: a listed key from its folder's metadata, any other name from
``os.environ``), and entries of hanyi-only names are dropped from dict literals (``settings.CHECKS``). Defaults and
validation are the source's: the code is the same, only the names and where they are read change.
"""

from __future__ import annotations

import ast
import json
import re

#: ``HANYI_*`` name -> its source in the export (module docstring). Keep in step with docs/upstream.md.
SETTINGS: dict[str, tuple[str, ...]] = {
    "HANYI_JUDGE_BASE_URL": ("env", "OPENAI_API_URL"),
    "HANYI_JUDGE_MODEL": ("env", "MODEL_VERSION"),
    "HANYI_JUDGE_API_KEY_ENV": ("default", "judge_api_key_env"),  # the key: OPENAI_API_KEY, as upstream
    "HANYI_JUDGE_TEMPERATURE": ("default", "judge_temperature"),
    "HANYI_JUDGE_MAX_TOKENS": ("default", "judge_max_tokens"),
    "HANYI_JUDGE_TOP_P": ("default", "judge_top_p"),
    "HANYI_JUDGE_CONCURRENCY": ("default", "judge_concurrency"),
    "HANYI_JUDGE_TIMEOUT": ("default", "judge_timeout"),
    "HANYI_JUDGE_MAX_RETRIES": ("default", "judge_max_retries"),
    "HANYI_JUDGE_COOLDOWN": ("default", "judge_cooldown_s"),
    "HANYI_JUDGE_TRIP_AFTER": ("default", "judge_trip_after"),
    "HANYI_JUDGE_CACHE_DIR": ("default", "judge_cache_dir"),
    "HANYI_CACHE_DIR": ("default", "cache_dir"),
    "HANYI_SCORER_DEVICE": ("default", "scorer_device"),
    "HANYI_IMAGE_MAX_PIXELS": ("default", "image_max_pixels"),
    "HANYI_PUNREBUS_SBERT_MODEL": ("metadata", "punrebus", "punrebus_sbert_model"),
    "HANYI_CVLUE_LOGLIK": ("metadata", "cvlue", "cvlue_loglik"),
    "HANYI_CII_IMAGE_ROOT": ("metadata", "cii", "cii_image_root"),
    "HANYI_CII_CTC_JSON": ("metadata", "cii", "cii_ctc_json"),
    "HANYI_UNPIE_BERTSCORE_MODEL": ("metadata", "unpie", "unpie_bertscore_model"),
    "HANYI_UNPIE_BERTSCORE_LAYERS": ("metadata", "unpie", "unpie_bertscore_layers"),
    "HANYI_UNPIE_BERTSCORE_BATCH": ("metadata", "unpie", "unpie_bertscore_batch"),
    "HANYI_UNPIE_IMAGE_ROOT": ("metadata", "unpie", "unpie_image_root"),
    "HANYI_UNPIE_IMAGE_CACHE": ("metadata", "unpie", "unpie_image_cache"),
    "HANYI_UNPIE_DOWNLOAD_IMAGES": ("metadata", "unpie", "unpie_download_images"),
    "HANYI_UNPIE_CAPTIONS": ("metadata", "unpie", "unpie_captions"),
    "HANYI_VULCA_NLI_MODEL": ("metadata", "vulca", "vulca_nli_model"),
    "HANYI_VULCA_NLI_TEMPLATE": ("metadata", "vulca", "vulca_nli_template"),
    "HANYI_VULCA_NLI_MAX_LENGTH": ("metadata", "vulca", "vulca_nli_max_length"),
    "HANYI_VULCA_NLI_BATCH_SIZE": ("metadata", "vulca", "vulca_nli_batch_size"),
    "HANYI_VULCA_NLI_DEVICE": ("metadata", "vulca", "vulca_nli_device"),
    "HANYI_VULCA_EMBED_MODEL": ("metadata", "vulca", "vulca_embed_model"),
    "HANYI_VULCA_EMBED_MODEL_ID": ("metadata", "vulca", "vulca_embed_model_id"),
    "HANYI_VULCA_EMBED_DEVICE": ("metadata", "vulca", "vulca_embed_device"),
    "HANYI_VULCA_SCORE_TEXT": ("metadata", "vulca", "vulca_score_text"),
    "HANYI_DATA_ROOT": ("hanyi", "dataset_path"),
    "HANYI_PUNREBUS_DATA": ("hanyi", "dataset_path"),
    "HANYI_CVLUE_DATA": ("hanyi", "dataset_path"),
    "HANYI_CII_DATA": ("hanyi", "dataset_path"),
    "HANYI_UNPIE_DATA": ("hanyi", "dataset_path"),
    "HANYI_VULCA_DATA": ("hanyi", "dataset_path"),
    "HANYI_VULCA_BENCH_DATA": ("hanyi", "dataset_path"),
    "HANYI_NO_AUTOHOOK": ("hanyi", "hanyi's start-up hook"),
    "HANYI_DEBUG": ("hanyi", "hanyi's debug mode"),
    "HANYI_EVAL_CACHE_EVERY": ("hanyi", "hanyi eval's answers per response-cache write"),
    "HANYI_FULL_SCALE_DIR": ("hanyi", "hanyi's full-scale data cache"),
}
#: Names in prose and prefixes (``HANYI_VULCA_NLI_`` + ``"MODEL"``: a key that starts in lower case is matched
#: case-insensitively).
PROSE: dict[str, str] = {
    "HANYI_*": "task_settings.SOURCES",
    "HANYI_JUDGE_*": "OPENAI_API_URL / MODEL_VERSION",
    "HANYI_UNPIE_BERTSCORE_*": "unpie_bertscore_*",
    "HANYI_VULCA_NLI_*": "vulca_nli_*",
    "HANYI_VULCA_NLI_": "vulca_nli_",
}
TOKEN_RE = re.compile(r"\$?HANYI_[A-Z0-9_]*\*?")
MODULE = "task_settings"
ENVIRON = f"{MODULE}.environ"
_WRITES = ("setdefault", "pop", "update", "clear", "__setitem__", "__delitem__")
_ENV_READ_RE = re.compile(r"\bos\.(?:environ\b|getenv\()")


class SettingsRewriteError(ValueError):
    """A ``HANYI_*`` token the table does not know, or a write to ``os.environ`` in exported code."""


def label(token: str) -> str:
    """What ``token`` becomes in the export: the upstream env name, the metadata key, the default's name, or prose
    (``$NAME`` keeps its ``$`` only for an environment variable)."""
    if token.startswith("$"):
        name = label(token[1:])
        return "$" + name if SETTINGS.get(token[1:], ("",))[0] == "env" else name
    if token in PROSE:
        return PROSE[token]
    if token not in SETTINGS:
        raise SettingsRewriteError(f"{token} has no source in the export: add it to hanyi/export/settings_map.py")
    return SETTINGS[token][-1]


#: Advice that names a hanyi command, as the export words it: what an upstream user does instead (a model id to
#: download, NLTK's downloader, the dataset ``dataset_path`` names). ``tests/test_export.py`` finds any left.
MESSAGES = (
    (r"hanyi setup \(or set (\w+) to a local copy of ([\w./-]+)\)", r"huggingface-cli download \2 (or set \1 to a local copy)"),
    (r"(\(or set \w+ to a local copy\)), or: hanyi setup", r"\1"),
    (r'SETUP_FIX = "hanyi setup"', 'SETUP_FIX = "python -m nltk.downloader wordnet"'),
    (r" \(offline: apt-get install wordnet-base wordnet-sense-index, then hanyi setup\)", ""),
    (r"Rebuild the data with `hanyi prepare (\w+)[^`]*`(; docs/\w+\.md says what the release holds|, which checks "
     r"every image and reports the bad ones)?\.", r"Rebuild the \1 dataset that dataset_path names (README, Data access)."),
    (r"\(hanyi prepare vulca --slices\)", "(README, Data access)"),
    (r", or run: hanyi prepare unpie --download-images", ""),
    (r', or run "\s*"`hanyi prepare cii [^`]*`"', '"'),
    (r" \(docs/judge\.md\)", ""),
    (r"or rebuild it with `hanyi prepare (\w+)` \(docs/\w+\.md, deviation \d+\)",
     r"or rebuild the \1 dataset that dataset_path names (README, Data access)"),
    (r'or regenerate the reference with `python -m hanyi\.data\.vulca_embed_reference "\n\s*f"<human texts dir> '
     r'--model <yours>`"', 'or regenerate the human reference (reference/human_embeddings.json) with that embedder"'),
)  # fmt: skip


def rename(text: str, where: str) -> str:
    """Every ``HANYI_*`` token of ``text`` (code, docstrings, comments, YAML, README) replaced by its label, and the
    advice naming a hanyi command reworded (:data:`MESSAGES`)."""
    try:
        text = TOKEN_RE.sub(lambda m: label(m.group(0)), text)
    except SettingsRewriteError as exc:
        raise SettingsRewriteError(f"{where}: {exc}") from None
    return reword(text)


def reword(text: str) -> str:
    """``text`` with the advice naming a hanyi command reworded (:data:`MESSAGES`)."""
    for pattern, replacement in MESSAGES:
        text = re.sub(pattern, replacement, text)
    return text


def _drop_hanyi_only_entries(source: str) -> str:
    """Dict literal entries keyed by a hanyi-only name (``settings.CHECKS``' ``HANYI_DATA_ROOT``, ...) removed."""
    lines = source.split("\n")
    cut = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values):
            if isinstance(key, ast.Constant) and SETTINGS.get(key.value, ("",))[0] == "hanyi":
                if key.lineno == node.lineno or value.end_lineno == node.end_lineno:
                    raise SettingsRewriteError(f"line {key.lineno}: put each entry of this table on its own line")
                cut.update(range(key.lineno - 1, value.end_lineno))
    return "\n".join(line for i, line in enumerate(lines) if i not in cut)


def _route_environ(source: str, package: str) -> str:
    """``os.environ`` / ``os.getenv(`` reads -> ``task_settings.environ`` (refusing writes), with its import."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        store = isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del))
        method = isinstance(node, ast.Call) and getattr(node.func, "attr", "") in _WRITES
        target = node.value if store else node.func.value if method else None
        if isinstance(target, ast.Attribute) and target.attr == "environ":
            raise SettingsRewriteError(f"line {node.lineno}: writes os.environ; the exported code only reads settings")
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "os"
            and {"environ", "getenv"} & {a.name for a in node.names}
        ):
            raise SettingsRewriteError(f"line {node.lineno}: read os.environ as os.environ (the export reroutes it)")
    if not _ENV_READ_RE.search(source):
        return source
    after = 0
    for node in tree.body:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and node is tree.body[0]
        if docstring or (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            after = node.end_lineno
    text = source.replace("os.getenv(", f"{ENVIRON}.get(")
    text = re.sub(r"\bos\.environ\b", ENVIRON, text)
    lines = text.split("\n")
    tree = ast.parse(text)
    unused = set()  # ``import os`` left unused in its scope (the module, or a function importing it itself)
    for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
        if not any(isinstance(n, ast.Name) and n.id == "os" for n in ast.walk(scope)):
            unused.update(
                n.lineno - 1
                for n in scope.body
                if isinstance(n, ast.Import) and [(a.name, a.asname) for a in n.names] == [("os", None)]
            )
    lines = [line for i, line in enumerate(lines) if i not in unused]
    lines.insert(after, f"from {package} import {MODULE}")
    return "\n".join(lines)


def rewrite(source: str, filename: str, package: str) -> str:
    """The export's settings rewrite of one ``.py`` file's code (imports already renamed to ``package``); the names
    themselves are renamed last (:func:`rename`), after docstrings are cut."""
    try:
        return _route_environ(_drop_hanyi_only_entries(source), package)
    except SettingsRewriteError as exc:
        raise SettingsRewriteError(f"{filename}: {exc}") from None


def sources() -> dict[str, str]:
    """``{label: folder}`` for the generated module: a metadata key's folder, ``""`` for a fixed default."""
    out = {}
    for entry in SETTINGS.values():
        if entry[0] == "metadata":
            out[entry[2]] = entry[1]
        elif entry[0] == "default":
            out[entry[1]] = ""
    return dict(sorted(out.items()))


def _keys_by_folder() -> dict:
    """``{folder: "key key ..."}`` of :func:`sources` (a short table in the generated module)."""
    out: dict = {}
    for key, folder in sources().items():
        out[folder] = f"{out[folder]} {key}" if folder in out else key
    return out


def generated_module() -> str:
    """The source of ``cultural_utils/task_settings.py``, where the exported code reads its settings."""
    return f'''"""Where the exported tasks read their settings: upstream's environment variables (``OPENAI_API_URL``, ``MODEL_VERSION``, ``OPENAI_API_KEY`` for the judge), else ``metadata:`` of a folder's ``_default_template_yaml``."""

import os
from collections.abc import Mapping
from functools import cache

import yaml

#: setting -> the folder whose ``_default_template_yaml`` ``metadata:`` sets it (``""``: fixed, the code's default applies); any other name is read from the environment
SOURCES = {{key: folder for folder, keys in {json.dumps(_keys_by_folder())}.items() for key in keys.split()}}
TASKS_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@cache
def metadata(folder: str) -> dict:
    """``metadata:`` of ``<folder>/_default_template_yaml``, read as upstream task code reads its YAML (``!function`` lines skipped)."""
    with open(os.path.join(TASKS_DIR, folder, "_default_template_yaml"), encoding="utf-8") as f:
        config = yaml.safe_load("".join(line for line in f if "!function" not in line)) or {{}}
    return config.get("metadata") or {{}}


class Settings(Mapping):
    """A read-only ``os.environ`` for the exported code: a listed setting (lower case) comes from its folder's metadata, unset when absent or empty; any other name from the environment."""

    def __getitem__(self, name):
        key = name.lower() if name[:1].islower() else name  # vulca_nli_ + "MODEL" is vulca_nli_model
        if key not in SOURCES:
            return os.environ[name]
        value = metadata(SOURCES[key]).get(key) if SOURCES[key] else None
        if value is None or str(value).strip() == "":
            raise KeyError(name)
        return str(value).lower() if isinstance(value, bool) else str(value)

    def __iter__(self):
        return iter(os.environ)

    def __len__(self):
        return len(os.environ)


environ = Settings()
'''


def readme_section(bench: str) -> list[str]:
    """The README's settings lines for ``bench``: the judge's environment variables and the folder's metadata keys."""
    keys = [e[2] for e in SETTINGS.values() if e[0] == "metadata" and e[1] == bench]
    lines = [
        "## Settings",
        "",
        "- Judge metrics read `OPENAI_API_URL` (base URL, e.g. `https://api.openai.com/v1`), `MODEL_VERSION` and the "
        "key from `OPENAI_API_KEY` when the task runs, as upstream's judge tasks do; without the first two the judge "
        "keys are not emitted and one warning says so. Nothing is fetched at import.",
    ]
    if keys:
        shown = ", ".join(f"`{k}`" for k in keys)
        lines.append(
            f"- `metadata:` of `_default_template_yaml` may set {shown} (the scorer models, paths and options named "
            "above); unset, the defaults above apply."
        )
    return lines
