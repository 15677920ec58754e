#!/usr/bin/env bash
# Sliding-window filters over the wire: redis-benchmark's APBF.ADD / APBF.EXISTS (a COUNT window
# and a TIME window of 1M items) beside BF.ADD / BF.EXISTS (a Bloom filter reserved for 10M) on
# the same bfs, tests alternating, RUNS rounds; one table of medians: req/s, p50, p99 and the
# ratio to BF.ADD (adds) or BF.EXISTS (checks) of the same round.
#
# Usage: bench/window-wire.sh [runs, default 3]     (loopback only; a minute or two)
#   PIPELINES='1 16' bench/window-wire.sh           -P depths (default 16)
# Needs redis-benchmark and redis-cli (Debian: apt-get install -y redis-tools).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
PIPELINES=${PIPELINES:-16}
CLIENTS=50
KEYSPACE=1000000
REQUESTS=${REQUESTS:-300000}
for tool in redis-benchmark redis-cli; do
  command -v "$tool" >/dev/null || { echo "$tool not found (apt-get install -y redis-tools)" >&2; exit 1; }
done
npm run build --silent

PORT=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
DIR=$(mktemp -d)
RESULTS="$DIR/results.csv" # label,pipeline,round,rps,p50,p99
BFS_PID=''
cleanup() {
  [ -n "$BFS_PID" ] && kill -INT "$BFS_PID" 2>/dev/null && wait "$BFS_PID" 2>/dev/null
  rm -rf "$DIR"
}
trap cleanup EXIT

GLIBC_TUNABLES=glibc.malloc.mmap_threshold=16384 node --max-semi-space-size=1 --optimize-for-size dist/main.js --bind 127.0.0.1 --port "$PORT" --dir "$DIR" --save "" --appendonly no \
  --loglevel warning >/dev/null &
BFS_PID=$!
for _ in $(seq 100); do redis-cli -p "$PORT" PING >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$PORT" BF.RESERVE bloom 0.01 10000000 >/dev/null
redis-cli -p "$PORT" APBF.RESERVE count COUNT 0.01 1000000 >/dev/null
redis-cli -p "$PORT" APBF.RESERVE time TIME 0.01 1000000 60 >/dev/null

# label | base label (the ratio's denominator) | command
TESTS=(
  "BF.ADD|BF.ADD|BF.ADD bloom __rand_int__"
  "APBF.ADD COUNT|BF.ADD|APBF.ADD count __rand_int__"
  "APBF.ADD TIME|BF.ADD|APBF.ADD time __rand_int__"
  "BF.EXISTS|BF.EXISTS|BF.EXISTS bloom __rand_int__"
  "APBF.EXISTS COUNT|BF.EXISTS|APBF.EXISTS count __rand_int__"
  "APBF.EXISTS TIME|BF.EXISTS|APBF.EXISTS time __rand_int__"
)

for round in $(seq "$RUNS"); do
  for pipeline in $PIPELINES; do
    for test in "${TESTS[@]}"; do
      IFS='|' read -r label _ command <<<"$test"
      # shellcheck disable=SC2086
      redis-benchmark -h 127.0.0.1 -p "$PORT" -c "$CLIENTS" -P "$pipeline" -n "$REQUESTS" -r "$KEYSPACE" --csv --precision 3 $command 2>/dev/null |
        tr -d '"' | awk -F, -v l="$label" -v p="$pipeline" -v r="$round" 'NR > 1 && NF >= 8 { printf "%s,%s,%s,%s,%s,%s\n", l, p, r, $2, $5, $7 }' >>"$RESULTS"
    done
  done
done

echo "| test | -P | req/s (median) | p50 ms | p99 ms | ratio to BF.ADD / BF.EXISTS (median of rounds) |"
echo "|---|---|---|---|---|---|"
node - "$RESULTS" "${TESTS[@]}" <<'EOF'
const [file, ...tests] = process.argv.slice(2)
const rows = require('fs').readFileSync(file, 'utf8').trim().split('\n').map((line) => line.split(','))
const median = (values) => { const s = [...values].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }
const pipelines = [...new Set(rows.map((r) => r[1]))]
for (const pipeline of pipelines) {
  for (const test of tests) {
    const [label, base] = test.split('|')
    const mine = rows.filter((r) => r[0] === label && r[1] === pipeline)
    const ratios = mine.map((r) => Number(r[3]) / Number(rows.find((b) => b[0] === base && b[1] === pipeline && b[2] === r[2])[3]))
    const rps = median(mine.map((r) => Number(r[3])))
    console.log(`| ${label} | ${pipeline} | ${Math.round(rps).toLocaleString('en')} | ${median(mine.map((r) => Number(r[4])))} | ${median(mine.map((r) => Number(r[5])))} | ${median(ratios).toFixed(2)} |`)
  }
}
EOF
