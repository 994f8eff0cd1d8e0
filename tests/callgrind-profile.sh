#!/usr/bin/env bash
# Instructions per command, counted by valgrind's callgrind (repeatable,
# unlike timings: the same binary and inputs give the same counts whatever
# else the machine is doing). Used by `make profile`; see BENCHMARKS.md.
#
# For each workload: start redis-server (with the module) under callgrind
# with instrumentation off, warm it up with N commands from redis-benchmark,
# switch instrumentation on, run N more, and report the server's
# instructions per command (network, parsing and reply included). The
# keyspace is small (-r $KEYSPACE) so the measured commands hit existing
# articles, counters and HyperLogLogs: the steady state of a live site.
#
# Env: HOTRANK_MODULE (default target/release/libhotrank.so), N (default
# 20000), KEYSPACE (default 5000), SERVER (default redis-server),
# WORKLOAD_KEYSPACE (set per workload below: its own -r), WORKLOAD_SETUP (a
# command run once before the warm-up, e.g. the RANK.CREATE of a board),
# ONLY (an extended regex: profile only the workloads whose name matches),
# OUT (default target/profile) for the callgrind files, which
# `callgrind_annotate --inclusive=yes OUT/<name>.cg` breaks down by function.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODULE="${HOTRANK_MODULE:-$ROOT/target/release/libhotrank.so}"
N="${N:-20000}"
KEYSPACE="${KEYSPACE:-5000}"
SERVER="${SERVER:-redis-server}"
OUT="${OUT:-$ROOT/target/profile}"
mkdir -p "$OUT"

# The Lua recipe HOT.VIEW replaces, shared with `make bench`.
LUA="$(cat "$ROOT/examples/view.lua")"
# The seed's plain script (no dedup).
LUA_PLAIN="$(cat "$ROOT/examples/view_plain.lua")"

# profile NAME CONFIG... -- COMMAND...
# An empty working directory per server: a server started in the current
# directory would load a dump.rdb left there (by a replica's full sync, for
# one), and an RDB with replication info makes the server keep a
# replication backlog, which adds about 13,000 instructions to every
# effects-mode view.
fresh_dir() {
  local d="$OUT/dir-$1"
  rm -rf "$d" && mkdir -p "$d" && echo "$d"
}

