#!/usr/bin/env bash
# A web-scale filter by hand (not in CI): one key of 10^10 items at 1 % (11.2 GiB, three pieces of
# one WebAssembly memory each: docs/WASM.md), beside RedisBloom with the same filter when
# REDISBLOOM_MODULE names its redisbloom.so. Prints, per server: BF.ADD and BF.EXISTS req/s
# (redis-benchmark, -P 16, ITEMS random items); for bfs also BGSAVE's time and the longest
# event-loop stall meanwhile (a PING every millisecond), the restart's load time, a full sync to a
# replica on the same machine, and RSS against the bitmap. Then the in-process kernel, ns per item
# at 1 GiB and at the filter's size (npm run bench:big-layer).
#
#   npm run build && bench/big-filter.sh
#   CAPACITY=10000000000 ERROR=0.01 ITEMS=100000000 REDISBLOOM_MODULE=/path/redisbloom.so bench/big-filter.sh
#
# Memory: bfs's filter, its replica's copy and RedisBloom's: 36-48 GB at the default size. Disk:
# the snapshot (the filter's size) twice. The data directories are made with mktemp -d (TMPDIR
# chooses the disk). A small CAPACITY (10^8) checks the script itself in a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
CAPACITY=${CAPACITY:-10000000000}
ERROR=${ERROR:-0.01}
ITEMS=${ITEMS:-100000000}
BFS_PORT=${BFS_PORT:-7491}
REPLICA_PORT=${REPLICA_PORT:-7492}
REDIS_PORT=${REDIS_PORT:-7493}
PIDS=()
DIRS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for dir in "${DIRS[@]}"; do rm -rf "$dir"; done
}
trap cleanup EXIT

wait_ping() {
  for _ in $(seq 6000); do
    redis-cli -p "$1" PING 2>/dev/null | grep -q PONG && return 0
    sleep 0.1
  done
  echo "server on port $1 did not answer" >&2
  exit 1
}
rps() {
  redis-benchmark -p "$1" -n "$ITEMS" -c 50 -P 16 -r 1000000000000 -q "${@:2}" | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1
}
rss_kib() { ps -o rss= -p "$1" | tr -d ' '; }
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }
start_bfs() { # port dir [args...]
  GLIBC_TUNABLES=glibc.malloc.mmap_threshold=16384 node --max-semi-space-size=1 --optimize-for-size dist/main.js \
    --port "$1" --dir "$2" --save "" --max-filter-bytes 0 --loglevel notice "${@:3}" >>"$2/log.txt" 2>&1 &
  PIDS+=($!)
  LAST_PID=$!
}

dir=$(mktemp -d); DIRS+=("$dir")
start_bfs "$BFS_PORT" "$dir"
bfs=$LAST_PID
wait_ping "$BFS_PORT"
redis-cli -p "$BFS_PORT" BF.RESERVE big "$ERROR" "$CAPACITY" NONSCALING
bytes=$(redis-cli -p "$BFS_PORT" BF.INFO big SIZE)
echo "filter: $CAPACITY items at $ERROR, $bytes bytes (BF.INFO Size)"
echo "bfs BF.ADD req/s: $(rps "$BFS_PORT" BF.ADD big __rand_int__)"
echo "bfs BF.EXISTS req/s: $(rps "$BFS_PORT" BF.EXISTS big __rand_int__)"
echo "bfs RSS after adds: $(rss_kib "$bfs") KiB"

# BGSAVE, with a PING a millisecond: the longest reply is the longest stall of the event loop.
node -e '
const net = require("node:net"); const s = net.connect(Number(process.argv[1]), "127.0.0.1")
let worst = 0, sent = 0, stop = false
s.on("data", () => { worst = Math.max(worst, performance.now() - sent); if (!stop) setTimeout(ping, 1) })
const ping = () => { sent = performance.now(); s.write("PING\r\n") }
s.on("connect", ping)
process.on("SIGTERM", () => { stop = true; console.log(`longest PING during BGSAVE: ${worst.toFixed(1)} ms`); process.exit(0) })
' "$BFS_PORT" &
pinger=$!
started=$(now)
redis-cli -p "$BFS_PORT" BGSAVE >/dev/null
until redis-cli -p "$BFS_PORT" INFO persistence | grep -q 'rdb_bgsave_in_progress:0'; do sleep 0.2; done
echo "bfs BGSAVE: $(since "$started") s"
kill -TERM "$pinger"; wait "$pinger" || true

# Full sync to a replica on this machine.
rdir=$(mktemp -d); DIRS+=("$rdir")
started=$(now)
start_bfs "$REPLICA_PORT" "$rdir" --replicaof 127.0.0.1 "$BFS_PORT"
replica=$LAST_PID
wait_ping "$REPLICA_PORT"
until redis-cli -p "$REPLICA_PORT" INFO replication | grep -q 'master_link_status:up'; do sleep 0.2; done
echo "full sync to a replica: $(since "$started") s, replica RSS $(rss_kib "$replica") KiB"
kill "$replica"

# Restart: the snapshot loaded.
kill "$bfs"; wait "$bfs" 2>/dev/null || true
started=$(now)
start_bfs "$BFS_PORT" "$dir"
bfs=$LAST_PID
wait_ping "$BFS_PORT"
echo "bfs restart, snapshot loaded: $(since "$started") s, RSS $(rss_kib "$bfs") KiB for $bytes bytes of filter"
grep 'DB loaded from disk' "$dir/log.txt" | tail -1
kill "$bfs"

if [ -n "${REDISBLOOM_MODULE:-}" ]; then
  rbdir=$(mktemp -d); DIRS+=("$rbdir")
  redis-server --port "$REDIS_PORT" --dir "$rbdir" --save "" --appendonly no --loadmodule "$REDISBLOOM_MODULE" >"$rbdir/log.txt" 2>&1 &
  PIDS+=($!)
  redis=$!
  wait_ping "$REDIS_PORT"
  redis-cli -p "$REDIS_PORT" BF.RESERVE big "$ERROR" "$CAPACITY" NONSCALING
  echo "RedisBloom BF.ADD req/s: $(rps "$REDIS_PORT" BF.ADD big __rand_int__)"
  echo "RedisBloom BF.EXISTS req/s: $(rps "$REDIS_PORT" BF.EXISTS big __rand_int__)"
  echo "RedisBloom RSS: $(rss_kib "$redis") KiB"
  kill "$redis"
else
  echo "RedisBloom: not run (set REDISBLOOM_MODULE to its redisbloom.so)"
fi

# In process: ns per item at 1 GiB and at this filter's size.
gib=$(echo "scale=2; $bytes / 1073741824" | bc)
BIG_LAYER_GIB="1 $gib" npm run --silent bench:big-layer
