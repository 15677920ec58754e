#!/usr/bin/env bash
# What replication costs in CPU (utime + stime from /proc/<pid>/stat), for a write load:
#   solo     a bfs with the append-only log on serving REQUESTS BF.ADD (redis-benchmark, 50 clients,
#            -P 16, random items into a 10M-capacity filter);
#   master   the same load on a bfs master (log on) with one bfs replica attached, counted until the
#            replica's offset has caught up with the master's;
#   replica  that replica's CPU to apply the master's stream (log on too: REPLICA_APPENDONLY=no
#            turns it off), over the same span.
# RUNS rounds (default 3), each on a fresh filter, solo and master alternating; prints each run,
# the medians, and the two ratios: replica ÷ solo and master ÷ solo. CPU per request, not req/s:
# load from other processes on a shared machine moves req/s far more than CPU time.
#
# Usage: bench/replica-cpu.sh [RUNS=3]
#   REQUESTS=400000 WARMUP=100000 REPLICA_APPENDONLY=yes bench/replica-cpu.sh 3
#   REDISBLOOM_SO=/path/to/redisbloom.so bench/replica-cpu.sh   the same on redis-server 7 with
#                  that module (a RedisBloom 2.4 you built yourself), for reference
# Loopback only; needs redis-benchmark and redis-cli (Debian redis-tools); builds bfs first.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
REQUESTS=${REQUESTS:-400000}
WARMUP=${WARMUP:-100000}
REPLICA_APPENDONLY=${REPLICA_APPENDONLY:-yes}
for tool in redis-benchmark redis-cli; do
  command -v "$tool" >/dev/null || { echo "$tool not found (apt-get install -y redis-tools)" >&2; exit 1; }
done
npm run build --silent
KINDS=(bfs)
[ -n "${REDISBLOOM_SO:-}" ] && KINDS+=(redisbloom)
DIR=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$DIR"
}
trap cleanup EXIT
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
HZ=$(getconf CLK_TCK)
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
sys() { awk '{ print $15 }' "/proc/$1/stat"; }
field() { redis-cli -p "$1" INFO replication | tr -d '\r' | awk -F: -v f="$2" '$1 == f { print $2 }'; }

# start KIND NAME APPENDONLY [MASTER_PORT]: sets PORT and PID.
# bfs runs with the glibc tunables of this checkout's `npm start`.
TUNABLES=$(node -p 'require("./package.json").scripts.start.match(/GLIBC_TUNABLES=(\S+)/)?.[1] ?? ""')

start() {
  local kind=$1 name=$2 appendonly=$3 master=${4:-}
  PORT=$(free_port)
  mkdir -p "$DIR/$name"
  local replicaof=()
  [ -n "$master" ] && replicaof=(--replicaof 127.0.0.1 "$master")
  if [ "$kind" = bfs ]; then
    GLIBC_TUNABLES=$TUNABLES node --max-semi-space-size=1 --optimize-for-size dist/main.js --bind 127.0.0.1 \
      --port "$PORT" --dir "$DIR/$name" --save '' --appendonly "$appendonly" --loglevel warning "${replicaof[@]}" \
      >"$DIR/$name.log" 2>&1 &
  else
    redis-server --bind 127.0.0.1 --port "$PORT" --dir "$DIR/$name" --save '' --appendonly "$appendonly" \
      --loglevel warning --daemonize no --loadmodule "$REDISBLOOM_SO" "${replicaof[@]}" >"$DIR/$name.log" 2>&1 &
  fi
  PID=$!
  PIDS+=("$PID")
  for _ in $(seq 100); do redis-cli -p "$PORT" PING >/dev/null 2>&1 && return; sleep 0.1; done
  echo "$name did not start" >&2; exit 1
}

load() { redis-benchmark -p "$1" -c 50 -P 16 -n "$2" -r 100000000 -q BF.ADD "$3" __rand_int__ >/dev/null 2>&1; }