profile() {
  local name=$1; shift
  if [ -n "${ONLY:-}" ] && ! [[ "$name" =~ $ONLY ]]; then return 0; fi
  local conf=()
  while [ "$1" != "--" ]; do conf+=("$1"); shift; done
  shift
  # Below the ephemeral range (32768 and up), as the test harness does:
  # there a client socket can hold the port, or another server answer on it.
  local port=$((12000 + RANDOM % 20000))
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$OUT/$name.cg" \
    "$SERVER" --port "$port" --dir "$(fresh_dir "$port")" --save '' --appendonly no --loadmodule "$MODULE" "${conf[@]}" \
    >"$OUT/$name.log" 2>&1 &
  local pid=$!
  for _ in $(seq 150); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.2; done
  # The server answering must be the one started here (valgrind runs the
  # server in its own process, so the pids agree).
  local answering
  answering=$(redis-cli -p "$port" info server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p')
  if [ "$answering" != "$pid" ]; then
    echo "$name: port $port is answered by pid '${answering}', not the server started ($pid); see $OUT/$name.log" >&2
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    exit 1
  fi
  local rpid=""
  if [ -n "${WITH_REPLICA:-}" ]; then
    # A replica (with the module) attached to the measured server.
    local rport=$((port + 1))
    "$SERVER" --port "$rport" --dir "$(fresh_dir "$rport")" --save '' --appendonly no --loadmodule "$MODULE" \
      --replicaof 127.0.0.1 "$port" >"$OUT/$name.replica.log" 2>&1 &
    rpid=$!
    for _ in $(seq 300); do
      redis-cli -p "$rport" info replication 2>/dev/null | grep -q 'master_link_status:up' && break
      sleep 0.2
    done
    answering=$(redis-cli -p "$rport" info server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p')
    if [ "$answering" != "$rpid" ]; then
      echo "$name: replica port $rport is answered by pid '${answering}', not the replica started ($rpid)" >&2
      kill "$pid" "$rpid" 2>/dev/null || true
      wait "$pid" "$rpid" 2>/dev/null || true
      exit 1
    fi
  fi
  if [ -n "${WORKLOAD_SETUP:-}" ]; then
    # shellcheck disable=SC2086 # a command line, split into words on purpose
    redis-cli -p "$port" $WORKLOAD_SETUP >/dev/null
  fi
  local sha sha_plain
  sha=$(redis-cli -p "$port" script load "$LUA")
  sha_plain=$(redis-cli -p "$port" script load "$LUA_PLAIN")
  local args=()
  for a in "$@"; do a="${a//@SHA@/$sha}"; args+=("${a//@SHA_PLAIN@/$sha_plain}"); done
  local ks="${WORKLOAD_KEYSPACE:-$KEYSPACE}"
  local warm=("${args[@]}")
  if [ -n "${WARMUP:-}" ]; then
    # shellcheck disable=SC2206 # a command line, split into words on purpose
    warm=($WARMUP)
  fi
  redis-benchmark -p "$port" -n "$N" -P 16 -c 10 -r "$ks" "${warm[@]}" >/dev/null
  callgrind_control -i on "$pid" >/dev/null 2>&1
  redis-benchmark -p "$port" -n "$N" -P 16 -c 10 -r "$ks" "${args[@]}" >/dev/null
  callgrind_control -i off "$pid" >/dev/null 2>&1
  local errors
  errors=$(redis-cli -p "$port" info errorstats | grep -c '^errorstat' || true)
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  wait "$pid" || true
  if [ -n "$rpid" ]; then kill "$rpid" 2>/dev/null || true; wait "$rpid" 2>/dev/null || true; fi
  local total
  # awk reads to the end: an early exit would kill callgrind_annotate with SIGPIPE.
  total=$(callgrind_annotate "$OUT/$name.cg" 2>/dev/null |
    awk '/PROGRAM TOTALS/ && !done {gsub(",", "", $1); print $1; done = 1}')
  RESULT[$name]=$((total / N))
  printf '| %s | %s | %s |\n' "$name" "$((total / N))" "$errors"
}
declare -A RESULT=()

echo "callgrind: instructions per command, $N commands after $N warm-up ones, -r $KEYSPACE,"
echo "$("$SERVER" --version | head -1)"
echo
echo "| workload | instructions per command | error kinds seen |"
echo "|---|---:|---:|"
KEEP=(hotrank.max-articles 1000000)
profile hot.view "${KEEP[@]}" -- HOT.VIEW 'hot:{b}' art:__rand_int__ vis:__rand_int__
# hotrank.replicate commands (one replicated HOT.VIEW … AT t CLOCK ms per
# view) vs effects, each without and with a replica attached.
profile hot.view-commands "${KEEP[@]}" replicate commands -- HOT.VIEW 'hot:{b}' art:__rand_int__ vis:__rand_int__
WITH_REPLICA=1 profile hot.view-effects-replica "${KEEP[@]}" -- HOT.VIEW 'hot:{b}' art:__rand_int__ vis:__rand_int__
WITH_REPLICA=1 profile hot.view-commands-replica "${KEEP[@]}" replicate commands -- \
  HOT.VIEW 'hot:{b}' art:__rand_int__ vis:__rand_int__
# Every view of a new article, with the default trimming (max-articles
# 1000): the upkeep path. -r 100000 whatever KEYSPACE says.
WORKLOAD_KEYSPACE=100000 profile hot.view-trimmed-100k -- \
  HOT.VIEW 'hot:{b}' art:__rand_int__ vis:__rand_int__
WORKLOAD_KEYSPACE=100000 profile hot.view-trimmed-100k-commands replicate commands -- \
  HOT.VIEW 'hot:{b}' art:__rand_int__ vis:__rand_int__
WORKLOAD_KEYSPACE=100000 profile lua-plain-seed-100k -- EVALSHA @SHA_PLAIN@ 4 'lua:{b}:pv:art:__rand_int__' \
  'lua:{b}:uv:art:__rand_int__' 'lua:{b}:meta:art:__rand_int__' 'lua:{b}' art:__rand_int__ vis:__rand_int__
profile hot.view-no-abnormal-check "${KEEP[@]}" hotrank.visitor-max-views 0 -- \
  HOT.VIEW 'hot:{b}' art:__rand_int__ vis:__rand_int__
profile lua-evalsha -- EVALSHA @SHA@ 5 'lua:{b}:dd:art:__rand_int__:vis:__rand_int__' \
  'lua:{b}:pv:art:__rand_int__' 'lua:{b}:uv:art:__rand_int__' 'lua:{b}:meta:art:__rand_int__' \
  'lua:{b}' art:__rand_int__ vis:__rand_int__ 900
profile lua-plain-seed -- EVALSHA @SHA_PLAIN@ 4 'lua:{b}:pv:art:__rand_int__' \
  'lua:{b}:uv:art:__rand_int__' 'lua:{b}:meta:art:__rand_int__' 'lua:{b}' art:__rand_int__ vis:__rand_int__
profile zadd -- ZADD 'z:{b}' __rand_int__ m:__rand_int__
profile rank.incr -- RANK.INCR 'lb:{b}' m:__rand_int__ 1
profile zincrby -- ZINCRBY 'zlb:{b}' 1 m:__rand_int__
WORKLOAD_SETUP="RANK.CREATE lbp:{b} PERIODS day week month" \
  profile rank.incr-3-periods -- RANK.INCR 'lbp:{b}' m:__rand_int__ 1
# hotrank.replicate commands: one replicated RANK.INCR … AT t CLOCK now per
# write instead of its ZADDs (one per board) and PEXPIREATs.
profile rank.incr-commands replicate commands -- RANK.INCR 'lb:{b}' m:__rand_int__ 1
WORKLOAD_SETUP="RANK.CREATE lbp:{b} PERIODS day week month" \
  profile rank.incr-3-periods-commands replicate commands -- RANK.INCR 'lbp:{b}' m:__rand_int__ 1
# A fixed score: redis-benchmark's __rand_int__ is zero-padded (000000001234),
# which RANK.SET refuses as an integer, as INCRBY does. So both rows measure
# a first write per member, then writes that keep the best score.
profile rank.set-best -- RANK.SET 'lbs:{b}' m:__rand_int__ 7 BEST
profile zadd-gt -- ZADD 'zgt:{b}' GT 7 m:__rand_int__
# The six raw commands a view stands for (the Lua recipe's, each alone, on
# keys like a view's: -r KEYSPACE articles and visitors). PFCOUNT and HGET
# are measured on keys their warm-up (WARMUP: another command on the same
# keys) filled, as a view finds them.
profile raw.incr -- INCR 'r:{b}:pv:art:__rand_int__'
profile raw.pfadd -- PFADD 'r:{b}:uv:art:__rand_int__' vis:__rand_int__
WARMUP="PFADD r:{b}:uv2:art:__rand_int__ vis:__rand_int__" \
  profile raw.pfcount -- PFCOUNT 'r:{b}:uv2:art:__rand_int__'
WARMUP="HSET r:{b}:meta:art:__rand_int__ publishedAt 1700000000000" \
  profile raw.hget -- HGET 'r:{b}:meta:art:__rand_int__' publishedAt
profile raw.zadd -- ZADD 'r:{b}' __rand_int__ art:__rand_int__
profile raw.set-nx-ex -- SET 'r:{b}:dd:art:__rand_int__:vis:__rand_int__' 1 NX EX 900
RAW=(raw.incr raw.pfadd raw.pfcount raw.hget raw.zadd raw.set-nx-ex)
sum=0
for r in "${RAW[@]}"; do
  if [ -z "${RESULT[$r]:-}" ]; then sum=""; break; fi
  sum=$((sum + RESULT[$r]))
done
if [ -n "$sum" ]; then
  printf '| the six raw commands, summed | %s | |\n' "$sum"
  echo
  echo "HOT.VIEW as a multiple of the six raw commands' sum (target: commands <= 1.25x):"
  for v in hot.view hot.view-commands hot.view-effects-replica hot.view-commands-replica; do
    if [ -n "${RESULT[$v]:-}" ]; then
      awk -v n="$v" -v a="${RESULT[$v]}" -v s="$sum" 'BEGIN { printf "- %s: %.2fx\n", n, a / s }'
    fi
  done
fi
for pair in rank.incr:zincrby rank.incr-commands:zincrby; do
  a=${pair%%:*} b=${pair##*:}
  if [ -n "${RESULT[$a]:-}" ] && [ -n "${RESULT[$b]:-}" ]; then
    awk -v n="$a" -v m="$b" -v a="${RESULT[$a]}" -v s="${RESULT[$b]}" \
      'BEGIN { printf "- %s: %.2fx %s (target <= 1.2x)\n", n, a / s, m }'
  fi
done
echo
echo "Breakdowns: callgrind_annotate --inclusive=yes $OUT/<workload>.cg"
