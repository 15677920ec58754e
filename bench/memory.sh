#!/usr/bin/env bash
# Memory: RSS of bfs after `BF.RESERVE mem 0.01 10000000` and 1M BF.ADDs of distinct items,
# against the bitmap it holds (BF.INFO Size). Issue 6: RSS ≤ bitmap + 60 MB of fixed Node overhead.
# RSS is read 1 s after the adds, then again 15 s after them, the server idle meanwhile.
# Then a filter of 1 GiB (BF.RESERVE big 0.01 860000000, a WebAssembly memory of its own) filled by
# adds until nearly every page is touched, DEL, and RSS each second for up to a minute: issue 21
# wants it back within 50 MB of before the filter was created.
# Last, a day's kind of use on a fresh server with the defaults (the append-only log on): a filter
# of 2M items at 0.01 (2.6 MB), some 3 M commands from redis-benchmark (adds and checks, one to a hundred per pipeline,
# 10 to 500 connections, one run reconnecting for every command) and from redis-cli --pipe, then RSS
# 15 s after, idle: limit the bitmap + 70 MB. bfs runs as `npm start` runs it (its glibc tunables,
# --max-semi-space-size=1, --optimize-for-size).
#
# Usage: bench/memory.sh      (loopback only; about two minutes)
#   BFS_ROOT=<checkout>  measure that checkout's dist/ (built beforehand) instead of building this one,
#                        with its npm start's glibc tunables (A/B runs of two builds, alternating)
#   SKIP_BIG=1           no 1 GiB filter, no DEL
#   SKIP_MIXED=1         no day's kind of use;  MIXED_ONLY=1: that alone
#   BFS_GLIBC_TUNABLES=glibc.malloc.hugetlb=1   run bfs with other glibc tunables than npm start's ("": none)
#   IO_THREADS='1 4'     also the first phase's load on a fresh server per io-threads value, and what each
#                        thread past the first value costs in RSS (limit 15 MB a thread); needs Node >= 22.12
#   THREADS_ONLY=1       that alone (IO_THREADS defaults to '1 4')
#   NODE=/path/to/node   the Node that runs bfs (default: node)
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in redis-benchmark redis-cli; do
  command -v "$tool" >/dev/null || { echo "$tool not found (apt-get install -y redis-tools)" >&2; exit 1; }
done
if [ -z "${BFS_ROOT:-}" ]; then npm run build --silent; fi
MAIN="${BFS_ROOT:-.}/dist/main.js"
# The glibc tunables of that checkout's `npm start`, unless BFS_GLIBC_TUNABLES says otherwise.
TUNABLES=$(cd "${BFS_ROOT:-.}" && node -p 'require("./package.json").scripts.start.match(/GLIBC_TUNABLES=(\S+)/)?.[1] ?? ""')
TUNABLES=${BFS_GLIBC_TUNABLES-$TUNABLES}

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
BFS_PID=
DIR=
cleanup() { [ -n "$BFS_PID" ] && kill "$BFS_PID" 2>/dev/null && wait "$BFS_PID" 2>/dev/null; [ -n "$DIR" ] && rm -rf "$DIR"; BFS_PID= DIR=; }
trap cleanup EXIT
# start_bfs <flags...>: a fresh bfs on a free port, in a fresh directory.
start_bfs() {
  PORT=$(free_port)
  DIR=$(mktemp -d)
  GLIBC_TUNABLES=$TUNABLES "${NODE:-node}" --max-semi-space-size=1 --optimize-for-size "$MAIN" --bind 127.0.0.1 --port "$PORT" --dir "$DIR" --loglevel warning "$@" >/dev/null &
  BFS_PID=$!
  for _ in $(seq 100); do redis-cli -p "$PORT" PING >/dev/null 2>&1 && break; sleep 0.1; done
}
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$BFS_PID/status"; }

