#!/usr/bin/env bash
# Runs the server under valgrind memcheck, for `make memcheck`. The test
# harness (tests/common/mod.rs) starts it in place of redis-server, with
# HOTRANK_SERVER set to this script's absolute path, and passes the server's
# arguments through. Each process (the server and any child it forks for
# BGSAVE/BGREWRITEAOF) writes its own report, HOTRANK_VALGRIND_DIR/vg.<pid>.log;
# tests/valgrind-check.sh reads them.
#
#   HOTRANK_VALGRIND_DIR     directory for the reports (required)
#   HOTRANK_VALGRIND_SERVER  the real server binary (default redis-server)
#
# HOTRANK_SYSTEM_ALLOC=1 makes the module allocate with the system malloc
# instead of the server's jemalloc, so valgrind sees the module's blocks.
set -euo pipefail

: "${HOTRANK_VALGRIND_DIR:?set HOTRANK_VALGRIND_DIR to the directory for the valgrind reports}"
mkdir -p "$HOTRANK_VALGRIND_DIR"
export HOTRANK_SYSTEM_ALLOC=1

exec valgrind \
  --tool=memcheck \
  --leak-check=full \
  --show-leak-kinds=definite,indirect \
  --errors-for-leak-kinds=definite,indirect \
  --track-origins=no \
  --num-callers=40 \
  --log-file="$HOTRANK_VALGRIND_DIR/vg.%p.log" \
  "${HOTRANK_VALGRIND_SERVER:-redis-server}" "$@"
