"""Secrets out of shared files and logs: redact credentials in ``model_args`` strings, URLs and nested values.

Reports (``report.html``/``.md``/``.json``), submission files and log lines quote ``model_args`` and judge URLs, which
may carry a credential. Every such text goes through :func:`redact_text` (or :func:`redact_tree` for a JSON value):

* ``api_key=``, ``apikey=``, ``token=`` (also ``hf_token=``, ``access_token=`` ...), ``password=``, ``secret=``,
  ``private_key=`` / ``access_key=`` / ``client_key=`` ..., ``authorization=`` in any case, as a ``model_args`` item,
  a URL query parameter, a quoted assignment (``api_key="..."``) or a JSON member (``"api_key": "..."``), and ``key=``
  as a URL query parameter; a value lmms-eval already wrote as ``[REDACTED]`` stays as it is;
* the user-info of a URL (``https://user:pw@host`` -> ``https://***@host``), an ``@`` in the password included;
* an ``Authorization:`` header value, ``Bearer ...`` and ``Basic ...`` (base64 of ``user:password``) wherever they
  appear.

The value becomes ``***``; the name stays, so a reader still sees that a key was given. :func:`redact_secrets` also
masks the known values of a process's secrets and the forms derived from them (base64 ``user:password``, URL
encoding), for text that echoes them without a name (a server's error body).
"""

from __future__ import annotations

import re

MASK = "***"
# A name is tried only from the start of its run of name characters (the look-behind), and grows lazily: the
# unanchored greedy form backtracked over every position of long runs (4.4 s on the sample report's HTML; 0.1 s now).
_KEY = (
    r"(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*?"
    r"(?:api[_-]?key|token|password|passwd|secret|(?:private|access|client|signing)[_-]?key)"
)
#: Text without any of these cannot hold a credential the patterns below mask: returned as it is, unscanned.
_HINT = re.compile(r"(?i)key|token|passw|secret|authorization|bearer|basic|://")
_NAME = rf"(?:{_KEY}|authorization)"
# authorization=... is _HEADER's: its value may hold a space ("Bearer abc")
_NAMED = re.compile(rf"(?i)((?:{_KEY})|(?<=[?&;])key)(\s*=\s*)(?!\[REDACTED\])([^,&\s;'\"<>)}}\]]+)")
_QUOTED = re.compile(rf"(?i)([\"']?(?:{_NAME})[\"']?\s*[:=]\s*)([\"'])(?!\[REDACTED\]\2)(.*?)\2")
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s'\"<>]+@")
_HEADER = re.compile(r"(?i)\b(authorization\s*[:=]\s*)(?:(bearer|basic|token|digest)\s+)?[^\s,;'\"<>]+")
_SCHEME = re.compile(r"(?i)\b(bearer\s+|basic\s+)[A-Za-z0-9._~+/=-]+")


def redact_text(text: str) -> str:
    """``text`` with every credential value replaced by ``***``.

    >>> redact_text("pretrained=m,API_KEY=abc123,max_new_tokens=5")
    'pretrained=m,API_KEY=***,max_new_tokens=5'
    >>> redact_text("https://bob:hunter2@judge.example/v1?key=s3cr3t&model=x")
    'https://***@judge.example/v1?key=***&model=x'
    >>> redact_text("hf_Token=hf_xyz Password=pw")
    'hf_Token=*** Password=***'
    """
    if not isinstance(text, str) or not text or not _HINT.search(text):
        return text
    text = _USERINFO.sub(lambda m: m.group(1) + MASK + "@", text)
    text = _QUOTED.sub(lambda m: m.group(1) + m.group(2) + MASK + m.group(2), text)
    text = _HEADER.sub(lambda m: m.group(1) + (m.group(2) + " " if m.group(2) else "") + MASK, text)
    text = _NAMED.sub(lambda m: m.group(1) + m.group(2) + MASK, text)
    return _SCHEME.sub(lambda m: m.group(1) + MASK, text)


def derived_forms(secret: str, user: str | None = None) -> list[str]:
    """``secret`` and the forms a request or an echo may carry it in: URL-encoded, and with ``user`` the base64
    ``user:secret`` of HTTP Basic auth. Longest first, so a longer form is masked before a part of it.

    >>> derived_forms("p@ss", "u")
    ['dTpwQHNz', 'p%40ss', 'p@ss']
    """
    import base64
    from urllib.parse import quote, unquote

    if not secret:
        return []
    forms = {secret, quote(secret, safe=""), unquote(secret)}
    if user is not None:
        plain = unquote(secret)
        forms |= {
            base64.b64encode(f"{unquote(user)}:{plain}".encode()).decode(),
            base64.b64encode(f"{user}:{secret}".encode()).decode(),
        }
    return sorted((f for f in forms if f), key=lambda f: (-len(f), f))


def redact_secrets(text: str, secrets) -> str:
    """:func:`redact_text`, then every known secret value in ``secrets`` (see :func:`derived_forms`) masked.

    >>> redact_secrets('echo: {"headers": {"authorization": "Basic dTpwQHNz"}} p%40ss', derived_forms("p@ss", "u"))
    'echo: {"headers": {"authorization": "***"}} ***'
    """
    if not isinstance(text, str) or not text:
        return text
    text = redact_text(text)
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    return text


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
