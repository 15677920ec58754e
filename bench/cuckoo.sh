#!/usr/bin/env bash
# Cuckoo filters on the wire: redis-benchmark CF.ADD / CF.EXISTS / CF.DEL at -P 1 and -P 16 against
# bfs (and, in the same run, redis-server with RedisBloom when REDISBLOOM_SO is set, and another
# bfs build when BASE_MAIN is set), RUNS rounds alternating servers, one table of medians: req/s,
# p50, p99, the server's CPU µs per request (user + system from /proc/<pid>/stat) and bfs's ratio
# to RedisBloom. Then bytes per item for the same capacity: CF.INFO Size (RedisBloom's layout,
# 40 + 16·filters + bucket size·buckets, the same on both) and bfs's used_memory growth.
#
# Usage: bench/cuckoo.sh [runs, default 3]          (loopback only; about a minute per run)
#   SCALE=0.5 bench/cuckoo.sh       fewer requests per test (default 1)
#   PIPELINES='16' bench/cuckoo.sh  only these -P depths (default '1 16')
#   REDISBLOOM_SO=/path/to/redisbloom.so bench/cuckoo.sh   also redis-server with that module
#   BASE_MAIN=/path/to/dist/main.js bench/cuckoo.sh        also another bfs build: before / after
#   ROUNDS=1 bench/cuckoo.sh 3      also each round's rows (CPU per request and its ratio to RedisBloom)
# Needs redis-server, redis-benchmark and redis-cli (Debian: apt-get install -y redis-server redis-tools).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
SCALE=${SCALE:-1}
PIPELINES=${PIPELINES:-1 16}
CLIENTS=50
KEYSPACE=1000000
# Reserved for the keyspace: 2^20 buckets of 2 slots, no growth in a round of adds.
CAPACITY=2000000
for tool in redis-server redis-benchmark redis-cli; do
  command -v "$tool" >/dev/null || { echo "$tool not found (apt-get install -y redis-server redis-tools)" >&2; exit 1; }
done
npm run build --silent

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
DIR=$(mktemp -d)
RESULTS="$DIR/results.csv" # label,pipeline,server,rps,p50,p99,cpu_us
declare -A PORT PID
cleanup() {
  for server in "${!PID[@]}"; do kill "${PID[$server]}" 2>/dev/null && wait "${PID[$server]}" 2>/dev/null; done
  rm -rf "$DIR"
}
trap cleanup EXIT

start_bfs() { # name main.js
  PORT[$1]=$(free_port)
  mkdir -p "$DIR/$1"
  GLIBC_TUNABLES=glibc.malloc.mmap_threshold=16384 node --max-semi-space-size=1 --optimize-for-size "$2" --bind 127.0.0.1 \
    --port "${PORT[$1]}" --dir "$DIR/$1" --save "" --appendonly no --loglevel warning >/dev/null &
  PID[$1]=$!
}
SERVERS=(bfs)
start_bfs bfs dist/main.js
if [ -n "${BASE_MAIN:-}" ]; then
  start_bfs base "$BASE_MAIN"
  SERVERS+=(base)
fi
if [ -n "${REDISBLOOM_SO:-}" ]; then
  PORT[redisbloom]=$(free_port)
  mkdir -p "$DIR/rb"
  redis-server --bind 127.0.0.1 --port "${PORT[redisbloom]}" --save '' --appendonly no --dir "$DIR/rb" --loglevel warning \
    --daemonize no --loadmodule "$REDISBLOOM_SO" >/dev/null &
  PID[redisbloom]=$!
  SERVERS+=(redisbloom)
fi
for server in "${SERVERS[@]}"; do
  for _ in $(seq 100); do redis-cli -p "${PORT[$server]}" PING >/dev/null 2>&1 && break; sleep 0.1; done
done

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
scaled() { awk -v n="$1" -v s="$SCALE" 'BEGIN { printf "%d", n * s }'; }
fresh() { redis-cli -p "$1" DEL bench >/dev/null && redis-cli -p "$1" CF.RESERVE bench "$CAPACITY" >/dev/null; }

