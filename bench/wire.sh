#!/usr/bin/env bash
# Wire throughput: redis-benchmark against bfs and against redis-server 7.0 (PING_MBULK, the
# ceiling of the benchmark client and the loopback on this machine) in the same run, alternating,
# RUNS rounds, and one table of medians: req/s, items/s, p50, p99 and the ratio to redis-server's
# PING_MBULK at the same pipeline depth. Issue 6's targets are printed beside the ratios.
#
# Usage: bench/wire.sh [runs, default 3]           (loopback only; a few minutes)
#   SCALE=0.5 bench/wire.sh     fewer requests per test (default 1)
#   ONLY='BF.ADD' bench/wire.sh only the tests whose label contains this (PING_MBULK always runs)
#   PIPELINES='16' bench/wire.sh  only these -P depths (default '1 16')
#   BFS_NODE_FLAGS='--cpu-prof --cpu-prof-dir=prof' bench/wire.sh   profile bfs (written at exit)
#   REDISBLOOM_SO=/path/to/redisbloom.so bench/wire.sh   also a redis-server with that module (a
#                               RedisBloom 2.4 you built yourself): every BF.* test runs on both,
#                               and a column gives bfs's ratio to RedisBloom
#   BASE_MAIN=/path/to/dist/main.js bench/wire.sh   also another bfs build (say, an earlier commit
#                               built elsewhere) on the same tests: before and after in one run
#   DURABLE=1 bench/wire.sh     every server with appendonly yes, appendfsync everysec
# Needs redis-server and redis-benchmark (Debian: apt-get install -y redis-server redis-tools).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
SCALE=${SCALE:-1}
ONLY=${ONLY:-}
PIPELINES=${PIPELINES:-1 16}
CLIENTS=50
KEYSPACE=1000000
for tool in redis-server redis-benchmark redis-cli; do
  command -v "$tool" >/dev/null || { echo "$tool not found (apt-get install -y redis-server redis-tools)" >&2; exit 1; }
done
npm run build --silent

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
BFS_PORT=$(free_port)
REDIS_PORT=$(free_port)
DIR=$(mktemp -d)
RESULTS="$DIR/results.csv" # label,pipeline,server,rps,p50,p99
BFS_PID=''
REDIS_PID=''
RB_PID=''
BASE_PID=''
RB_PORT=$(free_port)
BASE_PORT=$(free_port)
APPENDONLY=$([ "${DURABLE:-0}" = 1 ] && echo yes || echo no)
cleanup() {
  [ -n "$RB_PID" ] && kill "$RB_PID" 2>/dev/null && wait "$RB_PID" 2>/dev/null
  [ -n "$BASE_PID" ] && kill "$BASE_PID" 2>/dev/null && wait "$BASE_PID" 2>/dev/null
  # SIGINT lets bfs exit normally, so a --cpu-prof profile gets written.
  [ -n "$BFS_PID" ] && kill -INT "$BFS_PID" 2>/dev/null && wait "$BFS_PID" 2>/dev/null
  [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null && wait "$REDIS_PID" 2>/dev/null
  rm -rf "$DIR"
}
trap cleanup EXIT

# shellcheck disable=SC2086
GLIBC_TUNABLES=glibc.malloc.mmap_threshold=16384 node --max-semi-space-size=1 --optimize-for-size ${BFS_NODE_FLAGS:-} dist/main.js --bind 127.0.0.1 --port "$BFS_PORT" --dir "$DIR" --save "" --appendonly "$APPENDONLY" \
  --appendfsync everysec --loglevel warning >/dev/null &
BFS_PID=$!
SERVERS=(bfs)
if [ -n "${BASE_MAIN:-}" ]; then
  mkdir -p "$DIR/base"
  GLIBC_TUNABLES=glibc.malloc.mmap_threshold=16384 node --max-semi-space-size=1 --optimize-for-size "$BASE_MAIN" --bind 127.0.0.1 --port "$BASE_PORT" --dir "$DIR/base" \
    --save "" --appendonly "$APPENDONLY" --appendfsync everysec --loglevel warning >/dev/null &
  BASE_PID=$!
  SERVERS+=(base)
fi
if [ -n "${REDISBLOOM_SO:-}" ]; then
  mkdir -p "$DIR/rb"
  redis-server --bind 127.0.0.1 --port "$RB_PORT" --save '' --appendonly "$APPENDONLY" --appendfsync everysec --dir "$DIR/rb" \
    --loglevel warning --daemonize no --loadmodule "$REDISBLOOM_SO" >/dev/null &
  RB_PID=$!
  SERVERS+=(redisbloom)
fi
port_of() { case "$1" in bfs) echo "$BFS_PORT" ;; base) echo "$BASE_PORT" ;; redisbloom) echo "$RB_PORT" ;; esac; }
redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly "$APPENDONLY" --appendfsync everysec --dir "$DIR" --loglevel warning \
  --daemonize no >/dev/null &
