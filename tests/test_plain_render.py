"""Plain-substitution templates are joined without Jinja: the text must be Jinja's, byte for byte, for every template
the package ships, over the sample docs and over values chosen to break a naive join."""

from __future__ import annotations

import glob
import itertools
import os

import jinja2
import pytest

from hanyi import TASKS_DIR
from hanyi.tasks import _common


class Shown:
    """A value that is neither text nor a number: Jinja outputs ``str(value)``."""

    def __str__(self) -> str:
        return "shown{{ x }}\n"


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text")


ADVERSARIAL = [
    "", " ", "\n", "a\n", "a\n\n", "\r\n", "{{ x }}", "{% if %}", "{#", "}}", "'\"<&>", "中文；答案：是", "\u0301e",
    None, 0, 1.5, -2, True, False, [], ["a"], {"k": 1}, Shown(), "\t tail \t",
]  # fmt: skip


def _templates() -> list[tuple[str, str]]:
    found = []
    for path in sorted(glob.glob(os.path.join(TASKS_DIR, "*", "templates", "**", "*.jinja"), recursive=True)):
        benchmark = os.path.relpath(path, TASKS_DIR).split(os.sep)[0]
        found.append((benchmark, os.path.relpath(path, os.path.join(TASKS_DIR, benchmark, "templates"))))
    return found


def _jinja(benchmark: str, template: str, variables: dict) -> str:
    return _common._template(benchmark, template).render(**variables)


def _names(parts) -> set:
    names = set()
    for part in parts:
        if type(part) is not str:
            names.add(part[0])
            for branch in part[1:]:
                names |= _names(branch)
    return names


def _sample_rows(benchmark: str) -> list[dict]:
    """Every sample doc of ``benchmark`` as plain values (image bytes and nested cells left out)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = []
    folder = os.path.join(os.path.dirname(_common.__file__), os.pardir, "data", "sample", benchmark)
    for path in sorted(glob.glob(os.path.join(folder, "**", "*.parquet"), recursive=True)):
        table = pq.read_table(path)
        keep = [f.name for f in table.schema if not pa.types.is_nested(f.type) and not pa.types.is_binary(f.type)]
        rows += table.select(keep).to_pylist()
    return rows


PLAIN = [(b, t) for b, t in _templates() if _common._plain_parts(b, t) is not None]


def test_the_shipped_prompts_that_must_be_fast_are_plain():
    """The served path's prompts (UNPIE, CVLUE) take the join; loops, includes and filters do not."""
    plain = set(PLAIN)
    for name in ("grounding_image.jinja", "grounding_text.jinja", "disambiguation.jinja", "judge_same_pun.jinja"):
        assert ("unpie", name) in plain
    assert ("cvlue", "vqa.jinja") in plain and ("cvlue", "vg_norm1.jinja") in plain
    assert ("cii", "none.jinja") not in plain and ("cvlue", "vd.jinja") not in plain  # include; loop
    assert ("punrebus", "fewshot_answer.jinja") not in plain  # filter, attribute


@pytest.mark.parametrize(("benchmark", "template"), PLAIN)
def test_plain_templates_render_as_jinja_over_sample_docs_and_odd_values(benchmark, template):
    names = sorted(_names(_common._plain_parts(benchmark, template)))
    cases = []
    for row in _sample_rows(benchmark):  # each doc's own fields, the rest from the odd values in turn
        cases.append({n: row.get(n, ADVERSARIAL[i % len(ADVERSARIAL)]) for i, n in enumerate(names)})
    for combo in itertools.islice(itertools.product(ADVERSARIAL, repeat=len(names)), 3000):
        cases.append(dict(zip(names, combo)))
    for values in ADVERSARIAL:  # every name the same value, plus a variable the template does not read
        cases.append(dict.fromkeys(names, values) | {"unread": Unprintable()})
    for variables in cases:
        assert _common.render(benchmark, template, **variables) == _jinja(benchmark, template, variables), variables


