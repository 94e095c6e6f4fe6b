"""Time every answer parser on hostile answers: deep nesting, unclosed openers, 10^5-char inputs.

    python benchmarks/parsers_adversarial.py

Prints, per input, the slowest parser and its time (best of 3), and the outcome ("ok" = a defined result; an exception
name otherwise). Each parser must stay linear and never raise; tests/metrics/test_parser_properties.py checks the
results, this script the times.
"""

import importlib
import time

PARSERS = [
    ("hanyi.metrics.choice", "extract_leading_letter", {"letters": "ABCDEFG"}),
    ("hanyi.metrics.choice_punrebus", "extract_first_char_letter", {}),
    ("hanyi.metrics.cii_extract", "extract_answer_robust", {"options": ["甲", "乙", "丙", "丁"]}),
    ("hanyi.metrics.cii_ctc", "parse_ctc_score", {}),
    ("hanyi.metrics.free_text", "extract_labelled_answer", {}),
    ("hanyi.metrics.bbox", "parse_box", {}),
    ("hanyi.metrics.ranking", "parse_loglikelihood", {}),
    ("hanyi.metrics.short_answer_zh", "clean_answer", {}),
    ("hanyi.metrics.critique_json", "split_critique", {}),
    ("hanyi.metrics.judge", "parse_integer_score", {"low": 1, "high": 5}),
    ("hanyi.metrics.judge", "parse_yes_no", {}),
]
INPUTS = {
    '"{" x 8000': "{" * 8000,
    '"[" x 10^5': "[" * 100_000,
    "JSON nested 50 000 deep": "```json\n" + '{"a":' * 50_000 + "1" + "}" * 50_000 + "\n```",
    '"bbox":[ x 12 500': '"bbox":[' * 12_500,
    "10^5 digits": "9" * 100_000,
    "10^5 x A": "A" * 100_000,
}


def main():
    funcs = [(f"{m.rsplit('.', 1)[-1]}.{n}", getattr(importlib.import_module(m), n), kw) for m, n, kw in PARSERS]
    for label, text in INPUTS.items():
        worst = (0.0, "", "")
        for name, fn, kw in funcs:
            best, outcome = float("inf"), "ok"
            for _ in range(3):
                t0 = time.perf_counter()
                try:
                    fn(text, **kw)
                except Exception as exc:  # reported, not raised: the point of the script
                    outcome = type(exc).__name__
                best = min(best, time.perf_counter() - t0)
            worst = max(worst, (best, name, outcome))
        print(f"{label:26s} slowest: {worst[1]:38s} {worst[0] * 1000:8.1f} ms  {worst[2]}")


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description=__doc__.strip().splitlines()[0]).parse_args()
    main()
