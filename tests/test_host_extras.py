"""``hanyi eval``'s run-time extras last one run: lmms-eval's own callables are put back after it, so an in-process
``hanyi eval`` (a test, a notebook) leaves a later plain lmms-eval run untouched (review: they leaked across tests)."""

from __future__ import annotations

import pytest

pytest.importorskip("lmms_eval")


def _current():
    from hanyi.host import _host_callables

    return [cls.__dict__[name] for cls, name in _host_callables()]


def test_the_extras_are_installed_inside_and_lmms_eval_s_own_after():
    from hanyi.host import eval_extras

    before = _current()
    with eval_extras():
        inside = _current()
        assert all(a is not b for a, b in zip(before, inside, strict=True))
    assert all(a is b for a, b in zip(before, _current(), strict=True))


def test_an_in_process_hanyi_eval_puts_lmms_eval_back(monkeypatch):
    import lmms_eval.cli.dispatch

    from hanyi.cli import cmd_eval

    before, seen = _current(), []
    monkeypatch.setattr(lmms_eval.cli.dispatch, "main", lambda: seen.append(_current()) or 0)
    assert cmd_eval(["--model", "replay", "--tasks", "cii_none"]) == 0
    assert seen and all(a is not b for a, b in zip(before, seen[0], strict=True))  # the run had the extras
    assert all(a is b for a, b in zip(before, _current(), strict=True))  # and lmms-eval has its own back


def test_a_failing_run_puts_lmms_eval_back_too(monkeypatch):
    import lmms_eval.cli.dispatch

    from hanyi.cli import cmd_eval

    before = _current()

    def boom():
        raise RuntimeError("a run that raised")

    monkeypatch.setattr(lmms_eval.cli.dispatch, "main", boom)
    with pytest.raises(RuntimeError):
        cmd_eval(["--model", "replay", "--tasks", "cii_none"])
    assert all(a is b for a, b in zip(before, _current(), strict=True))
