"""Every derived form of a secret is masked: table of inputs and what may remain."""

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


#: A secret-named key's value in every quoting style a model_args string, a JSON text or a URL may give it; the
#: whole value goes, whatever quotes, commas, brackets or escapes it holds. ``LEAK`` is the part that must not stay.
WHOLE_VALUES = [
    'password=pw"LEAK',
    'pretrained=m,password=pw"LEAK,max_new_tokens=5',
    "api_key='a,LEAK'",
    "pretrained=m,api_key='a,LEAK',batch_size=1",
    'api_key="a,\\"LEAK"',
    "token=[x,LEAK]",
    "token=[x, 'a,LEAK'],n=1",
    'secret={"a": "b", "c": "LEAK"},n=1',
    "access_key=(x,LEAK)",
    '{"api_key": "sk\\"LEAK"}',
    "{'token': ['x', 'LEAK']}",
    '"model_args": "pretrained=m,password=pw\\"LEAK,n=1"',
    '"model_args": "password=pw\\"LEAK"',
    'https://judge.example/v1?token=ab"LEAK&model=x',
    "https://judge.example/v1?key=ab'LEAK;n=1",
    "hf_token=ab&LEAK",
    "password=ab;LEAK",
    "password=pw&quot;LEAK",
    'api_key=\\"LEAK\\"',
]


@pytest.mark.parametrize("text", WHOLE_VALUES)
def test_a_secret_named_keys_whole_value_is_masked_whatever_it_holds(text):
    out = redact_text(text)
    assert "LEAK" not in out and "***" in out
    assert redact_text(out) == out  # masking is idempotent


def test_the_items_around_a_masked_value_stay_and_a_json_text_stays_json():
    import json

    assert redact_text('pretrained=m,password=pw"LEAK,max_new_tokens=5') == (
        "pretrained=m,password=***,max_new_tokens=5"
    )
    text = json.dumps({"model_args": 'password=pw"LEAK', "n": [1, {"token": "a,b"}]})
    assert json.loads(redact_text(text)) == {"model_args": "password=***", "n": [1, {"token": "***"}]}
    assert redact_text("Secret: plain prose stays") == "Secret: plain prose stays"
