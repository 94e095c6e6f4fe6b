# hanyi developer commands. `make demo` and `make test` work on a fresh machine: they build .venv first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.hanyi-installed
DEMO_OUT ?= out/demo
# Not under a dot-folder: lmms-eval names the results folder after the last two parts of the model path
# (out/demo/models__tiny-llava/), and a hidden .cache__tiny_llava/ is where nobody looks.
TINY := out/models/tiny-llava
OFFLINE := HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1
DEMO_MODEL := --model llava_hf --model_args pretrained=$(TINY),device_map=cpu,dtype=float32 --device cpu

.PHONY: install system-deps test test-fast test-latest test-oldest demo lint lock samples clean venv-tv

# Development and CI install from the lock (requirements/lock.txt, made by `make lock`): every package pinned and
# hashed, installed without resolving (--no-deps), so a new release of anything changes nothing here. torch is the
# CPU wheel from PyTorch's CPU index (TORCH_INDEX), installed on its own; torchvision and timm stay out (docs/install.md). The venv is
# made anew whenever the lock changes, so nothing outside the lock is left in it.
LOCK := requirements/lock.txt
# The CPU torch: PyPI's torch==2.13.0 is the CUDA build (it pulls nvidia-* wheels of several GB), so the +cpu wheel
# comes from PyTorch's CPU index (tests/test_install_commands.py holds README, docs/install.md and this to it).
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
TORCH_CPU := torch==2.13.0+cpu
# One line and exit 1 when the venv ended up with a CUDA torch on a machine without a GPU.
define TORCH_CHECK
import sys, torch, lmms_eval, hanyi
if torch.version.cuda and not torch.cuda.is_available():
    sys.exit(f"make: torch {torch.__version__} is a CUDA {torch.version.cuda} build on a machine without a GPU; install the CPU wheel: pip install --index-url $(TORCH_INDEX) $(TORCH_CPU)")
endef
export TORCH_CHECK
UV_VERSION := 0.13.9
$(STAMP): pyproject.toml constraints.txt $(LOCK) hanyi/_hanyi_autohook.pth
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	grep -v -- '--hash' $(LOCK) | sed -e 's/ *\\$$//' -e '/^ *#/d' -e '/^$$/d' > $(VENV)/build-constraints.txt
	PIP_CONSTRAINT=$(VENV)/build-constraints.txt $(BIN)/pip install -q --no-deps --require-hashes -r $(LOCK)
	$(BIN)/pip install -q --no-deps --index-url $(TORCH_INDEX) $(TORCH_CPU)
	$(BIN)/pip install -q --no-deps --no-build-isolation -e .
	@# Only lmms-eval's torchvision and timm may be missing (left out on purpose, see above).
	@$(BIN)/pip check 2>&1 | grep -v -E '^lmms-eval [0-9.]+ requires (torchvision|timm), which is not installed\.$$' \
	  | grep -v '^WARNING: ' | { ! grep .; } || { echo "pip check: the environment is inconsistent (above)"; exit 1; }
	@$(BIN)/python -c "$$TORCH_CHECK"
	touch $(STAMP)

install: $(STAMP)

# WordNet is what the METEOR and lemmatiser tests check against; `hanyi setup` copies it from Debian's packages
# (wordnet-base, wordnet-sense-index: system-deps below installs them) or downloads it. Without it, those tests check the
# fallback keys instead.
WORDNET := $(VENV)/nltk_data/corpora/wordnet/lexnames
$(WORDNET): | install
	$(BIN)/hanyi setup --only wordnet || echo "make: WordNet unavailable; the tests check the fallback keys"

