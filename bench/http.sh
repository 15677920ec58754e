#!/usr/bin/env bash
# HTTP side of bfs under wrk: GET /add=<item> and GET /contain=<item>, as the original server was
# measured (wrk -t1 -c100 -d5s; it served /contain= at 36-38k req/s and /add= at 29-37k).
# Usage: bench/http.sh [duration, default 5s]    (needs wrk: apt-get install -y wrk)
# Extra bfs flags via BFS_FLAGS, e.g. BFS_FLAGS="--appendonly yes" bench/http.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-5s}
command -v wrk >/dev/null || { echo "wrk not found (apt-get install -y wrk)" >&2; exit 1; }
[ -f dist/main.js ] || npm run build --silent

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
RESP_PORT=$(free_port)
HTTP_PORT=$(free_port)
DIR=$(mktemp -d)
SCRIPTS=$(mktemp -d)
# shellcheck disable=SC2086
GLIBC_TUNABLES=glibc.malloc.mmap_threshold=16384 node --max-semi-space-size=1 --optimize-for-size dist/main.js --port "$RESP_PORT" --http-port "$HTTP_PORT" --dir "$DIR" --save "" --appendonly no \
  --loglevel warning ${BFS_FLAGS:-} &
BFS_PID=$!
cleanup() { kill "$BFS_PID" 2>/dev/null || true; wait "$BFS_PID" 2>/dev/null || true; rm -rf "$DIR" "$SCRIPTS"; }
trap cleanup EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$HTTP_PORT/healthz" >/dev/null 2>&1 && break; sleep 0.1; done

# A distinct item per request: every /add= really sets bits, and /contain= asks for items half of
# which were added.
cat >"$SCRIPTS/add.lua" <<'LUA'
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", "/add=http%3A%2F%2Fexample.com%2Fpage%2F" .. n)
end
LUA
cat >"$SCRIPTS/contain.lua" <<'LUA'
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", "/contain=http%3A%2F%2Fexample.com%2Fpage%2F" .. (n * 2))
end
LUA

run() { # name script
  local out rps
  out=$(wrk -t1 -c100 -d"$DURATION" -s "$SCRIPTS/$2" "http://127.0.0.1:$HTTP_PORT")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  printf '%-10s %10s req/s   (%s)\n' "$1" "$rps" "$(awk '/Latency/ {print "latency avg " $2 ", max " $4}' <<<"$out")"
  if grep -q 'Non-2xx' <<<"$out"; then echo "  non-2xx answers: $(grep 'Non-2xx' <<<"$out")"; fi
}

echo "wrk -t1 -c100 -d$DURATION, node $(node --version), $(nproc) CPUs"
run '/add=' add.lua
run '/contain=' contain.lua
echo "original (C, libevent): /add= 29-37k req/s, /contain= 36-38k req/s"

# The ceiling of node:http itself on this machine: a server that answers every request "ok".
BARE_PORT=$(free_port)
node -e 'require("http").createServer((q,r)=>{r.writeHead(200,{"Content-Type":"text/plain; charset=utf-8","Content-Length":2});r.end("ok")}).listen(+process.argv[1],"127.0.0.1")' "$BARE_PORT" &
BARE_PID=$!
sleep 0.5
printf '%-10s %10s req/s\n' 'bare node:http' "$(wrk -t1 -c100 -d"$DURATION" "http://127.0.0.1:$BARE_PORT/add=x" | awk '/Requests\/sec/ {print $2}')"
kill "$BARE_PID"
curl -s "http://127.0.0.1:$HTTP_PORT/metrics" | grep -E '^bfs_(filter_items|filter_bytes|http_requests_total)' || true
