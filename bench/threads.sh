#!/usr/bin/env bash
# io-threads: bfs with io-threads 1, 2, 4, 8 beside redis-server 7.0 + RedisBloom at its defaults and
# with `--io-threads 4 --io-threads-do-reads yes`, in one run so that the ratios are comparable.
# Each server is started fresh in each round (the servers alternate), warmed up, then for each
# load a fresh `BF.RESERVE bench 0.01 100000000` takes BF.ADD then BF.EXISTS of random items
# (`-r 100000000`, `__rand_int__`) at -P 1 -c 50, -P 1 -c 200 and -P 16 -c 50. One table of
# medians: req/s, bfs's scaling over io-threads 1, the ratios to both RedisBloom servers, and the
# server's CPU µs per request (utime + stime of the whole process, every thread, /proc/<pid>/stat),
# and of its main thread alone (/proc/<pid>/task/<pid>/stat).
#
# Servers and load generator must not share cores: with 8 or more cores the servers run on the
# first half (taskset -c) and redis-benchmark on the second half, one process per load core (at
# most 8). With fewer cores nothing can be pinned and the io-threads rows show no scaling: such
# a run checks the script and the CPU per request only.
#
# Usage: bench/threads.sh [rounds, default 3]      (loopback only; several minutes per round)
#   REDISBLOOM_SO=/path/to/redisbloom.so bench/threads.sh   the RedisBloom rows (skipped without it)
#   REQUESTS=200000 bench/threads.sh 1    requests per -P 1 load (default 1000000; -P 16: 4 times it)
#   THREADS='1 4' bench/threads.sh        the io-threads values of bfs (default '1 2 4 8')
#   LOADS='16:50' bench/threads.sh        the loads, pipeline:clients (default '1:50 1:200 16:50')
#   LOADERS=4 bench/threads.sh            redis-benchmark processes per load, in parallel on the load
#                                         cores, each with an equal share of clients and requests;
#                                         req/s is their sum (default: one per load core, at most 8)
#   BENCH_THREADS=2 bench/threads.sh      --threads for each redis-benchmark (default 1: none; with
#                                         threads its timing rounds up to a multiple of 250 ms)
#   SERVER_CPUS=0-7 LOAD_CPUS=8-15 bench/threads.sh         other cores than the halves
#   NODE=/path/to/node bench/threads.sh   the Node that runs bfs (io-threads need 22.12 or later)
#   APPENDONLY=yes bench/threads.sh       both servers with the append-only log on (appendfsync
#                                         everysec, bfs's default) instead of appendonly no
# Needs redis-server, redis-benchmark, redis-cli and taskset (util-linux).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
NODE=${NODE:-node}
REQUESTS=${REQUESTS:-1000000}
THREADS=${THREADS:-1 2 4 8}
LOADS=${LOADS:-1:50 1:200 16:50}
APPENDONLY=${APPENDONLY:-no}
case $APPENDONLY in yes | no) ;; *) echo "APPENDONLY is yes or no" >&2; exit 1 ;; esac
COMMANDS='BF.ADD BF.EXISTS'
KEYSPACE=100000000
CAPACITY=100000000
for tool in redis-server redis-benchmark redis-cli taskset; do
  command -v "$tool" >/dev/null || { echo "$tool not found (apt-get install -y redis-server redis-tools util-linux)" >&2; exit 1; }
done
"$NODE" --version >/dev/null || { echo "NODE=$NODE does not run" >&2; exit 1; }
npm run build --silent