# Debian packages the tests use: headless Chromium renders the HTML report (tests/test_report*.py), and
# wordnet-base + wordnet-sense-index hold WordNet 3.0 for `hanyi setup` (above). Installed when make runs as root with
# apt-get (as in CI); otherwise, or with SYSTEM_DEPS=0, the tests that need them skip and say why.
SYSTEM_DEPS ?= 1
system-deps:
	@need=""; command -v chromium >/dev/null 2>&1 || need="$$need chromium"; \
	[ -f /usr/share/wordnet/index.sense ] || need="$$need wordnet-base wordnet-sense-index"; \
	if [ -z "$$need" ] || [ "$(SYSTEM_DEPS)" = 0 ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "make: apt-get install$$need"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$need >/dev/null) \
	    || echo "make: could not install$$need; the tests that need them will skip"; \
	else echo "make: not installed:$$need (apt-get install them as root); the tests that need them will skip"; fi

# Two test processes (pytest-xdist), each test file in one of them (its module fixtures are built once).
# TEST_WORKERS=0 runs in this process only.
TEST_WORKERS ?= 2
test: system-deps install $(WORDNET)
	$(BIN)/python -m pytest -q -ra -n $(TEST_WORKERS) --dist loadfile

test-fast: install
	$(BIN)/python -m pytest -q -m "not slow"

# Not part of CI. Run before every release and record the result in CHANGELOG.md: a throwaway venv with the newest
# release of everything that pyproject.toml allows (no lock), the packages that differ from the lock, and the fast
# tests that fail there.
LATEST ?= out/latest-venv
test-latest:
	$(PYTHON) tools/test_latest.py --venv $(LATEST) --lock $(LOCK)

# Regenerates the locks with the newest releases pyproject.toml allows: requirements/lock.txt for every Python from
# 3.10 up (uv's universal resolution), requirements/lock-oldest.txt with the oldest supported transformers.
UV := out/uv-venv/bin/uv
UV_COMPILE := $(UV) pip compile pyproject.toml requirements/lock-extra.in --extra test --extra lm-eval \
  --override requirements/lock-overrides.txt --no-emit-package torch --no-emit-package torchvision \
  --no-emit-package timm --generate-hashes --upgrade --quiet --custom-compile-command "make lock"
lock:
	$(PYTHON) -m venv out/uv-venv && out/uv-venv/bin/pip install -q uv==$(UV_VERSION)
	$(UV_COMPILE) --universal --python-version 3.10 -o $(LOCK)
	$(UV_COMPILE) --python-version 3.11 -c requirements/oldest.in -o requirements/lock-oldest.txt

# The oldest supported transformers (requirements/oldest.in): the tiny-LLaVA demo and tests in a venv of their own,
# installed from requirements/lock-oldest.txt. Not part of CI (a second install); run when the oldest changes.
OLDEST_VENV ?= out/venv-oldest
test-oldest:
	$(MAKE) demo VENV=$(OLDEST_VENV) LOCK=requirements/lock-oldest.txt DEMO_OUT=out/demo-oldest \
	  TINY=out/models/tiny-llava-oldest
	$(OLDEST_VENV)/bin/python -m pytest -q tests/test_tiny_llava.py tests/test_e2e.py

lint: install
	$(BIN)/ruff check hanyi tests benchmarks tools
	$(BIN)/ruff format --check hanyi tests benchmarks tools

$(TINY)/hanyi_tiny.json: | install
	$(BIN)/python -m hanyi.models.tiny_llava $(TINY)

