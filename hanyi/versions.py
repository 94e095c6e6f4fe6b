"""Which releases of the host packages hanyi runs with: tested, untested, or known to break.

``hanyi doctor`` prints :func:`check` for lmms-eval, lm-eval, filelock, transformers, datasets and torch, and the
start-up hook stops an lmms-eval run at task indexing (before any model is loaded) when a known-bad release is
installed (:func:`fail_fast`). Three states per package:

* ``ok``: the release the lock file pins (``requirements/lock.txt``, Python 3.11), which CI tests;
* ``untested``: allowed by ``pyproject.toml`` and not known to break, but not the tested release;
* ``unsupported``: outside what hanyi declares it supports (pyproject.toml: lmms-eval 0.7.3, lm-eval 0.4.13,
  transformers from the oldest tested release on, lmms-eval's own lower bounds), with the ``pip install`` that fixes it;
* ``bad``: a release known to break the harness or hanyi, with the reason and the ``pip install`` that fixes it.

Only releases with a known failure are ``bad``, and only those get an upper bound in ``pyproject.toml``: no blanket
upper bounds. A package that is not installed is ``missing`` (lm-eval is optional).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

#: Releases pinned by requirements/lock.txt for Python 3.11, the CI environment (tests/test_versions.py checks).
TESTED = {
    "lmms-eval": "0.7.3",
    "lm-eval": "0.4.13",
    "filelock": "4.2.12",
    "transformers": "5.24.0",
    "datasets": "5.2.0",
    "torch": "2.13.0",
}

#: Where the lock pins another release for Python 3.10 (uv resolves the newest each Python allows); constraints.txt
#: pins the same, so `pip install -c constraints.txt .` gives the tested environment on every Python.
TESTED_PYTHON_3_10 = {"filelock": "4.1.0", "transformers": "5.20.2"}


def release_tested(package: str, python: tuple[int, int] | None = None) -> str:
    """The release of ``package`` the tests ran with on ``python`` (default: this interpreter).

    >>> release_tested("transformers", (3, 10)), release_tested("transformers", (3, 12))
    ('5.20.2', '5.24.0')
    """
    import sys

    if (python or sys.version_info[:2]) < (3, 11) and package in TESTED_PYTHON_3_10:
        return TESTED_PYTHON_3_10[package]
    return TESTED[package]


#: The oldest transformers whose tiny-LLaVA path is tested (`make test-oldest`, requirements/lock-oldest.txt).
TRANSFORMERS_OLDEST = "5.0.0"


@dataclass(frozen=True)
class Range:
    """A range of releases that breaks (``bad``) or is not supported (``unsupported``), why, and what to install."""

    package: str
    specifier: str  # PEP 440, e.g. ">=4.3"
    reason: str
    fix: str  # the requirement to install instead, e.g. "filelock>=3.15.2,<4.3"
    state: str = "bad"


KNOWN_BAD = (
    Range(
        "filelock",
        ">=4.3",
        "lmms_eval/evaluator.py:134 (_enable_reentrant_filelocks) imports filelock._api, which 4.3 removed",
        "filelock>=3.15.2,<4.3",
    ),
    Range(
        "filelock",
        "<3.15.2",
        "lmms_eval/evaluator.py:151 patches filelock._api.FileLockMeta, which came in 3.15.2",
        "filelock>=3.15.2,<4.3",
    ),
)

#: Outside what hanyi supports: not known to break, but not what it is written and tested for.
UNSUPPORTED = (
    Range("lmms-eval", "!=0.7.3", "hanyi is written for lmms-eval 0.7.3", "lmms-eval==0.7.3", "unsupported"),
    Range("lm-eval", "!=0.4.13", "hanyi's lm-eval tasks are written for 0.4.13", "lm-eval==0.4.13", "unsupported"),
    Range(
        "transformers",
        f"<{TRANSFORMERS_OLDEST}",
        f"older than the oldest tested release, {TRANSFORMERS_OLDEST} (make test-oldest)",
        f"transformers>={TRANSFORMERS_OLDEST}",
        "unsupported",
    ),
    Range("datasets", "<2.19.0", "lmms-eval 0.7.3 requires datasets>=2.19.0", "datasets>=2.19.0", "unsupported"),
    Range("torch", "<2.1", "lmms-eval 0.7.3 requires torch>=2.1.0", "torch>=2.1", "unsupported"),
)

#: Which packages ``check`` reports, in order; lm-eval may be absent.
PACKAGES = tuple(TESTED)
OPTIONAL = frozenset({"lm-eval"})


@dataclass(frozen=True)
class Status:
    package: str
    installed: str | None
    state: str  # "ok", "untested", "unsupported", "bad", "missing"
    tested: str
    detail: str
    requirement: str | None  # what to install instead of a bad or missing release, e.g. "filelock>=3.15.2,<4.3"

    @property
    def fix(self) -> str | None:
        """The one command that fixes a bad or missing package."""
        return f"pip install '{self.requirement}'" if self.requirement else None

    def as_dict(self) -> dict:
        return {**asdict(self), "fix": self.fix}

    def line(self) -> str:
        """One line for ``hanyi doctor`` and the start-up check."""
        have = self.installed or "not installed"
        if self.state == "ok":
            return f"{self.package} {have} (the tested release)"
        if self.state == "untested":
            return f"{self.package} {have}: not the tested release ({self.tested}), not known to break"
        text = f"{self.package} {self.installed}: {self.detail}" if self.installed else f"{self.package}: {self.detail}"
        return f"{text}; fix: {self.fix}" if self.fix else text


def installed_version(package: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _release(version: str) -> str:
    """``2.13.0+cpu`` -> ``2.13.0`` (local builds count as their release)."""
    return version.split("+", 1)[0]


def status(package: str, installed: str | None) -> Status:
    """The state of ``package`` at version ``installed`` (``None``: not installed).

    >>> status("filelock", "4.3.1").state, status("filelock", "4.3.1").fix
    ('bad', "pip install 'filelock>=3.15.2,<4.3'")
    >>> status("filelock", release_tested("filelock")).state, status("filelock", "4.0.8").state
    ('ok', 'untested')
    >>> status("torch", "2.13.0+cpu").state
    'ok'
    >>> status("transformers", "4.57.6").state, status("lm-eval", None).state
    ('unsupported', 'missing')
    """
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    tested = release_tested(package)
    if installed is None:
        requirement = None if package in OPTIONAL else f"{package}=={tested}"
        detail = "not installed (optional: the lm-eval tasks need it)" if package in OPTIONAL else "not installed"
        return Status(package, None, "missing", tested, detail, requirement)
    try:
        version = Version(_release(installed))
    except InvalidVersion:
        return Status(package, installed, "untested", tested, "unparsable version", None)
    for known in KNOWN_BAD + UNSUPPORTED:
        if known.package == package and version in SpecifierSet(known.specifier):
            return Status(package, installed, known.state, tested, known.reason, known.fix)
    state = "ok" if version == Version(tested) else "untested"
    return Status(package, installed, state, tested, "", None)


def check(packages=PACKAGES) -> list[Status]:
    """The state of every host package as installed here."""
    return [status(p, installed_version(p)) for p in packages]


def bad_message(statuses) -> str | None:
    """One line naming every known-bad package, its version and the fix; ``None`` when there is none."""
    bad = [s for s in statuses if s.state == "bad"]
    if not bad:
        return None
    names = "; ".join(f"{s.package} {s.installed} ({s.detail})" for s in bad)
    fixes = " ".join(dict.fromkeys(f"'{s.requirement}'" for s in bad))
    return f"hanyi: cannot run with {names}. Fix: pip install {fixes}"


def fail_fast(packages=("filelock", "lmms-eval", "transformers", "datasets", "torch")) -> None:
    """Stop with one line (``SystemExit``) when a known-bad release of a package lmms-eval runs with is installed."""
    message = bad_message(check(packages))
    if message:
        raise SystemExit(message)
