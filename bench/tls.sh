#!/usr/bin/env bash
# The TLS path beside the plaintext one: redis-benchmark with and without --tls against bfs (its
# port and its tls-port) and against redis-server 7.0 (Debian's, built with TLS) in the same run,
# at -P 1 and -P 16, -c 50. Prints req/s and the server's CPU time per request (utime + stime
# from /proc/<pid>/stat). Certificates are made with openssl in a temporary directory. Without
# RedisBloom, redis-server's rows are PING_MBULK, the ceiling of client and loopback; with
# REDISBLOOM_SO set, redis-server loads that module and BF.ADD runs on it too, plain and TLS.
#
# Usage: bench/tls.sh [REQUESTS]   (default 200000 at -P 16, a tenth at -P 1); needs dist/ built.
#   REDISBLOOM_SO=/path/to/redisbloom.so bench/tls.sh   also BF.ADD on redis-server with RedisBloom
set -euo pipefail
cd "$(dirname "$0")/.."
REQUESTS=${1:-200000}
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

# A CA, and one certificate (no usage restriction, as redis's gen-test-certs.sh redis.crt) for
# the servers and redis-benchmark alike.
openssl genrsa -out "$work/ca.key" 2048 2>/dev/null
openssl req -x509 -new -nodes -sha256 -key "$work/ca.key" -days 1 -subj '/CN=bench CA' -out "$work/ca.crt"
openssl genrsa -out "$work/node.key" 2048 2>/dev/null
openssl req -new -sha256 -subj '/CN=bench' -key "$work/node.key" |
  openssl x509 -req -sha256 -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial -days 1 -out "$work/node.crt" 2>/dev/null
tls_keys=(--tls-cert-file "$work/node.crt" --tls-key-file "$work/node.key" --tls-ca-cert-file "$work/ca.crt")
client_tls=(--tls --cacert "$work/ca.crt" --cert "$work/node.crt" --key "$work/node.key")

bfs_port=$(free_port); bfs_tls=$(free_port); redis_port=$(free_port); redis_tls=$(free_port)
mkdir -p "$work/bfs" "$work/redis"
node dist/main.js --bind 127.0.0.1 --port "$bfs_port" --tls-port "$bfs_tls" "${tls_keys[@]}" --dir "$work/bfs" --save '' --appendonly no --loglevel warning >/dev/null 2>&1 &
bfs_pid=$!
pids+=("$bfs_pid")
module=()
[ -n "${REDISBLOOM_SO:-}" ] && module=(--loadmodule "$REDISBLOOM_SO")
redis-server --bind 127.0.0.1 --port "$redis_port" --tls-port "$redis_tls" "${tls_keys[@]}" --dir "$work/redis" --save '' --appendonly no --loglevel warning "${module[@]}" >/dev/null 2>&1 &
redis_pid=$!
pids+=("$redis_pid")
for port in "$bfs_port" "$redis_port"; do
  for _ in $(seq 100); do redis-cli -p "$port" PING >/dev/null 2>&1 && break; sleep 0.1; done
done
redis-cli -p "$bfs_port" BF.RESERVE bench 0.01 10000000 >/dev/null
if [ -n "${REDISBLOOM_SO:-}" ]; then
  redis-cli -p "$redis_port" MODULE LIST | grep -qx bf || { echo "redis-server did not load $REDISBLOOM_SO" >&2; exit 1; }
  redis-cli -p "$redis_port" BF.RESERVE bench 0.01 10000000 >/dev/null
  redis-benchmark -p "$redis_tls" "${client_tls[@]}" -c 50 -P 16 -n 100000 -r 1000000 -q BF.ADD bench __rand_int__ >/dev/null 2>&1
fi
# Warm-up, not recorded: the JIT settles on both paths.
redis-benchmark -p "$bfs_port" -c 50 -P 16 -n 200000 -r 1000000 -q BF.ADD bench __rand_int__ >/dev/null 2>&1
redis-benchmark -p "$bfs_tls" "${client_tls[@]}" -c 50 -P 16 -n 100000 -r 1000000 -q BF.ADD bench __rand_int__ >/dev/null 2>&1

tick=$(getconf CLK_TCK)
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
printf '%-22s %-6s %4s %12s %14s\n' server/test wire -P req/s 'cpu µs/req'
row() { # label wire pid pipeline requests redis-benchmark-args...
  local label=$1 wire=$2 pid=$3 pipeline=$4 requests=$5
  shift 5
  local before after rps
  before=$(cpu "$pid")
  rps=$(redis-benchmark -c 50 -P "$pipeline" -n "$requests" -r 1000000 -q "$@" 2>/dev/null | tr '\r' '\n' | grep 'requests per second' | tail -1 | awk '{ for (i = 1; i <= NF; i++) if ($i == "requests") print $(i - 1) }')
  after=$(cpu "$pid")
  awk -v l="$label" -v w="$wire" -v p="$pipeline" -v r="$rps" -v a="$before" -v b="$after" -v t="$tick" -v n="$requests" \
    'BEGIN { printf "%-22s %-6s %4s %12s %14.2f\n", l, w, p, r, (b - a) / t / n * 1e6 }'
}
for pipeline in 1 16; do
  n=$((pipeline == 1 ? REQUESTS / 10 : REQUESTS))
  row 'redis PING_MBULK' plain "$redis_pid" "$pipeline" "$n" -p "$redis_port" -t ping_mbulk
  row 'redis PING_MBULK' tls "$redis_pid" "$pipeline" "$n" -p "$redis_tls" "${client_tls[@]}" -t ping_mbulk
  row 'bfs PING_MBULK' plain "$bfs_pid" "$pipeline" "$n" -p "$bfs_port" -t ping_mbulk
  row 'bfs PING_MBULK' tls "$bfs_pid" "$pipeline" "$n" -p "$bfs_tls" "${client_tls[@]}" -t ping_mbulk
  row 'bfs BF.ADD' plain "$bfs_pid" "$pipeline" "$n" -p "$bfs_port" BF.ADD bench __rand_int__
  row 'bfs BF.ADD' tls "$bfs_pid" "$pipeline" "$n" -p "$bfs_tls" "${client_tls[@]}" BF.ADD bench __rand_int__
  if [ -n "${REDISBLOOM_SO:-}" ]; then
    row 'RedisBloom BF.ADD' plain "$redis_pid" "$pipeline" "$n" -p "$redis_port" BF.ADD bench __rand_int__
    row 'RedisBloom BF.ADD' tls "$redis_pid" "$pipeline" "$n" -p "$redis_tls" "${client_tls[@]}" BF.ADD bench __rand_int__
  fi
done