# The main job: all five benchmarks end to end on the bundled sample data with a tiny random LLaVA (lmms-eval's
# own llava_hf). Answers are noise, so scores are near 0: this shows the pipeline, not a model. Not in the demo:
# cvlue_ranking (likelihood ranking), because lmms-eval 0.7.3's llava_hf loglikelihood fails under transformers 5
# (docs/upstream/0003-*.patch), and the text-only groups (punrebus_text, unpie_text), which send no image.
demo: install $(TINY)/hanyi_tiny.json
	@mkdir -p $(DEMO_OUT)
	@echo "lmms-eval --model llava_hf (tiny, random) --tasks punrebus,cvlue,cii,unpie,vulca  [log: $(DEMO_OUT)/lmms-eval.log]"
	@HANYI_DATA_ROOT=sample $(OFFLINE) $(BIN)/lmms-eval $(DEMO_MODEL) --tasks punrebus,cvlue,cii,unpie,vulca \
	  --gen_kwargs max_new_tokens=16 --output_path $(DEMO_OUT) --log_samples --verbosity DEBUG \
	  > $(DEMO_OUT)/lmms-eval.log 2>&1 || { tail -40 $(DEMO_OUT)/lmms-eval.log; exit 1; }
	@# lmms-eval logs a failed generation (e.g. llava_hf "Error ... in generating") and goes on: the demo fails.
	@n=$$(grep -cE '\|[^|]*ERROR[^|]*\|' $(DEMO_OUT)/lmms-eval.log); if [ "$$n" -gt 0 ]; then \
	  grep -E '\|[^|]*ERROR[^|]*\|' $(DEMO_OUT)/lmms-eval.log | head -5; \
	  echo "demo: lmms-eval logged $$n error(s); log: $(DEMO_OUT)/lmms-eval.log"; exit 1; fi
	@grep -E '^\|' $(DEMO_OUT)/lmms-eval.log
	@echo "results and sample logs: $$(ls -d $(DEMO_OUT)/*__*/ | tr '\n' ' ')"
	@$(BIN)/hanyi report $(DEMO_OUT) --out $(DEMO_OUT)/report && echo "report: $(DEMO_OUT)/report/report.html"

samples: install
	$(BIN)/python -m hanyi.data.build_samples

clean:
	rm -rf out .cache .pytest_cache

# A second venv for lmms-eval's own qwen2_5_vl wrapper on CPU (benchmarks/qwen2_5_vl_tiny.py,
# tests/test_qwen2_5_vl_wrapper.py, which skips without it): the lock exactly as `make install` installs it, but
# with torch + torchvision from PyPI (CUDA builds, which also run on CPU; with their nvidia-* wheels: 7.2 GB, 4 min
# on a 2-core machine) instead of the CPU torch, because the wrapper's qwen_vl_utils and transformers' Qwen2.5-VL
# processor need torchvision, and no CPU torchvision imports beside torch 2.13.0+cpu (docs/install.md).
# torch's own dependencies are resolved by pip, held to the lock's pins where the lock has the package.
TV_VENV ?= out/venv-tv
TV_TORCH := torch==2.14.1 torchvision==0.29.1
$(TV_VENV)/.hanyi-installed: pyproject.toml constraints.txt $(LOCK) hanyi/_hanyi_autohook.pth
	rm -rf $(TV_VENV)
	$(PYTHON) -m venv $(TV_VENV)
	grep -v -- '--hash' $(LOCK) | sed -e 's/ *\\$$//' -e '/^ *#/d' -e '/^$$/d' > $(TV_VENV)/build-constraints.txt
	PIP_CONSTRAINT=$(TV_VENV)/build-constraints.txt $(TV_VENV)/bin/pip install -q --no-deps --require-hashes -r $(LOCK)
	PIP_CONSTRAINT=$(TV_VENV)/build-constraints.txt $(TV_VENV)/bin/pip install -q $(TV_TORCH)
	$(TV_VENV)/bin/pip install -q --no-deps --no-build-isolation -e .
	@$(TV_VENV)/bin/pip check 2>&1 | grep -v -E '^lmms-eval [0-9.]+ requires timm, which is not installed\.$$' \
	  | grep -v '^WARNING: ' | { ! grep .; } || { echo "pip check: the environment is inconsistent (above)"; exit 1; }
	$(TV_VENV)/bin/python -c "import torch, torchvision, qwen_vl_utils, decord, lmms_eval, hanyi; print('venv-tv: torch', torch.__version__, 'torchvision', torchvision.__version__)"
	touch $@

venv-tv: $(TV_VENV)/.hanyi-installed
