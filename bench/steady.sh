#!/usr/bin/env bash
# One bfs process under a steady load from redis-benchmark, sampled every WINDOW seconds: req/s,
# and the process's user and system CPU µs per request in that window. A window where bfs's user and
# system time per request rise together (the kernel's TCP work is not bfs's JavaScript) is the
# machine slowing down, not the server: the way to read one slow row of bench/wire.sh.
#
# Usage: bench/steady.sh [WINDOWS=30]
#   PIPELINE=1 WINDOW=2 CMD='BF.EXISTS bench __rand_int__' bench/steady.sh 30
# bfs runs as `npm start` runs it, on loopback, with BF.RESERVE bench 0.01 10000000 and 300,000
# adds first (as bench/wire.sh's warm-up). Needs redis-benchmark and redis-cli.
set -euo pipefail
cd "$(dirname "$0")/.."
WINDOWS=${1:-30}
WINDOW=${WINDOW:-2}
PIPELINE=${PIPELINE:-1}
CMD=${CMD:-BF.EXISTS bench __rand_int__}
for tool in redis-benchmark redis-cli; do
  command -v "$tool" >/dev/null || { echo "$tool not found (apt-get install -y redis-tools)" >&2; exit 1; }
done
npm run build --silent
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
PORT=$(free_port)
DIR=$(mktemp -d)
GLIBC_TUNABLES=glibc.malloc.mmap_threshold=16384 node --max-semi-space-size=1 --optimize-for-size dist/main.js --bind 127.0.0.1 --port "$PORT" \
  --dir "$DIR" --save "" --appendonly no --loglevel warning >/dev/null &
BFS_PID=$!
LOAD_PID=
cleanup() {
  [ -n "$LOAD_PID" ] && kill "$LOAD_PID" 2>/dev/null
  kill "$BFS_PID" 2>/dev/null && wait "$BFS_PID" 2>/dev/null
  rm -rf "$DIR"
}
trap cleanup EXIT
for _ in $(seq 100); do redis-cli -p "$PORT" PING >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$PORT" BF.RESERVE bench 0.01 10000000 >/dev/null
redis-benchmark -h 127.0.0.1 -p "$PORT" -c 50 -P 16 -n 300000 -r 1000000 -q BF.ADD bench __rand_int__ >/dev/null 2>&1
# shellcheck disable=SC2086
redis-benchmark -h 127.0.0.1 -p "$PORT" -c 50 -P "$PIPELINE" -n 2000000000 -r 1000000 -q $CMD >/dev/null 2>&1 &
LOAD_PID=$!
sleep 1

commands() { redis-cli -p "$PORT" INFO stats | tr -d '\r' | awk -F: '$1 == "total_commands_processed" { print $2 }'; }
ticks() { awk '{ print $14, $15 }' "/proc/$BFS_PID/stat"; }
HZ=$(getconf CLK_TCK)
echo "bfs under redis-benchmark -c 50 -P $PIPELINE $CMD, ${WINDOW} s windows, $(nproc) CPUs, node $(node --version), $(date -u +%Y-%m-%d)"
printf '| window | req/s | user µs/req | sys µs/req |\n|---:|---:|---:|---:|\n'
last_c=$(commands); read -r last_u last_s < <(ticks)
for window in $(seq "$WINDOWS"); do
  sleep "$WINDOW"
  c=$(commands); read -r u s < <(ticks)
  awk -v w="$window" -v n=$((c - last_c)) -v du=$((u - last_u)) -v ds=$((s - last_s)) \
    -v hz="$HZ" -v secs="$WINDOW" 'BEGIN {
      printf "| %d | %d | %.2f | %.2f |\n", w, n / secs, du * 1e6 / hz / n, ds * 1e6 / hz / n
    }'
  last_c=$c; last_u=$u; last_s=$s
done
