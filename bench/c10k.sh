#!/usr/bin/env bash
# c10k: 10,000 connections to one bfs, each sending PING and BF.EXISTS. Raises its own open-file
# limit (client and server each hold one descriptor per connection), builds bfs, compiles
# bench/c10k.ts to a temporary directory and runs it.
#   bench/c10k.sh [connections]
set -euo pipefail
cd "$(dirname "$0")/.."
connections="${1:-10000}"
want=$((connections * 2 + 1000))
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt "$want" ]; then want="$hard"; fi
ulimit -n "$want"
echo "ulimit -n: $(ulimit -n)"
npm run build --silent
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
npx tsc bench/c10k.ts --outDir "$out" --module nodenext --moduleResolution nodenext --target es2022 --types node --skipLibCheck
node "$out/c10k.js" dist/main.js "$connections"