# bench label server pipeline requests command...: appends a row to RESULTS
bench() {
  local label=$1 server=$2 pipeline=$3 requests=$4
  shift 4
  local before csv ticks
  before=$(cpu_ticks "${PID[$server]}")
  csv=$(redis-benchmark -h 127.0.0.1 -p "${PORT[$server]}" -c "$CLIENTS" -P "$pipeline" -n "$requests" -r "$KEYSPACE" --csv --precision 3 "$@" 2>/dev/null | tr -d '"')
  ticks=$(( $(cpu_ticks "${PID[$server]}") - before ))
  awk -F, -v l="$label" -v s="$server" -v p="$pipeline" -v ticks="$ticks" -v n="$requests" -v hz="$(getconf CLK_TCK)" \
    'NR > 1 && NF >= 8 { printf "%s,%s,%s,%s,%s,%s,%s\n", l, p, s, $2, $5, $7, ticks * 1e6 / hz / n }' <<<"$csv" >>"$RESULTS"
}

# Warm-up, not recorded.
for server in "${SERVERS[@]}"; do
  fresh "${PORT[$server]}"
  redis-benchmark -h 127.0.0.1 -p "${PORT[$server]}" -c "$CLIENTS" -P 16 -n "$(scaled 300000)" -r "$KEYSPACE" -q CF.ADD bench __rand_int__ >/dev/null 2>&1
done

echo "bfs CF.* $(node --version), $(nproc) CPUs, $(date -u +%Y-%m-%d)" >&2
for run in $(seq "$RUNS"); do
  for pipeline in $PIPELINES; do
    requests=$(scaled "$([ "$pipeline" = 1 ] && echo 100000 || echo 500000)")
    for server in "${SERVERS[@]}"; do
      # Each round on a fresh filter: adds, then lookups and deletes of the same random keys.
      fresh "${PORT[$server]}"
      bench CF.ADD "$server" "$pipeline" "$requests" CF.ADD bench __rand_int__
      bench CF.EXISTS "$server" "$pipeline" "$requests" CF.EXISTS bench __rand_int__
      bench CF.DEL "$server" "$pipeline" "$requests" CF.DEL bench __rand_int__
    done
    echo "run $run/$RUNS -P $pipeline done" >&2
  done
done

echo
echo "redis-benchmark -c $CLIENTS -r $KEYSPACE --precision 3, CF.RESERVE bench $CAPACITY, median of $RUNS runs, $(date -u +%Y-%m-%d), node $(node --version), $(nproc) CPUs"
echo
printf '| %-20s | %3s | %10s | %8s | %8s | %10s | %7s | %10s |\n' server/test -P 'req/s' 'p50 ms' 'p99 ms' 'CPU us/req' 'vs RB' 'CPU vs RB'
printf '|%s|\n' '----------------------|----:|-----------:|---------:|---------:|-----------:|--------:|-----------:'
median_of() { # label pipeline server column
  awk -F, -v l="$1" -v p="$2" -v s="$3" -v c="$4" '$1 == l && $2 == p && $3 == s { print $c }' "$RESULTS" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
for pipeline in $PIPELINES; do
  for label in CF.ADD CF.EXISTS CF.DEL; do
    rb_rps=$(median_of "$label" "$pipeline" redisbloom 4)
    rb_cpu=$(median_of "$label" "$pipeline" redisbloom 7)
    for server in "${SERVERS[@]}"; do
      awk -v s="$server $label" -v p="$pipeline" -v rps="$(median_of "$label" "$pipeline" "$server" 4)" \
        -v p50="$(median_of "$label" "$pipeline" "$server" 5)" -v p99="$(median_of "$label" "$pipeline" "$server" 6)" \
        -v cpu="$(median_of "$label" "$pipeline" "$server" 7)" -v rbr="${rb_rps:-0}" -v rbc="${rb_cpu:-0}" 'BEGIN {
          vs = rbr > 0 ? sprintf("%.2fx", rps / rbr) : ""
          cvs = rbc > 0 && cpu > 0 ? sprintf("%.2fx", rbc / cpu) : ""
          printf "| %-20s | %3s | %10.0f | %8.3f | %8.3f | %10.2f | %7s | %10s |\n", s, p, rps, p50, p99, cpu, vs, cvs
        }'
    done
  done
