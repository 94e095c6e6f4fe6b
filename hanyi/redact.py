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
    r"(?:api[_-]?key|token|password|passwd|secret|(?:private|access|client|signing|secret)[_-]?key)"
)
#: A JSON member whose name is secret-named: its whole value is masked by :func:`redact_tree`, whatever it holds (the
#: text form, ``"api_key": "..."``, is :func:`_mask_values`'s; a parsed document has the name and the value apart).
_SECRET_NAME = re.compile(rf"(?i){_KEY}|authorization")
#: Text without any of these cannot hold a credential the patterns below mask: returned as it is, unscanned.
_HINT = re.compile(r"(?i)key|token|passw|secret|authorization|bearer|basic|://")
_NAME = rf"(?:{_KEY}|authorization)"
# A secret-named key and its separator: ``name=``, ``"name": `` or ``'name' =``; ``key=`` only as a URL parameter.
# authorization=... is _HEADER's: its value may hold a space ("Bearer abc")
_ASSIGN = re.compile(rf"(?i)([\"']?)((?:{_KEY})|(?<=[?&;])key)\1(\s*([:=])\s*)")
# Where an unquoted value ends: white space, an HTML tag, a separator that starts the next ``name=`` item, or the
# unescaped quote that closes the JSON string the value sits in (a quote followed by ``,`` ``}`` ``]`` ``:`` or
# the end); any other quote is the value's.
_VALUE_END = re.compile(r'[\s<>]|[,;&](?=\s*[A-Za-z_][A-Za-z0-9_.-]*\s*=)|(?<!\\)"(?=[,}\]:]|$)')
_CLOSE = {"[": "]", "{": "}", "(": ")"}
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s'\"<>]+@")
_HEADER = re.compile(r"(?i)\b(authorization\s*[:=]\s*)(?:(bearer|basic|token|digest)\s+)?[^\s,;'\"<>]+")
_QUOTED_HEADER = re.compile(r"(?i)([\"']?authorization[\"']?\s*[:=]\s*)([\"'])((?:\\.|(?!\2).)*)\2")
_SCHEME = re.compile(r"(?i)\b(bearer\s+|basic\s+)[A-Za-z0-9._~+/=-]+")


def _quoted_end(text: str, start: int, quote: str) -> int | None:
    """The index of the quote that closes the string opened at ``start`` (backslash escapes skipped), or None."""
    i = start
    while i < len(text):
        if text.startswith(quote, i):
            return i
        i += 2 if text[i] == "\\" else 1
    return None


def _bracket_end(text: str, start: int) -> int | None:
    """The index just past the bracket that closes the one at ``start`` (quoted strings inside skipped), or None."""
    stack, i = [_CLOSE[text[start]]], start + 1
    while i < len(text) and stack:
        c = text[i]
        if c in "\"'":
            end = _quoted_end(text, i + 1, c)
            if end is None:
                return None
            i = end
        elif c in _CLOSE:
            stack.append(_CLOSE[c])
        elif c == stack[-1]:
            stack.pop()
        i += 1
    return i if not stack else None


def _mask_values(text: str) -> str:
    r"""Every value of a secret-named key masked whole, whatever it holds: a quoted value up to its closing quote
    (``\"`` inside it included, an escaped ``\"`` opening it too), a bracketed one (``[x, y]``, ``{...}``) up to
    its closing bracket, any other up to white space or the ``,`` / ``;`` / ``&`` that starts the next ``name=``
    item: quotes, commas and brackets inside a value are the value's. ``[REDACTED]`` (lmms-eval's mask) stays."""
    out, pos = [], 0
    for m in _ASSIGN.finditer(text):
        if m.start() < pos:
            continue  # inside a value masked already
        start = m.end()
        rest = text[start : start + 10]
        if rest.startswith("[REDACTED]"):
            continue
        quote = next((q for q in ('\\"', "\\'", '"', "'") if rest.startswith(q)), None)
        if m.group(4) == ":" and not m.group(1) and not quote and rest[:1] not in _CLOSE:
            continue  # "Secret: ..." in prose: only a quoted name or a quoted / bracketed value is an assignment
        keep_open, keep_close, end = "", "", None
        if quote:
            close = _quoted_end(text, start + len(quote), quote)
            if close is not None:
                keep_open, keep_close, end = quote, quote, close + len(quote)
        elif rest[:1] in _CLOSE:
            close = _bracket_end(text, start)
            if close is not None:
                keep_open, keep_close, end = rest[0], _CLOSE[rest[0]], close
        if end is None:
            stop = _VALUE_END.search(text, start)
            end = stop.start() if stop else len(text)
            if end == start:
                continue
        out.append(text[pos:start] + keep_open + MASK + keep_close)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def redact_text(text: str) -> str:
    """``text`` with every credential value replaced by ``***``.

    >>> redact_text("pretrained=m,API_KEY=abc123,max_new_tokens=5")
    'pretrained=m,API_KEY=***,max_new_tokens=5'
    >>> redact_text("https://bob:hunter2@judge.example/v1?key=s3cr3t&model=x")
    'https://***@judge.example/v1?key=***&model=x'
    >>> redact_text("hf_Token=hf_xyz Password=pw")
    'hf_Token=*** Password=***'
    >>> redact_text("password=pw\\"LEAK,token=[x, y],api_key='a,b',n=1")
    "password=***,token=[***],api_key='***',n=1"
    """
    if not isinstance(text, str) or not text or not _HINT.search(text):
        return text
    text = _USERINFO.sub(lambda m: m.group(1) + MASK + "@", text)
    text = _QUOTED_HEADER.sub(lambda m: m.group(1) + m.group(2) + MASK + m.group(2), text)
    text = _mask_values(text)
    text = _HEADER.sub(lambda m: m.group(1) + (m.group(2) + " " if m.group(2) else "") + MASK, text)
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
    """A copy of a JSON-like ``value`` with :func:`redact_text` applied to every string (keys included), and the whole
    value of a secret-named member (``api_key``, ``hf_token``, ``Authorization`` ...) masked: in a parsed document
    the name and its value are two strings, so neither alone looks like a credential to :func:`redact_text`.

    >>> redact_tree({"config": {"model_args": "token=t0k"}, "n": [1, "password=x"]})
    {'config': {'model_args': 'token=***'}, 'n': [1, 'password=***']}
    >>> redact_tree({"api_key": "sk-1", "auth": {"Password": 12}, "max_new_tokens": 5, "token": None})
    {'api_key': '***', 'auth': {'Password': '***'}, 'max_new_tokens': 5, 'token': None}
    """
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {
            redact_text(k) if isinstance(k, str) else k: _masked_member(v)
            if isinstance(k, str) and _SECRET_NAME.fullmatch(k)
            else redact_tree(v)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [redact_tree(v) for v in value]
    return value


def _masked_member(value):
    """The value of a secret-named member: ``***`` unless there is nothing to hide (``null``, an empty string) or
    lmms-eval masked it already (``[REDACTED]``)."""
    if value is None or value == "" or value == "[REDACTED]":
        return value
    return MASK
