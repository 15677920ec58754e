#!/usr/bin/env bash
# Runs a command and reports its wall time and the peak of the summed RSS of its whole process
# tree (the command and every descendant: vitest's workers, the servers the tests spawn), sampled
# from /proc every 0.2 s. /usr/bin/time only sees the largest single process.
#
# Usage: bench/peak-rss.sh npm test
set -uo pipefail
start=$(date +%s.%N)
"$@" &
root=$!
peak=0
tree_rss_kb() {
  local pids=$1 all=$1 next
  while [ -n "$pids" ]; do
    next=$(for p in $pids; do cat "/proc/$p/task/$p/children" 2>/dev/null; done | tr '\n' ' ')
    all="$all $next"
    pids=$(echo "$next" | xargs)
  done
  for p in $all; do awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null; done | awk '{ s += $1 } END { print s + 0 }'
}
while kill -0 "$root" 2>/dev/null; do
  rss=$(tree_rss_kb "$root")
  [ "$rss" -gt "$peak" ] && peak=$rss
  sleep 0.2
done
wait "$root"
code=$?
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v p="$peak" -v c="$code" 'BEGIN { printf "peak-rss: wall %.0f s, peak tree RSS %.0f MiB, exit %d\n", e - s, p / 1024, c }' >&2
exit "$code"