done

if [ -n "${ROUNDS:-}" ]; then
  # Rows are appended in order: the n-th row of a test and server is round n.
  echo
  echo "Each round: CPU us/req of each server (and RedisBloom's over bfs's)"
  awk -F, '{ n = ++seen[$1 "," $2 "," $3]; cpu[$1 "," $2 "," $3 "," n] = $7; if (n > rounds) rounds = n; keys[$1 "," $2] = 1; if ($3 != "redisbloom") servers[$3] = 1 }
    END {
      for (k in keys) for (r = 1; r <= rounds; r++) {
        line = sprintf("  %-10s -P %-2s round %d:", substr(k, 1, index(k, ",") - 1), substr(k, index(k, ",") + 1), r)
        rb = cpu[k ",redisbloom," r]
        for (s in servers) {
          v = cpu[k "," s "," r]
          line = line sprintf(" %s %.2f", s, v)
          if (rb != "" && v > 0) line = line sprintf(" (%.2fx)", rb / v)
        }
        if (rb != "") line = line sprintf(" redisbloom %.2f", rb)
        print line
      }
    }' "$RESULTS" | sort
fi

# Bytes per item: a filter reserved for CAPACITY (bucket size 2) given distinct items in CF.INSERTs of
# 10,000 until 90% of its slots (one that grows) or until full (EXPANSION 0: refusals answer -1).
# RedisBloom's bytes come from its layout (rebloom.c CFSize: 40 + 16 per sub-filter + bucket size
# x buckets, numBuckets x expansion^i for sub-filter i), computed here from CF.INFO's settings;
# bfs's are its MEMORY USAGE and the growth of INFO's bfs_filter_bytes (the buckets it holds).
port=${PORT[bfs]}
redis-cli -p "$port" FLUSHALL >/dev/null
held() { redis-cli -p "$port" INFO memory | awk -F: '/^bfs_filter_bytes:/ { print $2 + 0 }'; }
echo
echo "Bytes per item, CF.RESERVE $CAPACITY (bucket size 2), up to $((CAPACITY * 9 / 10)) distinct items:"
for spec in "grows|" "fixed|EXPANSION 0"; do
  IFS='|' read -r key options <<<"$spec"
  before=$(held)
  # shellcheck disable=SC2086
  redis-cli -p "$port" CF.RESERVE "$key" "$CAPACITY" $options >/dev/null
  for ((start = 0; start < CAPACITY * 9 / 10; start += 10000)); do
    # shellcheck disable=SC2046
    redis-cli -p "$port" CF.INSERT "$key" ITEMS $(seq -f "$key-%.0f" "$start" $((start + 9999))) >/dev/null
  done
  buckets=$(( $(held) - before ))
  usage=$(redis-cli -p "$port" MEMORY USAGE "$key")
  redis-cli -p "$port" CF.INFO "$key" | paste - - | awk -v k="$key" -v buckets="$buckets" -v usage="$usage" -F'\t' '
    { f[$1] = $2 } END {
      items = f["Number of items inserted"]; n = f["Number of filters"]; e = f["Expansion rate"]
      total = 0; b = f["Number of buckets"]
      for (i = 0; i < n; i++) { total += b; b *= (e > 0 ? e : 1) }
      rb = 40 + 16 * n + f["Bucket size"] * total
      printf "  %-5s %7d items, %d sub-filter(s): RedisBloom %d B = %.3f B/item; bfs MEMORY USAGE %d B = %.3f B/item, buckets held %d B = %.3f B/item\n",
        k, items, n, rb, rb / items, usage, usage / items, buckets, buckets / items
    }'
done
