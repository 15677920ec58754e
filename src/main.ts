#!/usr/bin/env -S GLIBC_TUNABLES=glibc.malloc.hugetlb=1 node --max-semi-space-size=1 --optimize-for-size
/**
 * The bfs command line: `bfs [path/to/bfs.conf] [--key value ...]`, like redis-server.
 * SIGINT and SIGTERM shut down gracefully (saving when save rules are set) and exit 0.
 *
 * It runs with V8's young generation capped at 1 MB (`--max-semi-space-size=1`, in the shebang and
 * in `npm start`): the hot path allocates nothing per command, so a small young generation costs
 * no throughput. Both also pass `--optimize-for-size` (V8 keeps less code and metadata: about
 * 3 MB less RSS beside a 10M-item filter, and CPU per request within ±4 % on every row of
 * bench/cpu-ab.sh; bench/README.md, memory.sh) and set
 * `GLIBC_TUNABLES=glibc.malloc.hugetlb=1`, which asks glibc for transparent huge pages on its
 * large allocations. Bitmaps now live in WebAssembly memories that V8 maps itself, so that
 * variable reaches only the layers too large for an arena (docs/WASM.md); elsewhere it is ignored.
 */
import { readFileSync } from 'node:fs'
import { ConfigError, loadConfig } from './runtime/config.js'
import { createServer } from './server/server.js'
import { BFS_VERSION } from './runtime/version.js'

async function main(args: string[]): Promise<number> {
  if (args[0] === '--version' || args[0] === '-v') {
    process.stdout.write(`bfs v${BFS_VERSION}\n`)
    return 0
  }
  if (args[0] === '--help' || args[0] === '-h') {
    process.stdout.write('Usage: bfs [/path/to/bfs.conf] [--key value ...]\n')
    return 0
  }
  let fileText: string | undefined
  let flags = args
  if (args.length > 0 && !args[0]!.startsWith('--')) {
    try {
      fileText = readFileSync(args[0]!, 'utf8')
    } catch (error) {
      process.stderr.write(`bfs: cannot read config file '${args[0]}': ${(error as Error).message}\n`)
      return 1
    }
    flags = args.slice(1)
  }
  let config
  try {
    config = loadConfig(fileText, flags)
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`bfs: ${error.message}\n`)
      return 1
    }
    throw error
  }
  let server
  try {
    server = createServer({ config, configFile: fileText === undefined ? undefined : args[0] })
  } catch (error) {
    // rename-command naming a command that does not exist, or a name already taken.
    if (error instanceof ConfigError) {
      process.stderr.write(`bfs: ${error.message}\n`)
      return 1
    }
    throw error
  }
  server.log.notice(`bfs ${BFS_VERSION} starting, pid=${process.pid}`)
  try {
    await server.start()
  } catch (error) {
    server.log.warning(`Failed to start: ${(error as Error).message}`)
    return 1
  }
  return new Promise<number>((resolve) => {
    let stopping = false
    const stop = (signal: string): void => {
      if (stopping) return
      stopping = true
      server.log.warning(`Received ${signal} scheduling shutdown...`)
      const error = server.shutdown({})
      if (error !== undefined) {
        // redis: "Error trying to save the DB, can't exit." The server keeps running; another
        // signal tries again.
        server.log.warning(`Error trying to shut down (${error}), can't exit.`)
        stopping = false
      }
    }
    process.on('SIGINT', () => stop('SIGINT'))
    process.on('SIGTERM', () => stop('SIGTERM'))
    server.on('shutdown', (code?: number) => resolve(code ?? 0))
  })
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bfs: ${(error as Error)?.stack ?? String(error)}\n`)
    process.exit(1)
  },
)
