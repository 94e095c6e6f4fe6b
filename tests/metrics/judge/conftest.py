"""Fixtures of the judge tests: a fake judge served on loopback, and no judge configured from the environment (so a
developer's own HANYI_JUDGE_* settings never reach these tests). Scoped to this folder: other metric tests keep
their environment."""

from __future__ import annotations

import pytest

from hanyi.metrics.judge.config import ENV_VARS

from .helpers import judge_server


@pytest.fixture
def fake_judge():
    with judge_server.serve_fake_judge() as server:
        yield server


@pytest.fixture(autouse=True)
def _no_judge_env(monkeypatch):
    for var, _ in ENV_VARS.values():
        monkeypatch.delenv(var, raising=False)