REDIS_PID=$!
for server in redis "${SERVERS[@]}"; do
  port=$([ "$server" = redis ] && echo "$REDIS_PORT" || port_of "$server")
  for _ in $(seq 100); do redis-cli -p "$port" PING >/dev/null 2>&1 && break; sleep 0.1; done
done
# A filter reserved up front for 10M items: BF.ADD measures the hot path, not the scale-ups of a
# filter auto-created with capacity 100 (14 layers by a million items).
for server in "${SERVERS[@]}"; do redis-cli -p "$(port_of "$server")" BF.RESERVE bench 0.01 10000000 >/dev/null; done

ITEMS10='__rand_int__ __rand_int__ __rand_int__ __rand_int__ __rand_int__ __rand_int__ __rand_int__ __rand_int__ __rand_int__ __rand_int__'
# label | items per call | requests at -P 1 | requests at -P 16 | command (empty: -t ping_mbulk)
TESTS=(
  "PING_MBULK|1|200000|1500000|"
  "BF.ADD|1|200000|1000000|BF.ADD bench __rand_int__"
  "BF.EXISTS|1|200000|1000000|BF.EXISTS bench __rand_int__"
  "BF.MADD x10|10|100000|300000|BF.MADD bench $ITEMS10"
  "BF.MEXISTS x10|10|100000|300000|BF.MEXISTS bench $ITEMS10"
)
# Issue 6: RedisBloom 2.4's share of redis-server PING_MBULK in the same run, per test and depth.
target() {
  case "$1|$2" in
    'BF.ADD|1') echo 1.1 ;; 'BF.ADD|16') echo 0.56 ;; 'BF.EXISTS|16') echo 0.63 ;;
    'BF.MADD x10|16') echo 0.19 ;; 'BF.MEXISTS x10|16') echo 0.21 ;; *) echo '' ;;
  esac
}

