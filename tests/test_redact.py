"""Every derived form of a secret is masked (issue 29, item 8): table of inputs and what may remain."""

from __future__ import annotations

import pytest

from hanyi.redact import derived_forms, redact_secrets, redact_text

CASES = [
    # (text, secret that must not survive, what must survive)
    ("https://u:p@ss@judge.example/v1", "ss@", "https://***@judge.example/v1"),
    ("Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz", "Authorization: Basic ***"),
    ("Authorization=Bearer sk-abc", "sk-abc", "Authorization=Bearer ***"),
    ("x=1,Authorization=sk-abc,y=2", "sk-abc", "x=1,Authorization=***,y=2"),
    ('api_key="sk-123 456"', "456", 'api_key="***"'),
    ("{'api_key': 'sk-1'}", "sk-1", "{'api_key': '***'}"),
    ('{"api_key": "sk-1", "n": 2}', "sk-1", '{"api_key": "***", "n": 2}'),
    ("private_key=pk-1,access_key=ak-1", "k-1", "private_key=***,access_key=***"),
    ("echo: bearer sk-live-9", "sk-live-9", "echo: bearer ***"),
    ("model_args api_key=[REDACTED],pretrained=m", "***]", "api_key=[REDACTED],pretrained=m"),
]


@pytest.mark.parametrize("text, gone, kept", CASES)
def test_every_form_of_a_secret_is_masked(text, gone, kept):
    out = redact_text(text)
    assert gone not in out and kept in out


def test_known_secret_values_are_masked_in_every_derived_form():
    forms = derived_forms("p@ss word", "bob")
    text = "server said: Ym9iOnBAc3Mgd29yZA== and p%40ss%20word and p@ss word"
    assert redact_secrets(text, forms) == "server said: *** and *** and ***"
