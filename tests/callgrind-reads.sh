#!/usr/bin/env bash
# Instructions per read command under callgrind (see tests/callgrind-profile.sh
# for the method): HOT.TOP, HOT.STATS and the RANK reads, on boards filled
# once before the warm-up. Used by `make profile-reads`; see BENCHMARKS.md.
#
# Boards: a HOT board of ARTICLES articles (published, viewed by a few
# visitors each) and a RANK board of MEMBERS members where m:<i> (i
# zero-padded to 12 digits, as redis-benchmark's __rand_int__) has score
# MEMBERS - i, so m:0…m:99 are the top 100 (the reads with -r 100) and -r
# MEMBERS picks members all over the board.
#
# Env: HOTRANK_MODULE, N (default 5000), SERVER (default redis-server),
# ARTICLES (default 1000), MEMBERS (default 10000), ONLY (an extended regex
# of workload names), OUT (default target/profile-reads).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODULE="${HOTRANK_MODULE:-$ROOT/target/release/libhotrank.so}"
N="${N:-5000}"
SERVER="${SERVER:-redis-server}"
ARTICLES="${ARTICLES:-1000}"
MEMBERS="${MEMBERS:-10000}"
OUT="${OUT:-$ROOT/target/profile-reads}"
mkdir -p "$OUT"

fill() {
  local port=$1 now
  now=$(date +%s)
  {
    for ((i = 0; i < ARTICLES; i++)); do
      printf 'HOT.PUBLISH hot:{b} art:%012d %d\r\n' "$i" $((now - 86400 + i * 60))
      for ((v = 0; v <= i % 5; v++)); do
        printf 'HOT.VIEW hot:{b} art:%012d vis:%d\r\n' "$i" "$v"
      done
    done
    for ((i = 0; i < MEMBERS; i++)); do
      printf 'RANK.SET lb:{b} m:%012d %d\r\n' "$i" $((MEMBERS - i))
    done
  } | redis-cli -p "$port" --pipe >/dev/null
}

# profile NAME RANDOM-RANGE -- COMMAND...
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
  local name=$1 range=$2; shift 3
  if [ -n "${ONLY:-}" ] && ! [[ "$name" =~ $ONLY ]]; then return 0; fi
  local port=$((20000 + RANDOM % 20000))
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$OUT/$name.cg" \
    "$SERVER" --port "$port" --dir "$(fresh_dir "$port")" --save '' --appendonly no --loadmodule "$MODULE" \
    hotrank.max-articles 1000000 >"$OUT/$name.log" 2>&1 &
  local pid=$!
  for _ in $(seq 150); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.2; done
  fill "$port"
  redis-benchmark -p "$port" -n "$N" -P 16 -c 10 -r "$range" "$@" >/dev/null
  callgrind_control -i on "$pid" >/dev/null 2>&1
  redis-benchmark -p "$port" -n "$N" -P 16 -c 10 -r "$range" "$@" >/dev/null
  callgrind_control -i off "$pid" >/dev/null 2>&1
  local errors
  errors=$(redis-cli -p "$port" info errorstats | grep -c '^errorstat' || true)
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  wait "$pid" || true
  local total
  total=$(callgrind_annotate "$OUT/$name.cg" 2>/dev/null |
    awk '/PROGRAM TOTALS/ && !done {gsub(",", "", $1); print $1; done = 1}')
  printf '| %s | %s | %s |\n' "$name" "$((total / N))" "$errors"
}

echo "callgrind: instructions per read command, $N commands after $N warm-up ones,"
echo "$ARTICLES HOT articles, $MEMBERS RANK members; $("$SERVER" --version | head -1)"
echo
echo "| workload | instructions per command | error kinds seen |"
echo "|---|---:|---:|"
profile hot.top 1 -- HOT.TOP 'hot:{b}' LIMIT 10
profile hot.top-window 1 -- HOT.TOP 'hot:{b}' LIMIT 10 WINDOW 7200
profile hot.stats "$ARTICLES" -- HOT.STATS 'hot:{b}' art:__rand_int__
profile rank.rank-top100 100 -- RANK.RANK 'lb:{b}' m:__rand_int__
profile rank.rank-any "$MEMBERS" -- RANK.RANK 'lb:{b}' m:__rand_int__
profile rank.rank-ties-top100 100 -- RANK.RANK 'lb:{b}' m:__rand_int__ TIES
profile rank.range-top10 1 -- RANK.RANGE 'lb:{b}' 0 9 WITHSCORES
profile rank.range-bottom10 1 -- RANK.RANGE 'lb:{b}' -10 -1 WITHSCORES
profile rank.around-top100 100 -- RANK.AROUND 'lb:{b}' m:__rand_int__ 5
profile rank.around-any "$MEMBERS" -- RANK.AROUND 'lb:{b}' m:__rand_int__ 5
profile rank.card 1 -- RANK.CARD 'lb:{b}'
profile rank.rangebyscore-top10 1 -- RANK.RANGEBYSCORE 'lb:{b}' 0 +inf LIMIT 0 10 WITHSCORES
echo
echo "Breakdowns: callgrind_annotate --inclusive=yes $OUT/<workload>.cg"
