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
# `callgrind_annotate --inclusive=yes OUT/<name>.cg` breaks down by function,
# BIG_ARTICLES (default 1000000: the articles of the board HOT.TOP BY
# trending is measured on).
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

# Trending (issue 32). A view on a board that keeps trending (half-life 6 h,
# from the config, as a board created by its first view takes it) against
# the same board without: the forward-decay weight (two exp2-free power-of-
# two scalings and one detmath::exp2) and one more ZSET write
# (target: at most +4,000 instructions per view).
profile hot.view-trending "${KEEP[@]}" hotrank.trending-half-life 21600 -- \
  HOT.VIEW 'hot:{b}' art:__rand_int__ vis:__rand_int__
profile hot.view-trending-commands "${KEEP[@]}" hotrank.trending-half-life 21600 replicate commands -- \
  HOT.VIEW 'hot:{b}' art:__rand_int__ vis:__rand_int__
for pair in hot.view-trending:hot.view hot.view-trending-commands:hot.view-commands; do
  a=${pair%%:*} b=${pair##*:}
  if [ -n "${RESULT[$a]:-}" ] && [ -n "${RESULT[$b]:-}" ]; then
    printf -- '- %s: %+d instructions per view over %s (target <= +4000)\n' "$a" $((RESULT[$a] - RESULT[$b])) "$b"
  fi
done

# HOT.TOP BY trending LIMIT 20 on a board of BIG_ARTICLES articles against
# ZREVRANGE 0 19 of its trending ZSET (target <= 2x). The board is built
# once in a plain server (not under valgrind): each article viewed by 1 or
# 2 visitors at `AT` times spread over the last day, so the trending sums
# are distinct; then SAVE. One server under callgrind loads that RDB (a few
# minutes under valgrind) and measures every row in turn: warm-up, zeroed
# counters, N commands, one dump per row.
BIG_ARTICLES="${BIG_ARTICLES:-1000000}"
build_big_board() {
  local port=$((12000 + RANDOM % 20000)) dir
  dir=$(fresh_dir "big-$port")
  "$SERVER" --port "$port" --dir "$dir" --save '' --appendonly no --loadmodule "$MODULE" \
    >"$OUT/big-board.log" 2>&1 &
  local pid=$!
  for _ in $(seq 150); do [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && break; sleep 0.2; done
  redis-cli -p "$port" HOT.CREATE 'hot:{big}' MAX-ARTICLES 0 TRENDING-HALF-LIFE 6h >/dev/null
  local now
  now=$(date +%s)
  awk -v n="$BIG_ARTICLES" -v now="$now" 'BEGIN {
    for (i = 0; i < n; i++) {
      t = now - 86400 + int(i * 86000 / n);
      for (v = 0; v <= (i * 7919) % 2; v++)
        printf "HOT.VIEW hot:{big} art:%012d vis:%d AT %d.%03d\r\n", i, (i + v) % 100000, t, (i * 37 + v) % 1000;
    }
  }' | redis-cli -p "$port" --pipe >"$OUT/big-board.fill" 2>&1
  # The trending ZSET is `hot:{big}\0tr` (src/keys.rs): its name holds a
  # zero byte, which no command-line argument can, so ZREVRANGE reads a
  # COPY of it (the same encoding and contents) under a plain name.
  BIG_TRENDING='ztrend:{big}'
  redis-cli -p "$port" eval "return redis.call('COPY', 'hot:{big}\\0tr', KEYS[1])" 1 "$BIG_TRENDING" >/dev/null
  BIG_CARD=$(redis-cli -p "$port" zcard "$BIG_TRENDING")
  BIG_KEYS=$(redis-cli -p "$port" dbsize)
  redis-cli -p "$port" save >/dev/null
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  wait "$pid" || true
  BIG_RDB="$OUT/big-board.rdb"
  mv "$dir/dump.rdb" "$BIG_RDB"
}
# big_row NAME COMMAND...: one row on the running big-board server.
big_row() {
  local name=$1; shift
  redis-benchmark -p "$BIG_PORT" -n "$N" -P 16 -c 10 -r 1 "$@" >/dev/null
  callgrind_control -z "$BIG_PID" >/dev/null 2>&1
  callgrind_control -i on "$BIG_PID" >/dev/null 2>&1
  redis-benchmark -p "$BIG_PORT" -n "$N" -P 16 -c 10 -r 1 "$@" >/dev/null
  callgrind_control -i off "$BIG_PID" >/dev/null 2>&1
  callgrind_control -d "$name" "$BIG_PID" >/dev/null 2>&1
  local dump total
  dump=$(ls -t "$OUT"/big.cg.* | head -1)
  mv "$dump" "$OUT/$name.cg"
  total=$(callgrind_annotate "$OUT/$name.cg" 2>/dev/null |
    awk '/PROGRAM TOTALS/ && !done {gsub(",", "", $1); print $1; done = 1}')
  RESULT[$name]=$((total / N))
  printf '| %s | %s | |\n' "$name" "$((total / N))"
}
if [ -z "${ONLY:-}" ] || [[ trending-top-1m =~ $ONLY ]]; then
  build_big_board
  BIG_PORT=$((12000 + RANDOM % 20000))
  dir=$(fresh_dir "$BIG_PORT")
  cp "$BIG_RDB" "$dir/dump.rdb"
  rm -f "$OUT"/big.cg*
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$OUT/big.cg" \
    "$SERVER" --port "$BIG_PORT" --dir "$dir" --save '' --appendonly no --loadmodule "$MODULE" \
    >"$OUT/big.log" 2>&1 &
  BIG_PID=$!
  # PING answers LOADING (an error) while the RDB loads: wait for PONG.
  for _ in $(seq 6000); do [ "$(redis-cli -p "$BIG_PORT" ping 2>/dev/null)" = PONG ] && break; sleep 0.2; done
  echo
  echo "Big board: $BIG_CARD articles in its trending ZSET, $BIG_KEYS keys ($(du -h "$BIG_RDB" | cut -f1) RDB)"
  echo
  echo "| workload | instructions per command | |"
  echo "|---|---:|---|"
  big_row trending-top-1m HOT.TOP 'hot:{big}' BY trending LIMIT 20
  big_row zrevrange-trending-1m ZREVRANGE "$BIG_TRENDING" 0 19
  big_row trending-top-1m-withscores HOT.TOP 'hot:{big}' BY trending LIMIT 20 WITHSCORES
  big_row zrevrange-trending-1m-withscores ZREVRANGE "$BIG_TRENDING" 0 19 WITHSCORES
  redis-cli -p "$BIG_PORT" shutdown nosave >/dev/null 2>&1 || true
  wait "$BIG_PID" || true
  for pair in trending-top-1m:zrevrange-trending-1m trending-top-1m-withscores:zrevrange-trending-1m-withscores; do
    a=${pair%%:*} b=${pair##*:}
    awk -v n="$a" -v m="$b" -v a="${RESULT[$a]}" -v s="${RESULT[$b]}" \
      'BEGIN { printf "- %s: %.2fx %s (target <= 2x)\n", n, a / s, m }'
  done
fi
echo
echo "Breakdowns: callgrind_annotate --inclusive=yes $OUT/<workload>.cg"
