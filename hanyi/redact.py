"""Secrets out of shared files and logs: redact credentials in ``model_args`` strings, URLs and nested values.

Reports (``report.html``/``.md``/``.json``), submission files and log lines quote ``model_args`` and judge URLs, which
may carry a credential. Every such text goes through :func:`redact_text` (or :func:`redact_tree` for a JSON value):

* ``api_key=``, ``apikey=``, ``token=`` (also ``hf_token=``, ``access_token=`` ...), ``password=``, ``secret=`` in any
  case, as a ``model_args`` item or a URL query parameter, and ``key=`` as a URL query parameter;
* the user-info of a URL (``https://user:pw@host`` -> ``https://***@host``);
* an ``Authorization: Bearer ...`` value.

The value becomes ``***``; the name stays, so a reader still sees that a key was given.
"""

from __future__ import annotations

import re

MASK = "***"
_NAMED = re.compile(
    r"(?i)((?:[A-Za-z0-9_.-]*(?:api[_-]?key|token|password|passwd|secret))|(?<=[?&;])key)(\s*=\s*)([^,&\s;'\"<>)}\]]+)"
)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s'\"<>]+@")
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]+")


def redact_text(text: str) -> str:
    """``text`` with every credential value replaced by ``***``.

    >>> redact_text("pretrained=m,API_KEY=abc123,max_new_tokens=5")
    'pretrained=m,API_KEY=***,max_new_tokens=5'
    >>> redact_text("https://bob:hunter2@judge.example/v1?key=s3cr3t&model=x")
    'https://***@judge.example/v1?key=***&model=x'
    >>> redact_text("hf_Token=hf_xyz Password=pw")
    'hf_Token=*** Password=***'
    """
    if not isinstance(text, str) or not text:
        return text
    text = _USERINFO.sub(lambda m: m.group(1) + MASK + "@", text)
    text = _NAMED.sub(lambda m: m.group(1) + m.group(2) + MASK, text)
    return _BEARER.sub(lambda m: m.group(1) + MASK, text)


def redact_tree(value):
    """A copy of a JSON-like ``value`` with :func:`redact_text` applied to every string (keys included).

    >>> redact_tree({"config": {"model_args": "token=t0k"}, "n": [1, "password=x"]})
    {'config': {'model_args': 'token=***'}, 'n': [1, 'password=***']}
    """
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {redact_text(k) if isinstance(k, str) else k: redact_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_tree(v) for v in value]
    return value
