#!/usr/bin/env bash
# CPU time the bfs process spends per request (utime + stime from /proc/<pid>/stat), for two or
# more builds side by side, alternating, ROUNDS times: a comparison that load from other processes
# on these 2 shared cores disturbs far less than req/s does. Each checkout must have dist/ built.
#
# Usage: bench/cpu-ab.sh ROUNDS CHECKOUT_A CHECKOUT_B [...]
#   CMDS='BF.ADD:bench:__rand_int__ PING' PIPELINE=1 REQUESTS=200000 bench/cpu-ab.sh 7 /path/to/old /path/to/new
# APPENDONLY=yes runs them with the append-only log on (everysec); KEYSPACE sets -r (1000000: after
# the warm-up most adds find their item; 1000000000: nearly every add is new, and logged).
# (':' separates the words of a command.) Prints one line per run: round|command|checkout|µs/request,
# then the medians. Each runs as its `npm start` runs it (its GLIBC_TUNABLES, read from its
# package.json). Loopback only; needs redis-benchmark and redis-cli.
set -euo pipefail
ROUNDS=$1
shift
CMDS=${CMDS:-BF.ADD:bench:__rand_int__ BF.EXISTS:bench:__rand_int__ PING}
REQUESTS=${REQUESTS:-1000000}
PIPELINE=${PIPELINE:-16}
APPENDONLY=${APPENDONLY:-no}
KEYSPACE=${KEYSPACE:-1000000}
declare -A PID PORT DIRS
cleanup() {
  for c in "${!PID[@]}"; do kill "${PID[$c]}" 2>/dev/null || true; done
  for c in "${!DIRS[@]}"; do rm -rf "${DIRS[$c]}"; done
}
trap cleanup EXIT
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
for checkout in "$@"; do
  PORT[$checkout]=$(free_port)
  DIRS[$checkout]=$(mktemp -d)
  # Each checkout runs with the glibc tunables of its own `npm start`.
  tunables=$(cd "$checkout" && node -p 'require("./package.json").scripts.start.match(/GLIBC_TUNABLES=(\S+)/)?.[1] ?? ""')
  (cd "$checkout" && GLIBC_TUNABLES=$tunables exec node --max-semi-space-size=1 --optimize-for-size dist/main.js --bind 127.0.0.1 \
    --port "${PORT[$checkout]}" --dir "${DIRS[$checkout]}" --save '' --appendonly "$APPENDONLY" --loglevel warning >/dev/null 2>&1) &
  PID[$checkout]=$!
done
for checkout in "$@"; do
  for _ in $(seq 100); do redis-cli -p "${PORT[$checkout]}" PING >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -p "${PORT[$checkout]}" BF.RESERVE bench 0.01 10000000 >/dev/null
  # Warm-up, not recorded: the JIT settles on the hot path.
  redis-benchmark -p "${PORT[$checkout]}" -c 50 -P 16 -n 300000 -r 1000000 -q BF.ADD bench __rand_int__ >/dev/null 2>&1
done
tick=$(getconf CLK_TCK)
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
results=$(mktemp)
for round in $(seq "$ROUNDS"); do
  for cmd in $CMDS; do
    for checkout in "$@"; do
      before=$(cpu "${PID[$checkout]}")
      # shellcheck disable=SC2086
      redis-benchmark -p "${PORT[$checkout]}" -c 50 -P "$PIPELINE" -n "$REQUESTS" -r "$KEYSPACE" -q ${cmd//:/ } >/dev/null 2>&1
      after=$(cpu "${PID[$checkout]}")
      awk -v r="$round" -v c="${cmd%%:*}" -v k="$checkout" -v a="$before" -v b="$after" -v t="$tick" -v n="$REQUESTS" \
        'BEGIN { printf "%s|%s|%s|%.3f\n", r, c, k, (b - a) / t / n * 1e6 }' | tee -a "$results"
    done
  done
done
echo
echo "median µs of bfs CPU per request, -c 50 -P $PIPELINE, $ROUNDS rounds:"
awk -F'|' '{ k = $2 " " $3; v[k] = v[k] " " $4 } END { for (k in v) print k ":" v[k] }' "$results" | sort | while read -r line; do
  values=$(echo "${line#*:}" | tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
  echo "  ${line%%:*}: $values"
done
rm -f "$results"
