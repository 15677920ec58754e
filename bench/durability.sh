#!/usr/bin/env bash
# Cost of durability: BF.ADD -P 16 on bfs with appendonly no / appendfsync everysec / always,
# beside redis-server running SADD with the same settings, in the same run on the same disk.
# Prints requests/s per setting and the ratio to appendonly no, for each server.
#
#   npm run build && bench/durability.sh [requests] [clients]
#
# The data directories are made with mktemp -d (set TMPDIR to bench another disk).
set -euo pipefail
cd "$(dirname "$0")/.."
REQUESTS=${1:-200000}
CLIENTS=${2:-50}
BFS_PORT=${BFS_PORT:-7391}
REDIS_PORT=${REDIS_PORT:-7392}
SETTINGS=("no" "everysec" "always")

wait_port() {
  for _ in $(seq 100); do
    redis-cli -p "$1" PING >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "server on port $1 did not start" >&2
  exit 1
}

# redis-benchmark -q prints "CMD: N requests per second, p50=..."; keep N.
rps() {
  redis-benchmark -p "$1" -n "$REQUESTS" -c "$CLIENTS" -P 16 -r 1000000 -q "${@:2}" | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1
}

declare -A BFS REDIS
for setting in "${SETTINGS[@]}"; do
  if [ "$setting" = "no" ]; then aof=(no everysec); else aof=(yes "$setting"); fi

  dir=$(mktemp -d)
  GLIBC_TUNABLES=glibc.malloc.mmap_threshold=16384 node --max-semi-space-size=1 --optimize-for-size dist/main.js --port "$BFS_PORT" --dir "$dir" --save "" --appendonly "${aof[0]}" --appendfsync "${aof[1]}" --loglevel warning &
  pid=$!
  wait_port "$BFS_PORT"
  redis-cli -p "$BFS_PORT" BF.RESERVE bench 0.01 10000000 >/dev/null
  BFS[$setting]=$(rps "$BFS_PORT" BF.ADD bench __rand_int__)
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$dir"

  dir=$(mktemp -d)
  redis-server --port "$REDIS_PORT" --save '' --appendonly "${aof[0]}" --appendfsync "${aof[1]}" --dir "$dir" --daemonize no --loglevel warning &
  pid=$!
  wait_port "$REDIS_PORT"
  REDIS[$setting]=$(rps "$REDIS_PORT" SADD bench __rand_int__)
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
done

printf '%-22s %14s %8s %14s %8s\n' "setting" "bfs BF.ADD/s" "vs no" "redis SADD/s" "vs no"
for setting in "${SETTINGS[@]}"; do
  label=$([ "$setting" = "no" ] && echo "appendonly no" || echo "appendfsync $setting")
  printf '%-22s %14s %7.2fx %14s %7.2fx\n' "$label" "${BFS[$setting]}" \
    "$(echo "${BFS[$setting]} / ${BFS[no]}" | bc -l)" "${REDIS[$setting]}" \
    "$(echo "${REDIS[$setting]} / ${REDIS[no]}" | bc -l)"
done
