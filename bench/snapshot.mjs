#!/usr/bin/env node
/**
 * Snapshot benchmark (issue 3): save and load of a large filter against the disk's plain
 * sequential write and read speed (dd, same run, same directory), and the largest event-loop
 * delay (perf_hooks.monitorEventLoopDelay) while BGSAVE runs under redis-benchmark BF.ADD load,
 * and while it runs alone (a client pinging every millisecond), which shows the save's own stalls.
 *
 *   npm run build && node bench/snapshot.mjs [sizeMiB=1024] [dir=$TMPDIR]
 *
 * bfs runs in this process, so the histogram measures the server's own event loop.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { Redis } from 'ioredis'
import { createServer } from '../dist/server/server.js'

const sizeMiB = Number(process.argv[2] ?? 1024)
const base = mkdtempSync(path.join(process.argv[3] ?? tmpdir(), 'bfs-bench-snapshot-'))
const mib = (bytes, ms) => (bytes / 1024 / 1024 / (ms / 1000)).toFixed(0)

function dd(args) {
  const started = performance.now()
  const result = spawnSync('dd', args, { encoding: 'utf8' })
  if (result.status !== 0) throw new Error(result.stderr)
  return performance.now() - started
}

async function main() {
  const bytes = sizeMiB * 1024 * 1024
  const ddFile = path.join(base, 'dd.bin')
  const ddWriteMs = dd(['if=/dev/zero', `of=${ddFile}`, 'bs=4M', `count=${sizeMiB / 4}`, 'conv=fsync'])
  const ddReadMs = dd([`if=${ddFile}`, 'of=/dev/null', 'bs=4M', 'iflag=direct'])
  rmSync(ddFile)

  const dir = path.join(base, 'data')
  const config = {
    port: 0,
    dir,
    save: '',
    appendonly: process.env.APPENDONLY === 'yes',
    'max-filter-bytes': 0,
    loglevel: 'warning',
  }
  let server = createServer({ config, logSink: () => {} })
  await server.start()
  let redis = new Redis({ port: server.port, host: '127.0.0.1' })
  // RedisBloom sizing: bits per item -ln(p)/ln²2 at p/2 for the first layer; pick capacity for ~sizeMiB.
  const bitsPerItem = -Math.log(0.005) / (Math.LN2 * Math.LN2)
  const capacity = Math.floor((bytes * 8) / bitsPerItem)
  await redis.call('BF.RESERVE', 'big', '0.01', String(capacity))
  await redis.call('BF.ADD', 'big', 'seed')
  const filterBytes = Number(await redis.call('BF.INFO', 'big', 'SIZE'))

  let started = performance.now()
  await redis.call('SAVE')
  const saveMs = performance.now() - started

  // BGSAVE under load: redis-benchmark adds to the same filter the whole time.
  const load = spawn(
    'redis-benchmark',
    [
      '-p',
      String(server.port),
      '-c',
      '20',
      '-P',
      '8',
      '-n',
      '100000000',
      '-r',
      '1000000',
      'BF.ADD',
      'big',
      '__rand_int__',
    ],
    { stdio: 'ignore' },
  )
  await new Promise((resolve) => setTimeout(resolve, 1000))
  // The same load without a save, for comparison.
  const baseline = monitorEventLoopDelay({ resolution: 1 })
  baseline.enable()
  await new Promise((resolve) => setTimeout(resolve, 3000))
  baseline.disable()
  const histogram = monitorEventLoopDelay({ resolution: 1 })
  histogram.enable()
  started = performance.now()
  await redis.call('BGSAVE')
  while ((await redis.info('persistence')).includes('rdb_bgsave_in_progress:1'))
    await new Promise((r) => setTimeout(r, 50))
  const bgsaveMs = performance.now() - started
  histogram.disable()
  const processed = Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))[1])
  const loadedStepMs = server.persistence.snapshots.lastBgsaveLongestStepMs
  load.kill('SIGKILL')
  // The save's own stalls, told apart from the load's: the same BGSAVE (the filter changed, so it
  // rewrites all of it) with nothing else running, while a client pings every millisecond.
  await new Promise((resolve) => setTimeout(resolve, 1000))
  await redis.call('BF.ADD', 'big', 'quiet')
  const quiet = monitorEventLoopDelay({ resolution: 1 })
  const pinger = new Redis({ port: server.port, host: '127.0.0.1' })
  let pingMaxMs = 0
  let pinging = true
  const pings = (async () => {
    while (pinging) {
      const sent = performance.now()
      await pinger.ping()
      pingMaxMs = Math.max(pingMaxMs, performance.now() - sent)
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
  })()
  quiet.enable()
  await redis.call('BGSAVE')
  while ((await redis.info('persistence')).includes('rdb_bgsave_in_progress:1'))
    await new Promise((r) => setTimeout(r, 50))
  quiet.disable()
  pinging = false
  await pings
  pinger.disconnect()
  const quietStepMs = server.persistence.snapshots.lastBgsaveLongestStepMs
  redis.disconnect()
  await server.close()

  server = createServer({ config, logSink: () => {} })
  started = performance.now()
  await server.start()
  const loadMs = performance.now() - started
  redis = new Redis({ port: server.port, host: '127.0.0.1' })
  const check = await redis.call('BF.EXISTS', 'big', 'seed')
  redis.disconnect()
  await server.close()
  rmSync(base, { recursive: true, force: true })

  const rows = [
    ['filter bitmap', `${(filterBytes / 1024 / 1024).toFixed(0)} MiB`],
    ['dd write (conv=fsync)', `${ddWriteMs.toFixed(0)} ms, ${mib(bytes, ddWriteMs)} MiB/s`],
    ['dd read (iflag=direct)', `${ddReadMs.toFixed(0)} ms, ${mib(bytes, ddReadMs)} MiB/s`],
    [
      'SAVE (blocking)',
      `${saveMs.toFixed(0)} ms, ${mib(filterBytes, saveMs)} MiB/s, ${(saveMs / ddWriteMs).toFixed(2)}x dd`,
    ],
    [
      'BGSAVE under BF.ADD load',
      `${bgsaveMs.toFixed(0)} ms, ${mib(filterBytes, bgsaveMs)} MiB/s, ${(bgsaveMs / ddWriteMs).toFixed(2)}x dd`,
    ],
    [
      '  longest step of the save',
      `${loadedStepMs.toFixed(1)} ms of main-thread work (plan, or one slice's copy and CRC-32)`,
    ],
    [
      '  event-loop delay max',
      `${(histogram.max / 1e6).toFixed(1)} ms (p99 ${(histogram.percentile(99) / 1e6).toFixed(1)} ms, mean ${(histogram.mean / 1e6).toFixed(2)} ms)`,
    ],
    [
      'same load, no save: delay max',
      `${(baseline.max / 1e6).toFixed(1)} ms (p99 ${(baseline.percentile(99) / 1e6).toFixed(1)} ms, mean ${(baseline.mean / 1e6).toFixed(2)} ms)`,
    ],
    ['  commands served meanwhile', String(processed)],
    [
      'BGSAVE, no load: delay max',
      `${(quiet.max / 1e6).toFixed(1)} ms (p99 ${(quiet.percentile(99) / 1e6).toFixed(1)} ms, mean ${(quiet.mean / 1e6).toFixed(2)} ms); slowest PING ${pingMaxMs.toFixed(1)} ms; longest step ${quietStepMs.toFixed(1)} ms`,
    ],
    [
      'load at start',
      `${loadMs.toFixed(0)} ms, ${mib(filterBytes, loadMs)} MiB/s, ${(loadMs / ddReadMs).toFixed(2)}x dd`,
    ],
    ['reloaded filter answers', String(check)],
  ]
  for (const [label, value] of rows) console.log(`${label.padEnd(30)} ${value}`)
}

main().catch((error) => {
  console.error(error)
  rmSync(base, { recursive: true, force: true })
  process.exit(1)
})