# caught_up MASTER_PORT REPLICA_PORT: waits until the replica has applied all the master has sent
# so far (at least: the master's pings every repl-ping-replica-period may move both on meanwhile).
caught_up() {
  local want
  want=$(field "$1" master_repl_offset)
  for _ in $(seq 6000); do
    [ "$(field "$2" master_repl_offset)" -ge "$want" ] && return
    sleep 0.01
  done
  echo "the replica did not catch up" >&2; exit 1
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

for kind in "${KINDS[@]}"; do
  start "$kind" "$kind-solo" yes; SOLO_PORT=$PORT; SOLO_PID=$PID
  start "$kind" "$kind-master" yes; MASTER_PORT=$PORT; MASTER_PID=$PID
  start "$kind" "$kind-replica" "$REPLICA_APPENDONLY" "$MASTER_PORT"; REPLICA_PORT=$PORT; REPLICA_PID=$PID
  for _ in $(seq 300); do [ "$(field "$REPLICA_PORT" master_link_status)" = up ] && break; sleep 0.1; done
  # Warm-up, not recorded: the JIT settles on the hot paths (the replica's apply path included).
  for port in "$SOLO_PORT" "$MASTER_PORT"; do
    redis-cli -p "$port" BF.RESERVE warm 0.01 10000000 >/dev/null
    load "$port" "$WARMUP" warm
  done
  caught_up "$MASTER_PORT" "$REPLICA_PORT"
  results=$DIR/$kind.results
  for run in $(seq "$RUNS"); do
    for port in "$SOLO_PORT" "$MASTER_PORT"; do redis-cli -p "$port" BF.RESERVE "f$run" 0.01 10000000 >/dev/null; done
    caught_up "$MASTER_PORT" "$REPLICA_PORT"
    s0=$(cpu "$SOLO_PID"); ss0=$(sys "$SOLO_PID")
    load "$SOLO_PORT" "$REQUESTS" "f$run"
    s1=$(cpu "$SOLO_PID"); ss1=$(sys "$SOLO_PID")
    m0=$(cpu "$MASTER_PID"); ms0=$(sys "$MASTER_PID"); r0=$(cpu "$REPLICA_PID")
    load "$MASTER_PORT" "$REQUESTS" "f$run"
    caught_up "$MASTER_PORT" "$REPLICA_PORT"
    m1=$(cpu "$MASTER_PID"); ms1=$(sys "$MASTER_PID"); r1=$(cpu "$REPLICA_PID")
    awk -v k="$kind" -v r="$run" -v hz="$HZ" -v s=$((s1 - s0)) -v m=$((m1 - m0)) -v p=$((r1 - r0)) \
      -v ss=$((ss1 - ss0)) -v ms=$((ms1 - ms0)) 'BEGIN {
      printf "%s run %d: solo %.2f s (system %.2f), master %.2f s (system %.2f), replica %.2f s of CPU\n", k, r, s / hz, ss / hz, m / hz, ms / hz, p / hz
    }' >&2
    echo "$((s1 - s0)) $((m1 - m0)) $((r1 - r0))" >>"$results"
  done
  solo=$(awk '{ print $1 }' "$results" | median)
  master=$(awk '{ print $2 }' "$results" | median)
  replica=$(awk '{ print $3 }' "$results" | median)
  awk -v k="$kind" -v n="$REQUESTS" -v runs="$RUNS" -v hz="$HZ" -v s="$solo" -v m="$master" -v p="$replica" -v ra="$REPLICA_APPENDONLY" 'BEGIN {
    printf "%s, %d BF.ADD -c 50 -P 16, appendonly yes (replica: %s), medians of %d runs:\n", k, n, ra, runs
    printf "  solo server    %.2f s CPU  (%.2f µs per add)\n", s / hz, s / hz / n * 1e6
    printf "  master         %.2f s CPU  (%.2f µs per add)\n", m / hz, m / hz / n * 1e6
    printf "  replica        %.2f s CPU  (%.2f µs per add)\n", p / hz, p / hz / n * 1e6
    printf "  replica / solo %.2f   master / solo %.2f\n", p / s, m / s
  }'
  for pid in "$SOLO_PID" "$MASTER_PID" "$REPLICA_PID"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
done
