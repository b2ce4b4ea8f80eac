# lossless.fabric — the two commands that matter: `make lab` and `make test`.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: help setup test lint sanity unit integration molecule lab lab-up lab-down lab-status bench clean

help:
	@echo "make lab       run playbooks/site.yml against the lab (simulators started and stopped)"
	@echo "make test      every check: lint, ansible-lint, sanity, unit, integration, molecule"
	@echo "make setup     venv, pinned Python packages, collections (offline), Debian packages"
	@echo "make lab-up / lab-down / lab-status   the lab's simulators"
	@echo "make bench     benchmarks (not tests); results in docs/performance.md"

setup:
	@tools/setup.sh

test: setup
	@$(MAKE) --no-print-directory lint sanity unit integration molecule
	@echo "make test: all checks passed"

lint: setup
	$(BIN)/yamllint -s .
	$(BIN)/ruff check .
	$(BIN)/ansible-lint --offline --profile production

sanity: setup
	tools/sanity.sh

unit: setup
	$(PY) -m pytest -q -n 2 tests/unit

integration: setup
	$(PY) -m pytest -q -n 2 tests/integration

molecule: setup
	tools/molecule.sh

lab: setup
	@$(PY) tests/lab/launcher.py run -- $(BIN)/ansible-playbook -i inventories/lab playbooks/site.yml $(LAB_ARGS)

lab-up: setup
	$(PY) tests/lab/launcher.py up

lab-down:
	@if [ -x $(PY) ]; then $(PY) tests/lab/launcher.py down; fi

lab-status:
	$(PY) tests/lab/launcher.py status

bench: setup
	$(PY) bench/run.py

clean: lab-down
	rm -rf tests/output .run
