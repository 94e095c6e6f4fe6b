"""The model card of a submission: a display name and what a visitor of the board asks first about a model.

``hanyi submit --name "Qwen2.5-VL 7B" [--organisation ...] [--params 7B] [--open-weights | --closed-weights]
[--link URL] [--release-date YYYY-MM-DD] [--training-data TEXT] [--model-card FILE]`` writes, beside ``model`` (the
lmms-eval model class, kept for provenance), one optional object of the ``hanyi-submission`` document::

    "model_card": {"name": "Qwen2.5-VL 7B", "organisation": "Alibaba", "parameters": 7000000000,
                   "open_weights": true, "link": "https://...", "release_date": "2025-01-28",
                   "training_data": "one line on what the model was trained on"}

Every field is optional; an unknown field is an error (a typo would otherwise vanish silently). ``--model-card FILE``
reads the same object from a JSON file; a flag wins over the file. The board shows name, organisation, size and
openness in its tables and every field on the model's page; it never trusts a field as HTML, and links only an
``http(s)`` URL.
"""

from __future__ import annotations

import datetime
import json
import re
import unicodedata

#: field -> (type check, longest text); ``parameters`` is a count, ``open_weights`` a boolean.
TEXT_LIMITS = {"name": 80, "organisation": 80, "link": 300, "release_date": 10, "training_data": 300}
FIELDS = (*TEXT_LIMITS, "parameters", "open_weights")
#: ``7B``, ``1.5b``, ``72 B``, ``350M``, ``7000000000``.
_PARAMS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMBT]?)\s*$", re.IGNORECASE)
_FACTOR = {"": 1, "K": 10**3, "M": 10**6, "B": 10**9, "T": 10**12}
_URL = re.compile(r"^https?://[^\s<>\"'\\]+$")


def parse_parameters(text) -> int:
    """A parameter count from ``7B`` / ``1.5b`` / ``350M`` / a plain number; ``ValueError`` otherwise.

    >>> parse_parameters("7B"), parse_parameters("1.5b"), parse_parameters("350M"), parse_parameters(8_000_000)
    (7000000000, 1500000000, 350000000, 8000000)
    """
    if isinstance(text, int) and not isinstance(text, bool) and text > 0:
        return text
    found = _PARAMS.match(str(text))
    if not found or float(found.group(1)) <= 0:
        raise ValueError(f"parameters: {text!r} is not a count such as 7B, 1.5B, 350M")
    return round(float(found.group(1)) * _FACTOR[found.group(2).upper()])


def size_label(count) -> str:
    """A parameter count as a reader writes it.

    >>> size_label(7_000_000_000), size_label(1_500_000_000), size_label(350_000_000), size_label(None)
    ('7B', '1.5B', '350M', '')
    """
    if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
        return ""
    for unit, factor in (("T", 10**12), ("B", 10**9), ("M", 10**6), ("K", 10**3)):
        if count >= factor:
            return f"{count / factor:.3g}{unit}"
    return str(count)


def _unsafe_characters(text: str) -> list[str]:
    """Control, format (bidi overrides, zero-width) and unassigned characters: a name must read as it renders."""
    return [f"U+{ord(c):04X}" for c in text if unicodedata.category(c) in ("Cc", "Cf", "Cn", "Cs", "Co")]


