#!/usr/bin/env bash
# Bulk import throughput: bfs-import against `redis-cli --pipe` sending the same adds, into one
# bfs (persistence off, so only the wire and the filter are measured).
#
#   npm run build && bash bench/import.sh [items] [runs]      (defaults: 1000000 items, 3 runs)
#
# The items are URL-like lines generated deterministically. Each tool runs `runs` times into a
# fresh filter reserved for all the items at 0.1 %; the best wall time of each is reported.
# redis-cli --pipe gets the same BF.MADD batches of 1000 that bfs-import sends by default, and
# also one BF.ADD per line (what a hand-written "redis-cli --pipe" import usually sends).
set -euo pipefail

ITEMS=${1:-1000000}
RUNS=${2:-3}
BATCH=1000
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bfs-import-bench.XXXXXX")
PORT=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')

cleanup() {
  if [[ -n "${SERVER_PID:-}" ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

command -v redis-cli >/dev/null || { echo "redis-cli is not installed" >&2; exit 1; }
[[ -f "$ROOT/dist/tools/bfs-import.js" ]] || { echo "run npm run build first" >&2; exit 1; }

# Lines, and the same adds as RESP for redis-cli --pipe: BF.MADD batches, and BF.ADD per line.
node - "$ITEMS" "$BATCH" "$WORK" <<'JS'
const fs = require('fs')
const [items, batch, dir] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4]]
let state = 0x9e3779b9 // xorshift32, seeded: the same lines on every run
const next = () => ((state ^= state << 13), (state ^= state >>> 17), (state ^= state << 5), state >>> 0)
const lines = []
for (let i = 0; i < items; i++) {
  lines.push(`https://www.site${next() % 5000}.example/${next().toString(36)}/${next().toString(36)}?page=${i}`)
}
fs.writeFileSync(`${dir}/urls.txt`, lines.join('\n') + '\n')
const resp = (argv) => `*${argv.length}\r\n` + argv.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')
const madd = fs.openSync(`${dir}/madd.resp`, 'w')
for (let i = 0; i < lines.length; i += batch) fs.writeSync(madd, resp(['BF.MADD', 'bench', ...lines.slice(i, i + batch)]))
fs.closeSync(madd)
const add = fs.openSync(`${dir}/add.resp`, 'w')
for (let i = 0; i < lines.length; i += 10000) fs.writeSync(add, lines.slice(i, i + 10000).map((l) => resp(['BF.ADD', 'bench', l])).join(''))
fs.closeSync(add)
JS

GLIBC_TUNABLES=glibc.malloc.mmap_threshold=16384 node --max-semi-space-size=1 --optimize-for-size "$ROOT/dist/main.js" --port "$PORT" --dir "$WORK/data" --save '' --appendonly no --loglevel warning >"$WORK/bfs.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 50); do redis-cli -p "$PORT" PING >/dev/null 2>&1 && break; sleep 0.1; done

fresh() { redis-cli -p "$PORT" DEL bench >/dev/null; redis-cli -p "$PORT" BF.RESERVE bench 0.001 "$ITEMS" >/dev/null; }
now_ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); } # bash 5: microseconds since the epoch
best() { # best wall time in ms of "$@" over RUNS runs, each into a fresh filter
  local best_ms= t0 ms
  for _ in $(seq "$RUNS"); do
    fresh
    t0=$(now_ms); "$@" >/dev/null; ms=$(($(now_ms) - t0))
    if [[ -z "$best_ms" || $ms -lt $best_ms ]]; then best_ms=$ms; fi
    [[ $(redis-cli -p "$PORT" BF.CARD bench) -gt $((ITEMS * 99 / 100)) ]] || { echo "import incomplete: $*" >&2; exit 1; }
  done
  echo "$best_ms"
}

# One untimed pass so that the server's JIT is warm for whichever tool comes first.
fresh; redis-cli -p "$PORT" --pipe <"$WORK/madd.resp" >/dev/null

IMPORT_MS=$(best node "$ROOT/dist/tools/bfs-import.js" --port "$PORT" --filter bench --batch "$BATCH" --progress none "$WORK/urls.txt")
PIPE_MADD_MS=$(best sh -c "redis-cli -p $PORT --pipe < '$WORK/madd.resp'")
PIPE_ADD_MS=$(best sh -c "redis-cli -p $PORT --pipe < '$WORK/add.resp'")

rate() { node -e "console.log(Math.round($ITEMS / ($1 / 1000)).toLocaleString('en-US'))"; }
echo "items: $ITEMS ($(du -h "$WORK/urls.txt" | cut -f1) of URL-like lines), best of $RUNS, bfs $(node -p "require('$ROOT/package.json').version") on node $(node --version), $(nproc) CPUs"
printf '| %-42s | %8s | %12s |\n' "tool" "seconds" "items/s"
printf '|%s|%s|%s|\n' "--------------------------------------------" "----------" "--------------"
printf '| %-42s | %8.2f | %12s |\n' "bfs-import (BF.MADD x $BATCH, 64 in flight)" "$(node -p "$IMPORT_MS/1000")" "$(rate "$IMPORT_MS")"
printf '| %-42s | %8.2f | %12s |\n' "redis-cli --pipe (BF.MADD x $BATCH)" "$(node -p "$PIPE_MADD_MS/1000")" "$(rate "$PIPE_MADD_MS")"
printf '| %-42s | %8.2f | %12s |\n' "redis-cli --pipe (BF.ADD per line)" "$(node -p "$PIPE_ADD_MS/1000")" "$(rate "$PIPE_ADD_MS")"
