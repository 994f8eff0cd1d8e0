#!/usr/bin/env bash
# Reads the valgrind reports that tests/valgrind-server.sh wrote (DIR/vg.<pid>.log,
# one per server process) and fails if any reports an error in the module's code:
# an invalid read/write/free, a use of uninitialised values, a "definitely lost"
# or "indirectly lost" block, or a fatal signal, whose stack has a frame of the
# module (hotrank::, redis_module::, libhotrank.so). Errors whose stacks are only
# redis-server/jemalloc/libc are counted and ignored. It also fails when a
# process has no leak report (it was killed before valgrind could write one) or
# valgrind stopped reporting errors, since then the check would be incomplete.
#
#   usage: tests/valgrind-check.sh DIR
set -euo pipefail

dir="${1:?usage: $0 DIR (the HOTRANK_VALGRIND_DIR of the run)}"
shopt -s nullglob
logs=("$dir"/vg.*.log)
if [ "${#logs[@]}" -eq 0 ]; then
  echo "memcheck: no valgrind reports in $dir (was HOTRANK_SERVER set to tests/valgrind-server.sh?)" >&2
  exit 1
fi

# One awk pass over every report. An error is a block of "==PID== " lines
# between two empty ones; its first line says what it is.
awk '
  function flush(   first, kind, module) {
    if (nblock == 0) return
    first = block[1]
    kind = ""
    if (first ~ /^Invalid (read|write|free)/ || first ~ /^Mismatched free/ ||
        first ~ /^(Conditional jump or move depends on|Use of) uninitialised/ ||
        first ~ /^Syscall param .*uninitialised/ || first ~ /^Uninitialised byte/ ||
        first ~ /^Source and destination overlap/ ||
        first ~ /fishy value/ || first ~ /^Process terminating with default action/ ||
        first ~ /^Jump to the invalid address/)
      kind = "error"
    else if (first ~ /(definitely|indirectly) lost in loss record/)
      kind = "leak"
    if (kind != "") {
      module = 0
      for (i = 1; i <= nblock; i++)
        if (block[i] ~ /hotrank::|redis_module::|libhotrank|RedisModule_OnLoad/) { module = 1; break }
      if (module) {
        if (kind == "leak") mleaks++; else merrors++
        printf "---- %s (pid %s) ----\n", FILENAME, pid
        for (i = 1; i <= nblock; i++) print "  " block[i]
      } else {
        other++
      }
    }
    nblock = 0
  }
  FNR == 1 {
    flush()
    files++
    pid = ""
    if (prev != "" && !summary[prev]) nosummary[++nns] = prev
    prev = FILENAME
  }
  /^==[0-9]+== / {
    if (pid == "") { pid = $1; gsub(/=/, "", pid) }
    line = $0
    sub(/^==[0-9]+== ?/, "", line)
    if (line ~ /^Parent PID:/) next
    if (line ~ /^HEAP SUMMARY:/) summary[FILENAME] = 1
    if (line ~ /not reporting any more|too many errors|Further errors will not be reported/)
      capped[++ncap] = FILENAME
    if (line ~ /^[[:space:]]*$/) { flush(); next }
    block[++nblock] = line
    next
  }
  END {
    flush()
    if (prev != "" && !summary[prev]) nosummary[++nns] = prev
    for (i = 1; i <= nns; i++)
      printf "memcheck: %s has no leak report (the process was killed, or valgrind failed)\n", nosummary[i]
    for (i = 1; i <= ncap; i++)
      printf "memcheck: valgrind stopped reporting errors in %s\n", capped[i]
    printf "memcheck: %d server processes checked, %d module errors and %d module leaks found (%d errors/leaks outside the module ignored), %d without a leak report\n",
      files, merrors, mleaks, other, nns
    exit (merrors + mleaks + nns + ncap > 0) ? 1 : 0
  }
' "${logs[@]}"