# Every phase in a function of its own, so that SKIP_* and MIXED_ONLY pick them.
first_phase() {
start_bfs --save "" --appendonly no
IDLE_KB=$(rss_kb)
redis-cli -p "$PORT" BF.RESERVE mem 0.01 10000000 >/dev/null
# 1M adds of __rand_int__ with the counter keyspace (-r 10^9: repeats are rare).
redis-benchmark -h 127.0.0.1 -p "$PORT" -c 50 -P 16 -n 1000000 -r 1000000000 -q BF.ADD mem __rand_int__ >/dev/null 2>&1
sleep 1
FULL_KB=$(rss_kb)
# And once the server has been idle a while: V8's memory reducer runs memory-reducing full
# collections some 6-8 s after the load stops (its timer is a constant of V8).
sleep 14
SETTLED_KB=$(rss_kb)
ITEMS=$(redis-cli -p "$PORT" BF.CARD mem)
SIZE=$(redis-cli -p "$PORT" BF.INFO mem SIZE)
# INFO used_memory counts the arena at its live bitmap, not at the 64 MiB arena made for it.
USED=$(redis-cli -p "$PORT" INFO memory | tr -d '\r' | awk -F: '$1 == "used_memory" { print $2 }')

awk -v idle="$IDLE_KB" -v full="$FULL_KB" -v settled="$SETTLED_KB" -v items="$ITEMS" -v size="$SIZE" -v used="$USED" 'BEGIN {
  mb = 1024 * 1024
  printf "| measure | MB |\n|---|---:|\n"
  printf "| RSS at start (empty) | %.1f |\n", idle * 1024 / mb
  printf "| bitmap (BF.INFO Size, %d items added) | %.1f |\n", items, size / mb
  printf "| RSS after BF.RESERVE 10M @ 0.01 + adds | %.1f |\n", full * 1024 / mb
  over = full * 1024 / mb - size / mb
  printf "| RSS - bitmap 1 s after the adds (fixed overhead, limit 60) | %.1f %s |\n", over, (over <= 60 ? "ok" : "OVER")
  settledOver = settled * 1024 / mb - size / mb
  printf "| RSS - bitmap 15 s after the adds, idle (limit 60) | %.1f %s |\n", settledOver, (settledOver <= 60 ? "ok" : "OVER")
  printf "| INFO used_memory | %.1f |\n", used / mb
}'

}

big_phase() {
BEFORE_KB=$(rss_kb)
redis-cli -p "$PORT" BF.RESERVE big 0.01 860000000 >/dev/null
BIG=$(redis-cli -p "$PORT" BF.INFO big SIZE)
# 600k adds touch all but e^-(7 * 600k / 262144) of the 4 KiB pages of 1 GiB.
redis-benchmark -h 127.0.0.1 -p "$PORT" -c 50 -P 16 -n 60000 -r 1000000000 -q \
  BF.MADD big __rand_int__ __rand_int__ __rand_int__ __rand_int__ __rand_int__ __rand_int__ __rand_int__ __rand_int__ __rand_int__ __rand_int__ >/dev/null 2>&1
BIG_KB=$(rss_kb)
redis-cli -p "$PORT" DEL big >/dev/null
AFTER_KB=$BIG_KB
WAITED=0
for second in $(seq 60); do
  sleep 1
  AFTER_KB=$(rss_kb)
  WAITED=$second
  [ $((AFTER_KB - BEFORE_KB)) -le $((50 * 1024)) ] && break
done
awk -v before="$BEFORE_KB" -v big="$BIG_KB" -v after="$AFTER_KB" -v size="$BIG" -v waited="$WAITED" 'BEGIN {
  mb = 1024 * 1024
  printf "| RSS before BF.RESERVE big (1 GiB) | %.1f |\n", before * 1024 / mb
  printf "| RSS with big filled (bitmap %.1f MB) | %.1f |\n", size / mb, big * 1024 / mb
  over = (after - before) * 1024 / mb
  printf "| RSS %d s after DEL big (limit: before + 50) | %.1f (%+.1f) %s |\n", waited, after * 1024 / mb, over, (over <= 50 ? "ok" : "OVER")
}'
}