def card_problems(card) -> list[str]:
    """Every way ``card`` breaks the ``model_card`` format, one line each (``[]``: fine; ``None``: no card).

    >>> card_problems({"name": "Qwen2.5-VL 7B", "parameters": 7000000000, "open_weights": True})
    []
    >>> card_problems({"name": "a\\u202eb", "link": "javascript:alert(1)", "colour": "red", "open_weights": "yes"})
    ['name: control or format character U+202E', 'link: not an http(s) URL', 'open_weights: not true or false', "unknown field 'colour' (fields: name, organisation, link, release_date, training_data, parameters, open_weights)"]
    """
    if card is None:
        return []
    if not isinstance(card, dict):
        return ["not a JSON object"]
    out = []
    for key, limit in TEXT_LIMITS.items():
        value = card.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            out.append(f"{key}: not a non-empty string")
            continue
        if len(value) > limit:
            out.append(f"{key}: {len(value)} characters (at most {limit})")
        bad = _unsafe_characters(value)
        if bad:
            out.append(f"{key}: control or format character {', '.join(bad[:3])}")
    if isinstance(card.get("link"), str) and not _URL.match(card["link"]):
        out.append("link: not an http(s) URL")
    if isinstance(card.get("release_date"), str):
        try:
            datetime.date.fromisoformat(card["release_date"])
        except ValueError:
            out.append("release_date: not a date YYYY-MM-DD")
    if "parameters" in card and card["parameters"] is not None:
        value = card["parameters"]
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            out.append("parameters: not a positive integer count")
    if "open_weights" in card and card["open_weights"] is not None and not isinstance(card["open_weights"], bool):
        out.append("open_weights: not true or false")
    out += [f"unknown field {k!r} (fields: {', '.join(FIELDS)})" for k in card if k not in FIELDS]
    return out


def clean_card(card) -> dict:
    """The fields of a valid card that have a value, text NFC-normalised and stripped; ``{}`` for no or a bad card."""
    if not isinstance(card, dict) or card_problems(card):
        return {}
    out = {}
    for key in FIELDS:
        value = card.get(key)
        if value is None:
            continue
        out[key] = unicodedata.normalize("NFC", value).strip() if isinstance(value, str) else value
    return out


def card_from_args(args) -> dict | None:
    """The card of ``hanyi submit``'s flags over the ``--model-card`` file; ``None`` when neither gives one.
    Raises ``ValueError`` naming the file or flag."""
    card: dict = {}
    if getattr(args, "model_card", None):
        try:
            with open(args.model_card, encoding="utf-8") as f:
                card = json.load(f)
        except (OSError, ValueError) as exc:
            raise ValueError(f"--model-card {args.model_card}: {getattr(exc, 'strerror', None) or exc}") from None
        if not isinstance(card, dict):
            raise ValueError(f"--model-card {args.model_card}: not a JSON object")
        if "parameters" in card and isinstance(card["parameters"], str):
            card["parameters"] = parse_parameters(card["parameters"])
    flags = {
        "name": args.name,
        "organisation": args.organisation,
        "link": args.link,
        "release_date": args.release_date,
        "training_data": args.training_data,
        "open_weights": args.open_weights,
    }
    card.update({k: v for k, v in flags.items() if v is not None})
    if args.params is not None:
        card["parameters"] = parse_parameters(args.params)
    if not card:
        return None
    problems = card_problems(card)
    if problems:
        raise ValueError("model card: " + "; ".join(problems))
    return clean_card(card)


def add_arguments(parser) -> None:
    """The model-card flags of ``hanyi submit``."""
    g = parser.add_argument_group("model card (shown on the board; every flag optional)")
    g.add_argument("--name", default=None, help='display name on the board, e.g. "Qwen2.5-VL 7B"')
    g.add_argument("--organisation", default=None, help="who made the model")
    g.add_argument("--params", default=None, metavar="COUNT", help="parameter count: 7B, 1.5B, 350M")
    weights = g.add_mutually_exclusive_group()
    weights.add_argument(
        "--open-weights", dest="open_weights", action="store_true", default=None, help="the weights are public"
    )
    weights.add_argument(
        "--closed-weights", dest="open_weights", action="store_false", help="the weights are not public (an API model)"
    )
    g.add_argument("--link", default=None, help="an http(s) page about the model")
    g.add_argument("--release-date", default=None, metavar="YYYY-MM-DD")
    g.add_argument("--training-data", default=None, metavar="TEXT", help="one line on the training data")
    g.add_argument("--model-card", default=None, metavar="FILE", help="the same fields from a JSON file")
