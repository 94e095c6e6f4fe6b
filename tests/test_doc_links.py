"""Every relative link in README.md, docs/ and the task folders' READMEs resolves in the source tree.

A link must work where the Markdown is read as a page: on GitHub and in a checkout. The task READMEs name the copy
the wheel ships (``hanyi/docs/<bench>.md``) as a path in backticks, not as a link: no relative link from
``hanyi/tasks/<bench>/`` resolves both in a checkout (``../../../docs/``) and in an installed package
(``../../docs/``), and the five ``../../docs/`` links were broken in the source tree. Fragments (``#section``) must
name a heading of the target, with GitHub's anchor rules.
"""

from __future__ import annotations

import glob
import os
import re

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = sorted(
    os.path.relpath(p, REPO)
    for pattern in ("README.md", "docs/**/*.md", "hanyi/tasks/*/README.md", "hanyi/lm_eval_tasks/*/README.md")
    for p in glob.glob(os.path.join(REPO, pattern), recursive=True)
)
_CODE = re.compile(r"^```.*?^```|`[^`\n]*`", re.S | re.M)
_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)|^\[[^\]]+\]:\s*(\S+)", re.M)


def links(text: str) -> list[str]:
    """Relative link targets of Markdown ``text``: inline ``[x](t)``, images, reference definitions; not in code.

    >>> links("[a](b.md#c) `[d](e)` [f](https://g) ![i](img.png)\\n[r]: ../x.md\\n```\\n[z](y)\\n```")
    ['b.md#c', 'img.png', '../x.md']
    """
    found = [a or b for a, b in _LINK.findall(_CODE.sub("", text))]
    return [t for t in found if not re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", t)]


def anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation but ``-`` and ``_`` dropped, spaces to ``-``, ``-1`` ...
    for repeats.

    >>> sorted(anchors("# A b\\n## Model wrappers we have checked\\n## `x_y` (z)!\\n# A b"))
    ['a-b', 'a-b-1', 'model-wrappers-we-have-checked', 'x_y-z']
    """
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return out


def _read(path: str) -> str:
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
        return f.read()


def test_the_pages_are_found():
    assert "README.md" in PAGES and "docs/dev/discovery.md" in PAGES
    from hanyi import BENCHMARKS

    assert sum(p.startswith("hanyi/tasks/") for p in PAGES) == len(BENCHMARKS) and len(PAGES) > 20


@pytest.mark.parametrize("page", PAGES)
def test_every_relative_link_resolves_in_the_source_tree(page):
    text = _read(page)
    broken = []
    for target in links(text):
        path, _, fragment = target.partition("#")
        resolved = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if not os.path.exists(os.path.join(REPO, resolved)):
            broken.append(f"{target} (no {resolved})")
        elif fragment and resolved.endswith(".md") and fragment not in anchors(_read(resolved)):
            broken.append(f"{target} (no heading #{fragment} in {resolved})")
    assert not broken, f"{page}: broken links: {'; '.join(broken)}"


def test_the_check_catches_a_wheel_only_link(tmp_path):
    """The form the task READMEs used: resolves only in an installed package, where docs/ ships as hanyi/docs/."""
    page = "hanyi/tasks/cii/README.md"
    target = links("[hanyi/docs/cii.md](../../docs/cii.md)")[0]
    assert not os.path.exists(os.path.join(REPO, os.path.normpath(os.path.join(os.path.dirname(page), target))))