# A day's kind of use: redis-benchmark as many clients and pipelines, redis-py as one command per
# round trip, connections that come and go, and a file sent with redis-cli --pipe.
mixed_phase() {
start_bfs
local start_kb
start_kb=$(rss_kb)
redis-cli -p "$PORT" BF.RESERVE mix 0.01 2000000 >/dev/null
bench() { redis-benchmark -h 127.0.0.1 -p "$PORT" -r 1000000 -q "$@" >/dev/null 2>&1; }
local madd="BF.MADD mix" i
for i in $(seq 10); do madd="$madd __rand_int__"; done
bench -c 50 -P 16 -n 1000000 BF.ADD mix __rand_int__
bench -c 200 -n 200000 BF.ADD mix __rand_int__
bench -c 500 -n 200000 BF.EXISTS mix __rand_int__
bench -c 20 -P 100 -n 500000 BF.EXISTS mix __rand_int__
# shellcheck disable=SC2086
bench -c 10 -P 8 -n 100000 $madd
bench -c 50 -P 4 -n 200000 BF.EXISTS mix __rand_int__
# A new connection for every command.
bench -c 20 -k 0 -n 10000 BF.ADD mix __rand_int__
# 1M BF.ADDs of 700,000 items in RESP, through one connection as fast as the server takes them.
awk 'BEGIN { for (i = 0; i < 1000000; i++) { item = "pipe:" (i % 700000); printf "*3\r\n$6\r\nBF.ADD\r\n$3\r\nmix\r\n$%d\r\n%s\r\n", length(item), item } }' > "$DIR/pipe.resp"
redis-cli -p "$PORT" --pipe < "$DIR/pipe.resp" >/dev/null
rm -f "$DIR/pipe.resp"
sleep 1
local full_kb settled_kb size items
full_kb=$(rss_kb)
sleep 14
settled_kb=$(rss_kb)
size=$(redis-cli -p "$PORT" BF.INFO mix SIZE)
items=$(redis-cli -p "$PORT" BF.CARD mix)
awk -v start="$start_kb" -v full="$full_kb" -v settled="$settled_kb" -v items="$items" -v size="$size" 'BEGIN {
  mb = 1024 * 1024
  printf "| RSS at start of a fresh server (defaults, log on) | %.1f |\n", start * 1024 / mb
  printf "| bitmap after a day\047s kind of use (BF.INFO Size, %d items) | %.1f |\n", items, size / mb
  printf "| RSS - bitmap 1 s after it | %.1f |\n", full * 1024 / mb - size / mb
  over = settled * 1024 / mb - size / mb
  printf "| RSS - bitmap 15 s after it, idle (limit 70) | %.1f %s |\n", over, (over <= 70 ? "ok" : "OVER")
}'
cleanup
}

# RSS per io-threads value: each a fresh server with the first phase's filter and adds (-c 50: the
# connections spread over the threads), read at start, 1 s after the adds and 15 s after, idle.
threads_phase() {
local values n idle full settled size first=
read -ra values <<<"${IO_THREADS:-1 4}"
"${NODE:-node}" -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 12) ? 0 : 1)' ||
  echo "note: node $("${NODE:-node}" --version) is older than 22.12: bfs runs one thread at every io-threads value"
echo "| io-threads | RSS at start | RSS - bitmap 1 s after the adds | RSS - bitmap 15 s after, idle | per thread past io-threads ${values[0]}: at start, idle after (limit 15) |"
echo "|---:|---:|---:|---:|---:|"
for n in "${values[@]}"; do
  start_bfs --save "" --appendonly no --io-threads "$n"
  # The threads start with the listeners: give them a second before the first reading.
  sleep 1
  idle=$(rss_kb)
  redis-cli -p "$PORT" BF.RESERVE mem 0.01 10000000 >/dev/null
  redis-benchmark -h 127.0.0.1 -p "$PORT" -c 50 -P 16 -n 1000000 -r 1000000000 -q BF.ADD mem __rand_int__ >/dev/null 2>&1
  sleep 1
  full=$(rss_kb)
  sleep 14
  settled=$(rss_kb)
  size=$(redis-cli -p "$PORT" BF.INFO mem SIZE)
  cleanup
  [ -n "$first" ] || first="$n $idle $settled"
  awk -v n="$n" -v idle="$idle" -v full="$full" -v settled="$settled" -v size="$size" -v first="$first" 'BEGIN {
    mb = 1024 * 1024
    split(first, f, " ")
    per = ""
    if (n > f[1]) {
      start = (idle - f[2]) * 1024 / mb / (n - f[1])
      after = (settled - f[3]) * 1024 / mb / (n - f[1])
      per = sprintf("%.1f, %.1f %s", start, after, after <= 15 ? "ok" : "OVER")
    }
    printf "| %d | %.1f | %.1f | %.1f | %s |\n", n, idle * 1024 / mb, full * 1024 / mb - size / mb, settled * 1024 / mb - size / mb, per
  }'
done
}

if [ -n "${THREADS_ONLY:-}" ]; then
  threads_phase
  exit 0
fi
if [ -z "${MIXED_ONLY:-}" ]; then
  first_phase
  [ -z "${SKIP_BIG:-}" ] && big_phase
  cleanup
fi
[ -z "${SKIP_MIXED:-}" ] && mixed_phase
[ -n "${IO_THREADS:-}" ] && threads_phase
exit 0