# Cores: "0-3,8-11" -> "0 1 2 3 8 9 10 11".
expand_cpus() { tr ',' '\n' <<<"$1" | awk -F- 'NF { for (c = $1; c <= (NF > 1 ? $2 : $1); c++) printf "%d ", c }'; }
joined() { tr ' ' '\n' <<<"$1" | grep -v '^$' | paste -sd, -; }
ALLOWED=$(expand_cpus "$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)")
read -ra CPUS <<<"$ALLOWED"
PINNED=yes
if [ -n "${SERVER_CPUS:-}" ] || [ -n "${LOAD_CPUS:-}" ]; then
  if [ -z "${SERVER_CPUS:-}" ] || [ -z "${LOAD_CPUS:-}" ]; then echo "SERVER_CPUS and LOAD_CPUS go together" >&2; exit 1; fi
  SERVER_SET=$(joined "$(expand_cpus "$SERVER_CPUS")")
  LOAD_SET=$(joined "$(expand_cpus "$LOAD_CPUS")")
elif [ "${#CPUS[@]}" -ge 8 ]; then
  half=$((${#CPUS[@]} / 2))
  SERVER_SET=$(joined "${CPUS[*]:0:half}")
  LOAD_SET=$(joined "${CPUS[*]:half}")
else
  PINNED=no
  SERVER_SET=$(joined "$ALLOWED")
  LOAD_SET=$SERVER_SET
fi
LOAD_CORES=$(tr ',' '\n' <<<"$LOAD_SET" | grep -c .)
# One single-threaded redis-benchmark process per load core, at most 8. Not --threads: with threads,
# redis-benchmark only stops at its 250 ms throughput timer, so the time it reports is rounded up
# to a multiple of 250 ms and req/s falls on a grid (a step of 12 % for a 2 s load).
LOADERS=${LOADERS:-$((LOAD_CORES < 8 ? LOAD_CORES : 8))}
BENCH_THREADS=${BENCH_THREADS:-1}
NOTE_LOADERS="$LOADERS redis-benchmark processes per load"
[ "$BENCH_THREADS" -gt 1 ] && NOTE_LOADERS="$NOTE_LOADERS, --threads $BENCH_THREADS each (req/s on a 250 ms grid)"
NOTE_PINNING="servers on cores $SERVER_SET, redis-benchmark on cores $LOAD_SET"
if [ "$PINNED" = no ]; then
  NOTE_PINNING="NOT PINNED: ${#CPUS[@]} cores, servers and redis-benchmark share them all; the io-threads rows show no scaling here (8-16 cores needed), only CPU per request"
  {
    echo "!!"
    echo "!! Only ${#CPUS[@]} cores: servers and load generator cannot be kept apart, nothing is pinned."
    echo "!! The figures of this run show no io-threads scaling; they check the script and CPU per request."
    echo "!!"
  } >&2
fi

# Node >= 22.12 has the net listen with reusePort that io-threads needs; an older one serves every
# connection from the main thread whatever io-threads says.
NODE_VERSION=$("$NODE" --version)
NOTE_NODE=""
if ! "$NODE" -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 12) ? 0 : 1)'; then
  NOTE_NODE="node $NODE_VERSION is older than 22.12: bfs serves from one thread at every io-threads value"
  echo "!! $NOTE_NODE" >&2
fi

free_port() { "$NODE" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
DIR=$(mktemp -d)
RESULTS="$DIR/results.csv" # server,load,command,round,rps,p50,p99,cpu_us
PID=
LOADER_PIDS=()
cleanup() {
  for pid in "${LOADER_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ -n "$PID" ]; then kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null; fi
  PID=
  rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
TUNABLES=$("$NODE" -p 'require("./package.json").scripts.start.match(/GLIBC_TUNABLES=(\S+)/)?.[1] ?? ""')

SERVERS=()
for n in $THREADS; do SERVERS+=("bfs-t$n"); done
if [ -n "${REDISBLOOM_SO:-}" ]; then
  [ -r "$REDISBLOOM_SO" ] || { echo "REDISBLOOM_SO=$REDISBLOOM_SO is not a readable file" >&2; exit 1; }
  SERVERS+=(rb rb-io4)
else
  echo "REDISBLOOM_SO not set: no RedisBloom rows (set it to a RedisBloom 2.4 module built outside the repository)" >&2
fi
label() {
  case $1 in
    bfs-t*) echo "bfs io-threads ${1#bfs-t}" ;;
    rb) echo "RedisBloom" ;;
    rb-io4) echo "RedisBloom io-threads 4" ;;
  esac
}

