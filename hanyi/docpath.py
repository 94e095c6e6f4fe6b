"""Where a documentation page is on this machine, for messages that send a user to it.

A message that says ``docs/judge.md`` helps only in a clone: an installed package has its docs under
``<site-packages>/hanyi/docs/`` (pyproject.toml force-includes them in the wheel). :func:`doc` names the copy that
exists here, so a hint from ``hanyi doctor`` or a warning can be followed as printed.
"""

from __future__ import annotations

import os

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def doc(page: str) -> str:
    """The path of ``page`` (e.g. ``"judge.md"``) that exists here: the installed package's copy, else the clone's
    ``docs/``; ``docs/<page>`` when neither does (a page named wrong is caught by the tests, not here).

    >>> doc("judge.md").endswith(os.path.join("docs", "judge.md"))
    True
    """
    for root in (os.path.join(_PACKAGE, "docs"), os.path.join(os.path.dirname(_PACKAGE), "docs")):
        path = os.path.join(root, page)
        if os.path.isfile(path):
            return path
    return f"docs/{page}"
