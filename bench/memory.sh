#!/usr/bin/env bash
# Memory: RSS of bfs after `BF.RESERVE mem 0.01 10000000` and 1M BF.ADDs of distinct items,
# against the bitmap it holds (BF.INFO Size). Issue 6: RSS ≤ bitmap + 60 MB of fixed Node overhead.
#
# Usage: bench/memory.sh      (loopback only; about ten seconds)
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in redis-benchmark redis-cli; do
  command -v "$tool" >/dev/null || { echo "$tool not found (apt-get install -y redis-tools)" >&2; exit 1; }
done
npm run build --silent

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
PORT=$(free_port)
DIR=$(mktemp -d)
node --max-semi-space-size=1 dist/main.js --bind 127.0.0.1 --port "$PORT" --dir "$DIR" --save "" --appendonly no --loglevel warning >/dev/null &
BFS_PID=$!
cleanup() { kill "$BFS_PID" 2>/dev/null && wait "$BFS_PID" 2>/dev/null; rm -rf "$DIR"; }
trap cleanup EXIT
for _ in $(seq 100); do redis-cli -p "$PORT" PING >/dev/null 2>&1 && break; sleep 0.1; done

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$BFS_PID/status"; }
IDLE_KB=$(rss_kb)
redis-cli -p "$PORT" BF.RESERVE mem 0.01 10000000 >/dev/null
# 1M adds of __rand_int__ with the counter keyspace (-r 10^9: repeats are rare).
redis-benchmark -h 127.0.0.1 -p "$PORT" -c 50 -P 16 -n 1000000 -r 1000000000 -q BF.ADD mem __rand_int__ >/dev/null 2>&1
sleep 1
FULL_KB=$(rss_kb)
ITEMS=$(redis-cli -p "$PORT" BF.CARD mem)
SIZE=$(redis-cli -p "$PORT" BF.INFO mem SIZE)

awk -v idle="$IDLE_KB" -v full="$FULL_KB" -v items="$ITEMS" -v size="$SIZE" 'BEGIN {
  mb = 1024 * 1024
  printf "| measure | MB |\n|---|---:|\n"
  printf "| RSS at start (empty) | %.1f |\n", idle * 1024 / mb
  printf "| bitmap (BF.INFO Size, %d items added) | %.1f |\n", items, size / mb
  printf "| RSS after BF.RESERVE 10M @ 0.01 + adds | %.1f |\n", full * 1024 / mb
  over = full * 1024 / mb - size / mb
  printf "| RSS - bitmap (fixed overhead, limit 60) | %.1f %s |\n", over, (over <= 60 ? "ok" : "OVER")
}'