PORT=
LOG=
# start <server>: a fresh server on the server cores, in a fresh directory; waits until it answers.
start() {
  PORT=$(free_port)
  local dir="$DIR/$1" ok=""
  rm -rf "$dir" && mkdir -p "$dir"
  LOG="$dir/log"
  case $1 in
    bfs-t*)
      GLIBC_TUNABLES=$TUNABLES taskset -c "$SERVER_SET" "$NODE" --max-semi-space-size=1 --optimize-for-size dist/main.js \
        --bind 127.0.0.1 --port "$PORT" --dir "$dir" --save '' --appendonly "$APPENDONLY" --loglevel warning \
        --io-threads "${1#bfs-t}" >"$LOG" 2>&1 &
      ;;
    rb | rb-io4)
      local extra=()
      [ "$1" = rb-io4 ] && extra=(--io-threads 4 --io-threads-do-reads yes)
      taskset -c "$SERVER_SET" redis-server --bind 127.0.0.1 --port "$PORT" --dir "$dir" --save '' --appendonly "$APPENDONLY" \
        --loglevel warning --daemonize no --loadmodule "$REDISBLOOM_SO" "${extra[@]}" >"$LOG" 2>&1 &
      ;;
  esac
  PID=$!
  for _ in $(seq 200); do
    if [ "$(redis-cli -p "$PORT" PING 2>/dev/null)" = PONG ]; then ok=yes; break; fi
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.05
  done
  if [ -z "$ok" ]; then
    echo "$(label "$1") did not answer PING on port $PORT within 10 s; its log:" >&2
    cat "$LOG" >&2
    exit 1
  fi
}
stop() {
  kill "$PID" 2>/dev/null || true
  wait "$PID" 2>/dev/null || true
  PID=
}
alive() {
  kill -0 "$PID" 2>/dev/null && return 0
  echo "$(label "$1") died; its log:" >&2
  cat "$LOG" >&2
  exit 1
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$PID/stat"; }
# The main thread's alone (bfs: the thread that runs the commands the I/O threads do not answer).
main_ticks() { awk '{ print $14 + $15 }' "/proc/$PID/task/$PID/stat"; }
cli() { redis-cli -p "$PORT" "$@"; }
fresh() {
  local reply
  reply=$(cli DEL bench >/dev/null && cli BF.RESERVE bench 0.01 "$CAPACITY" 2>&1) || true
  [ "$reply" = OK ] || { echo "BF.RESERVE bench on $(label "$1") answered: $reply" >&2; exit 1; }
}

# loaders <pipeline> <clients> <requests> <command>: LOADERS redis-benchmark processes at once on the
# load cores, each with its share of clients and requests (the remainders to the first ones), CSV
# into $DIR/load.<i>.csv; fails loudly when one fails.
loaders() {
  local pipeline=$1 clients=$2 requests=$3 command=$4 i n=$LOADERS
  [ "$n" -le "$clients" ] || n=$clients
  local threads=()
  [ "$BENCH_THREADS" -gt 1 ] && threads=(--threads "$BENCH_THREADS")
  rm -f "$DIR"/load.*
  LOADER_PIDS=()
  for ((i = 0; i < n; i++)); do
    taskset -c "$LOAD_SET" redis-benchmark -h 127.0.0.1 -p "$PORT" -c $((clients / n + (i < clients % n))) -P "$pipeline" \
      -n $((requests / n + (i < requests % n))) -r "$KEYSPACE" "${threads[@]}" --csv --precision 3 \
      "$command" bench __rand_int__ >"$DIR/load.$i.csv" 2>"$DIR/load.$i.err" &
    LOADER_PIDS+=($!)
  done
  for ((i = 0; i < n; i++)); do
    wait "${LOADER_PIDS[$i]}" || { echo "redis-benchmark failed:" >&2; cat "$DIR/load.$i.err" >&2; exit 1; }
  done
  LOADER_PIDS=()
  LOADER_COUNT=$n
}

# load <server> <round> <pipeline> <clients> <requests> <command>: one recorded load; appends a row
# to RESULTS. req/s: the sum of the processes' own figures (they start together, each with an equal
# share); p50 and p99: the largest of theirs; CPU: the server's ticks over all the requests.
load() {
  local server=$1 round=$2 pipeline=$3 clients=$4 requests=$5 command=$6 before ticks main_before main
  before=$(cpu_ticks)
  main_before=$(main_ticks)
  loaders "$pipeline" "$clients" "$requests" "$command"
  ticks=$(( $(cpu_ticks) - before ))
  main=$(( $(main_ticks) - main_before ))
  alive "$server"
  cat "$DIR"/load.*.csv | tr -d '"' | awk -F, -v s="$server" -v l="$pipeline:$clients" -v c="$command" -v r="$round" \
    -v ticks="$ticks" -v main="$main" -v hz="$(getconf CLK_TCK)" -v n="$requests" -v want="$LOADER_COUNT" '
    $1 != "test" && NF >= 8 { rows++; rps += $2; if ($5 > p50) p50 = $5; if ($7 > p99) p99 = $7 }
    END {
      if (rows != want) { print "redis-benchmark gave " rows + 0 " result rows of " want > "/dev/stderr"; exit 1 }
      printf "%s,%s,%s,%s,%.2f,%.3f,%.3f,%.3f,%.3f\n", s, l, c, r, rps, p50, p99, ticks * 1e6 / hz / n, main * 1e6 / hz / n
    }' >>"$RESULTS"
}

CPU_MODEL=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
RB_VERSION=""
MACHINE="$(nproc) CPUs ($CPU_MODEL), node $NODE_VERSION, redis-server $(redis-server --version | awk '{ print $3 }' | tr -d v=)"
echo "$MACHINE; $NOTE_PINNING; $NOTE_LOADERS" >&2
declare -A OS_THREADS
for round in $(seq "$ROUNDS"); do
  for server in "${SERVERS[@]}"; do
    start "$server"
    if [[ $server == bfs-t* ]]; then
      reported=$(cli CONFIG GET io-threads | sed -n 2p)
      [ "$reported" = "${server#bfs-t}" ] || [ "$round" != 1 ] ||
        echo "!! $(label "$server"): CONFIG GET io-threads answers '$reported' (this build or this node does not run io-threads)" >&2
    elif [ -z "$RB_VERSION" ]; then
      RB_VERSION=$(cli MODULE LIST | awk 'prev == "ver" { print; exit } { prev = $0 }')
    fi
    # Warm-up, not recorded: the JIT settles on the hot path, every io thread among them.
    fresh "$server"
    loaders 16 50 $(( REQUESTS / 2 )) BF.ADD
    alive "$server"
    OS_THREADS[$server]=$(awk '/^Threads:/ { print $2 }' "/proc/$PID/status")
    for spec in $LOADS; do
      pipeline=${spec%%:*}
      clients=${spec##*:}
      requests=$([ "$pipeline" -gt 1 ] && echo $(( REQUESTS * 4 )) || echo "$REQUESTS")
      fresh "$server"
      for command in $COMMANDS; do
        load "$server" "$round" "$pipeline" "$clients" "$requests" "$command"
      done
    done
    stop
    echo "round $round/$ROUNDS: $(label "$server") done" >&2
  done
done

median_of() { # server load command column
  awk -F, -v s="$1" -v l="$2" -v c="$3" -v col="$4" '$1 == s && $2 == l && $3 == c { print $col }' "$RESULTS" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
first_bfs="bfs-t${THREADS%% *}"
echo
echo "bfs io-threads beside RedisBloom: BF.RESERVE bench 0.01 $CAPACITY per load, -r $KEYSPACE, $REQUESTS requests per -P 1 load, $((REQUESTS * 4)) per -P 16, median of $ROUNDS rounds, $(date -u +%Y-%m-%d)"
echo "machine: $MACHINE${RB_VERSION:+, RedisBloom $RB_VERSION}"
echo "pinning: $NOTE_PINNING"
echo "load: $NOTE_LOADERS"
echo "appendonly: $APPENDONLY (appendfsync everysec)"
[ -n "$NOTE_NODE" ] && echo "note: $NOTE_NODE"
echo -n "OS threads of each server after its warm-up:"
for server in "${SERVERS[@]}"; do echo -n " $(label "$server") ${OS_THREADS[$server]};"; done
echo
echo
printf '| %-23s | %3s | %3s | %-9s | %10s | %7s | %7s | %7s | %8s | %10s | %9s | %10s | %11s |\n' server -P -c command 'req/s' "vs t${THREADS%% *}" 'vs RB' 'vs RB4' 'p99 ms' 'CPU us/req' 'CPU vs RB' 'CPU vs RB4' 'main us/req'
printf '|%s|\n' '-------------------------|----:|----:|-----------|-----------:|--------:|--------:|--------:|---------:|-----------:|----------:|-----------:|------------:'
for spec in $LOADS; do
  for command in $COMMANDS; do
    base_rps=$(median_of "$first_bfs" "$spec" "$command" 5)
    rb_rps=$(median_of rb "$spec" "$command" 5)
    rb_cpu=$(median_of rb "$spec" "$command" 8)
    rb4_rps=$(median_of rb-io4 "$spec" "$command" 5)
    rb4_cpu=$(median_of rb-io4 "$spec" "$command" 8)
    for server in "${SERVERS[@]}"; do
      awk -v s="$(label "$server")" -v p="${spec%%:*}" -v c="${spec##*:}" -v cmd="$command" \
        -v rps="$(median_of "$server" "$spec" "$command" 5)" -v p99="$(median_of "$server" "$spec" "$command" 7)" \
        -v cpu="$(median_of "$server" "$spec" "$command" 8)" -v main="$(median_of "$server" "$spec" "$command" 9)" -v base="$([[ $server == bfs-t* ]] && echo "$base_rps" || echo 0)" \
        -v rb="${rb_rps:-0}" -v rbc="${rb_cpu:-0}" -v rb4="${rb4_rps:-0}" -v rb4c="${rb4_cpu:-0}" 'BEGIN {
          vt = base > 0 ? sprintf("%.2fx", rps / base) : ""
          vrb = rb > 0 ? sprintf("%.2fx", rps / rb) : ""
          vrb4 = rb4 > 0 ? sprintf("%.2fx", rps / rb4) : ""
          crb = rbc > 0 && cpu > 0 ? sprintf("%.2fx", rbc / cpu) : ""
          crb4 = rb4c > 0 && cpu > 0 ? sprintf("%.2fx", rb4c / cpu) : ""
          printf "| %-23s | %3s | %3s | %-9s | %10.0f | %7s | %7s | %7s | %8.3f | %10.2f | %9s | %10s | %11.2f |\n", s, p, c, cmd, rps,
            vt, vrb, vrb4, p99, cpu, crb, crb4, main
        }'
    done
  done
done
echo
echo "vs tN: req/s over bfs io-threads ${THREADS%% *}'s; vs RB, vs RB4: req/s over RedisBloom's at its defaults and at io-threads 4;"
echo "CPU: the server process's user + system time (every thread) per request; CPU vs RB(4): RedisBloom's over this one's (above 1: less CPU);"
echo "main: the main thread's alone (bfs: every command the I/O threads do not answer; RedisBloom: every command)."