pid_of() { case "$1" in bfs) echo "$BFS_PID" ;; base) echo "$BASE_PID" ;; redisbloom) echo "$RB_PID" ;; redis) echo "$REDIS_PID" ;; esac; }
# CPU time (user + system, clock ticks) a server process has used: beside req/s, whose figure a
# machine busy with other work lowers, the server's own CPU per request.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# bench label server port pipeline requests command...: appends
# label,pipeline,server,rps,p50,p99,cpu_us_per_request to RESULTS
bench() {
  local label=$1 server=$2 port=$3 pipeline=$4 requests=$5
  shift 5
  local pid before
  pid=$(pid_of "$server")
  before=$(cpu_ticks "$pid")
  local args=(-h 127.0.0.1 -p "$port" -c "$CLIENTS" -P "$pipeline" -n "$requests" -r "$KEYSPACE" --csv --precision 3)
  if [ $# -eq 0 ]; then args+=(-t ping_mbulk); else args+=("$@"); fi
  # CSV: "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
  local csv
  csv=$(redis-benchmark "${args[@]}" 2>/dev/null | tr -d '"')
  local ticks=$(( $(cpu_ticks "$pid") - before ))
  awk -F, -v l="$label" -v s="$server" -v p="$pipeline" -v ticks="$ticks" -v n="$requests" -v hz="$(getconf CLK_TCK)" \
    'NR > 1 && NF >= 8 { printf "%s,%s,%s,%s,%s,%s,%s\n", l, p, s, $2, $5, $7, ticks * 1e6 / hz / n }' <<<"$csv" >>"$RESULTS"
}

scaled() { awk -v n="$1" -v s="$SCALE" 'BEGIN { printf "%d", n * s }'; }

# Warm-up, not recorded: the JIT settles on the hot path before the first measured run.
for server in "${SERVERS[@]}"; do
  redis-benchmark -h 127.0.0.1 -p "$(port_of "$server")" -c "$CLIENTS" -P 16 -n "$(scaled 300000)" -r "$KEYSPACE" -q \
    BF.ADD bench __rand_int__ >/dev/null 2>&1
done

echo "bfs vs redis-server $(redis-server --version | awk '{print $3}' | cut -d= -f2), node $(node --version), $(nproc) CPUs, $(date -u +%Y-%m-%d)" >&2
for run in $(seq "$RUNS"); do
  for pipeline in $PIPELINES; do
    for spec in "${TESTS[@]}"; do
      IFS='|' read -r label _ n1 n16 command <<<"$spec"
      [ -n "$ONLY" ] && [ "$label" != PING_MBULK ] && [[ "$label" != *"$ONLY"* ]] && continue
      requests=$(scaled "$([ "$pipeline" = 1 ] && echo "$n1" || echo "$n16")")
      # shellcheck disable=SC2086
      if [ "$label" = PING_MBULK ]; then
        bench "$label" redis "$REDIS_PORT" "$pipeline" "$requests"
        bench "$label" bfs "$BFS_PORT" "$pipeline" "$requests"
      else
        # shellcheck disable=SC2086
        for server in "${SERVERS[@]}"; do bench "$label" "$server" "$(port_of "$server")" "$pipeline" "$requests" $command; done
      fi
    done
    echo "run $run/$RUNS -P $pipeline done" >&2
  done
done

# Medians over the runs, and ratios to redis-server's PING_MBULK median at the same depth.
echo
echo "redis-benchmark -c $CLIENTS -r $KEYSPACE --precision 3, median of $RUNS runs, $(date -u +%Y-%m-%d), node $(node --version), $(nproc) CPUs"
echo
printf '| %-26s | %3s | %10s | %10s | %8s | %8s | %9s | %6s | %7s | %9s |\n' server/test -P 'req/s' 'items/s' 'p50 ms' 'p99 ms' 'vs PING' target 'vs RB' 'CPU us/req'
printf '|%s|\n' '----------------------------|----:|-----------:|-----------:|---------:|---------:|----------:|-------:|--------:|----------:'
for pipeline in $PIPELINES; do
  reference=$(awk -F, -v p="$pipeline" '$1 == "PING_MBULK" && $2 == p && $3 == "redis" { print $4 }' "$RESULTS" | sort -g |
    awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  rows=("redis|PING_MBULK|1" "bfs|PING_MBULK|1")
  for spec in "BF.ADD|1" "BF.EXISTS|1" "BF.MADD x10|10" "BF.MEXISTS x10|10"; do
    for server in "${SERVERS[@]}"; do rows+=("$server|$spec"); done
  done
  for row in "${rows[@]}"; do
    IFS='|' read -r server label items <<<"$row"
    rb=$(awk -F, -v l="$label" -v p="$pipeline" '$1 == l && $2 == p && $3 == "redisbloom" { print $4 }' "$RESULTS" | sort -g |
      awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
    awk -F, -v l="$label" -v p="$pipeline" -v s="$server" -v items="$items" -v ref="$reference" -v rb="${rb:-0}" -v tgt="$(target "$label" "$pipeline")" '
      function median(a, n,   i, j, t) {
        for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
      }
      $1 == l && $2 == p && $3 == s { n++; rps[n] = $4; p50[n] = $5; p99[n] = $6; cpu[n] = $7 }
      END {
        if (n == 0) exit
        r = median(rps, n)
        ratio = ref > 0 ? sprintf("%.2fx", r / ref) : "-"
        mark = tgt == "" ? "" : (ref > 0 && r / ref >= tgt ? tgt "x ok" : tgt "x LOW")
        vsrb = rb > 0 ? sprintf("%.2fx", r / rb) : ""
        printf "| %-26s | %3s | %10.0f | %10.0f | %8.3f | %8.3f | %9s | %6s | %7s | %9.2f |\n", s " " l, p, r, r * items, median(p50, n), median(p99, n), ratio, mark, vsrb, median(cpu, n)
      }' "$RESULTS"
  done
done