@pytest.mark.parametrize(("benchmark", "template"), PLAIN)
def test_plain_templates_fail_as_jinja_does(benchmark, template):
    """A missing variable is Jinja's StrictUndefined error; a value whose text fails raises its own error."""
    names = sorted(_names(_common._plain_parts(benchmark, template)))
    for missing in names:
        with pytest.raises(jinja2.UndefinedError, match=missing):
            _common.render(benchmark, template, **{n: "v" for n in names if n != missing})
    output_names = [p[0] for p in _common._plain_parts(benchmark, template) if type(p) is tuple and len(p) == 1]
    if output_names:
        with pytest.raises(RuntimeError, match="no text"):
            _common.render(benchmark, template, **dict.fromkeys(names, Unprintable()))


SOURCES = {
    "trailing.jinja": ("{{ a }}\n", True),
    "two_trailing.jinja": ("x {{ a }}\n\n", True),
    "control.jinja": ("{#- note -#}\n  {{- a -}}  \n{{ b }}{# c #} end", True),
    "const.jinja": ('{{ "lit" }}{{ 3 }}{{ a }}', True),
    "raw.jinja": ("{% raw %}{{ a }}{% endraw %}{{ a }}", True),
    "if_else.jinja": ("{% if a %}[{{ a }}]{% else %}-{{ b }}-{% endif %}\n", True),
    "nested.jinja": ("{% if a %}{% if b %}{{ b }}{% endif %}|{% endif %}.", True),
    "filter.jinja": ("{{ a | upper }}", False),
    "attribute.jinja": ("{{ a.b }}", False),
    "elif.jinja": ("{% if a %}1{% elif b %}2{% endif %}", False),
    "test.jinja": ("{% if a == b %}1{% endif %}", False),
    "loop.jinja": ("{% for x in a %}{{ x }}{% endfor %}", False),
    "global.jinja": ("{{ range }}", True),
    "self.jinja": ("{{ self }}{% if loop %}{% endif %}", False),
    "if_self.jinja": ("{% if self %}x{% endif %}", False),
}


@pytest.fixture
def fake_benchmark(tmp_path, monkeypatch):
    """A benchmark folder of edge-case templates, under hanyi's own environment settings."""
    (tmp_path / "fake" / "templates").mkdir(parents=True)
    for name, (source, _) in SOURCES.items():
        (tmp_path / "fake" / "templates" / name).write_text(source, encoding="utf-8")
    monkeypatch.setattr(_common, "TASKS_DIR", str(tmp_path))
    caches = (_common._environment, _common._template, _common._plain_parts, _common._plain_join,
              _common.template_reads, _common._key_names, _common._render_key)  # fmt: skip
    for cache in caches:
        cache.cache_clear()
    yield "fake"
    for cache in caches:
        cache.cache_clear()


def test_edge_case_templates_equal_jinja(fake_benchmark):
    """Whitespace control, the dropped trailing newline, constants, raw blocks and ifs are joined as Jinja renders
    them; a global (``range``) missing from the variables falls back to Jinja; the rest is never joined."""
    for name, (_, plain) in SOURCES.items():
        assert (_common._plain_parts(fake_benchmark, name) is not None) is plain, name
        for a, b in itertools.product(ADVERSARIAL, ["", "b", None, 0, "x\n"]):
            variables = {"a": a, "b": b}
            try:
                expected = _jinja(fake_benchmark, name, variables)
            except Exception as exc:  # e.g. a filter on None, a loop over a number
                with pytest.raises(type(exc)):
                    _common.render(fake_benchmark, name, **variables)
                continue
            assert _common.render(fake_benchmark, name, **variables) == expected, (name, variables)
    assert "range" in _common.render(fake_benchmark, "global.jinja")


def test_render_once_joins_a_plain_template_each_time(fake_benchmark):
    """No cache entry for a plain template: the join costs what a hit does. A template with a loop is still cached."""
    text = _common.render_once(fake_benchmark, "if_else.jinja", a="A pun.", b="", lang="de")
    assert text == "[A pun.]" and _common._render_key.cache_info().currsize == 0
    one = _common.render_once(fake_benchmark, "loop.jinja", a="ab", b="unread")
    assert one == "ab" and _common._render_key.cache_info().currsize == 1
    assert _common.render_once(fake_benchmark, "loop.jinja", a="ab") is one
