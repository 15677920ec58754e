#!/usr/bin/env node
/**
 * Status page benchmark (issue 19): a live bfs (dist/main.js, its own process) holding 10,000
 * filters; the time to serve GET / and GET /filters at several page sizes and orders (median of
 * 7 requests, after one warm-up), and the time headless Chromium takes to load and render the page
 * (`--dump-dom` wall time, and the page's own performance.now() when its last script runs).
 *
 *   npm run build && node bench/status-page.mjs [filters=10000]
 *   npm run build && node bench/status-page.mjs --screenshot docs/status-page.png [width,height]
 *
 * With --screenshot it instead fills a few realistic filters (one near full, one loaded from an
 * original-library file filled past its capacity) and writes a picture of the page.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Redis } from 'ioredis'
import { bitPositions, createHashPair, hashSeeded } from '../dist/core/hashing.js'
import { seededGeometry } from '../dist/core/sizing.js'

const ROOT = path.join(path.dirname(new URL(import.meta.url).pathname), '..')
const RUNS = 7

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/** Starts dist/main.js; resolves once /healthz answers. */
async function startBfs(dir) {
  const [port, httpPort] = [await freePort(), await freePort()]
  const args = [
    'dist/main.js',
    '--port',
    String(port),
    '--http-port',
    String(httpPort),
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
    '--loglevel',
    'warning',
  ]
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: 'inherit' })
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${httpPort}/healthz`)).ok) break
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  return {
    child,
    port,
    httpPort,
    stop: () => new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM'))),
  }
}

/** Runs chromium and resolves with its wall time and stdout. */
function chromium(args) {
  const profile = mkdtempSync(path.join(tmpdir(), 'bfs-chromium-'))
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const child = spawn(
      'chromium',
      ['--headless', '--disable-gpu', '--no-sandbox', `--user-data-dir=${profile}`, ...args],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    )
    let stdout = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.on('error', reject)
    child.on('exit', () => {
      rmSync(profile, { recursive: true, force: true })
      resolve({ ms: performance.now() - started, stdout })
    })
  })
}

const median = (values) => [...values].sort((a, b) => Number(a) - Number(b))[Math.floor(values.length / 2)]

/** Filters of 50 to 500 capacity, each 0 to 120% full (every 7th NONSCALING, stopping at 100%). */
async function fill(redis, count) {
  let pipeline = redis.pipeline()
  for (let i = 0; i < count; i++) {
    const name = `filter:${String(i).padStart(5, '0')}`
    const capacity = 50 * (1 + (i % 10))
    const nonScaling = i % 7 === 0
    pipeline.call('BF.RESERVE', name, '0.01', String(capacity), ...(nonScaling ? ['NONSCALING'] : []))
    const items = Math.floor((capacity * ((i * 37) % 121)) / 100)
    const batch = []
    for (let j = 0; j < Math.min(items, nonScaling ? capacity : items); j++) batch.push(`${i}:${j}`)
    for (let j = 0; j < batch.length; j += 1000) pipeline.call('BF.MADD', name, ...batch.slice(j, j + 1000))
    if (i % 200 === 199) {
      await pipeline.exec()
      pipeline = redis.pipeline()
    }
  }
  await pipeline.exec()
}

async function timeGet(url) {
  await fetch(url).then((r) => r.arrayBuffer())
  const times = []
  let bytes = 0
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now()
    const body = await fetch(url).then((r) => r.arrayBuffer())
    times.push(performance.now() - started)
    bytes = body.byteLength
  }
  return { ms: median(times), bytes }
}

async function bench(count) {
  const dir = mkdtempSync(path.join(tmpdir(), 'bfs-bench-status-'))
  const bfs = await startBfs(dir)
  const redis = new Redis({ port: bfs.port, host: '127.0.0.1' })
  try {
    const started = performance.now()
    await fill(redis, count)
    console.log(
      `${await redis.dbsize()} filters, ${(await redis.info('memory')).match(/bfs_filter_bytes:(\d+)/)[1]} bytes of bits, filled in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    )
    const base = `http://127.0.0.1:${bfs.httpPort}`
    console.log('| request | bytes | serve ms (median of 7) |\n|---|---:|---:|')
    for (const target of [
      '/',
      '/?limit=1000',
      '/?sort=bytes',
      '/?sort=estimatedErrorRate',
      '/filters',
      '/filters?limit=1000',
      '/filters?sort=bytes&limit=1000',
      '/filters?sort=estimatedErrorRate&limit=1000',
    ]) {
      const { ms, bytes } = await timeGet(base + target)
      console.log(`| GET ${target} | ${bytes} | ${ms.toFixed(1)} |`)
    }
    console.log(
      '\n| page in chromium | --dump-dom wall ms (median of 3) | page performance.now() at its last script, ms |\n|---|---:|---:|',
    )
    for (const target of ['about:blank', '/', '/?limit=1000', '/?sort=estimatedErrorRate']) {
      const walls = []
      const rendered = []
      for (let i = 0; i < 3; i++) {
        const run = await chromium([
          '--virtual-time-budget=10000',
          '--dump-dom',
          target.startsWith('/') ? base + target : target,
        ])
        walls.push(run.ms)
        rendered.push(/data-rendered-ms="(\d+)"/.exec(run.stdout)?.[1] ?? '—')
      }
      console.log(
        `| ${target.startsWith('/') ? `GET ${target}` : `${target} (Chromium's own start)`} | ${median(walls).toFixed(0)} | ${median(rendered)} |`,
      )
    }
  } finally {
    redis.disconnect()
    await bfs.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** An original-library file (docs/FORMAT.md, version 0) holding `items` items: past capacity if asked. */
function originalFile(capacity, errorRate, seed, items) {
  const geometry = seededGeometry(capacity, errorRate)
  const bits = new Uint8Array(geometry.byteCount)
  const pair = createHashPair()
  for (let i = 0; i < items; i++) {
    const item = Buffer.from(`https://example.com/old/${i}`)
    hashSeeded(item, 0, item.length, seed, pair)
    for (const position of bitPositions(pair, geometry.hashCount, geometry.bitCount))
      bits[position >> 3] |= 1 << (position & 7)
  }
  const header = Buffer.alloc(64)
  header.writeUInt32LE(0x01464c42, 0)
  header.writeUInt32LE(seed, 4)
  header.writeUInt32LE(items, 8)
  header.writeUInt32LE(capacity, 12)
  header.writeDoubleLE(errorRate, 16)
  header.writeUInt32LE(geometry.bitCount, 24)
  header.writeUInt32LE(geometry.hashCount, 28)
  header.writeUInt32LE(geometry.byteCount, 60)
  return Buffer.concat([header, bits])
}

async function screenshot(file, width = 1200, height = 760) {
  const dir = mkdtempSync(path.join(tmpdir(), 'bfs-status-shot-'))
  const bfs = await startBfs(dir)
  const redis = new Redis({ port: bfs.port, host: '127.0.0.1' })
  try {
    const add = async (name, count, prefix) => {
      for (let j = 0; j < count; j += 1000) {
        await redis.call(
          'BF.MADD',
          name,
          ...Array.from({ length: Math.min(1000, count - j) }, (_, k) => `${prefix}${j + k}`),
        )
      }
    }
    await redis.call('BF.RESERVE', 'crawler:seen', '0.001', '100000')
    await add('crawler:seen', 180_000, 'https://example.com/page/')
    await redis.call('BF.RESERVE', 'signup:emails', '0.01', '50000', 'NONSCALING')
    await add('signup:emails', 46_500, 'user') // 93% of capacity: near full
    await redis.call('BF.RESERVE', 'spam:domains', '0.0001', '20000')
    await add('spam:domains', 6_000, 'spam')
    await redis.call('BF.ADD', 'sessions', 's1')
    writeFileSync(path.join(dir, 'legacy.blf'), originalFile(20_000, 0.01, 0x5eed, 31_000)) // 155% of capacity
    await redis.call('BF.LOAD', 'legacy:urls', 'legacy.blf')
    await fetch(`http://127.0.0.1:${bfs.httpPort}/`) // a first view, so ops/s covers the last seconds
    for (let i = 0; i < 3000; i++) await redis.call('BF.EXISTS', 'crawler:seen', `q${i}`) // some traffic for ops/s
    await new Promise((resolve) => setTimeout(resolve, 1000))
    await chromium([
      `--screenshot=${path.resolve(file)}`,
      `--window-size=${width},${height}`,
      '--hide-scrollbars',
      `http://127.0.0.1:${bfs.httpPort}/?sort=estimatedErrorRate`,
    ])
    console.log(`wrote ${file} (${readFileSync(file).length} bytes)`)
  } finally {
    redis.disconnect()
    await bfs.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

if (process.argv[2] === '--screenshot')
  await screenshot(process.argv[3] ?? 'docs/status-page.png', ...(process.argv[4]?.split(',').map(Number) ?? []))
else await bench(Number(process.argv[2] ?? 10_000))
