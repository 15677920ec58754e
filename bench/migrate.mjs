#!/usr/bin/env node
/**
 * MIGRATE between two bfs nodes on this machine (docs/MIGRATE.md): the time and the worst
 * event-loop stall, on the source and on the target (each node's own monitorEventLoopDelay,
 * bench/migrate-node.mjs), to move
 *   1. one filter of about sizeMiB (BF.RESERVE with the capacity that gives it; 100,000 items
 *      added), streamed in RESTORE-PART parts, then checked on the target (BF.INFO, items found);
 *   2. 1,000 small filters (BF.RESERVE 0.01 1000, 10 items each), 10 keys per MIGRATE ... KEYS
 *      as redis-cli --cluster reshard sends them.
 *
 *   npm run build && node bench/migrate.mjs [sizeMiB=1024]
 */
import { fork } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Redis from 'ioredis'

const sizeMiB = Number(process.argv[2] ?? 1024)
const here = path.dirname(fileURLToPath(import.meta.url))

function startNode(port) {
  const dir = mkdtempSync(path.join(tmpdir(), 'bfs-migrate-bench-'))
  const child = fork(path.join(here, 'migrate-node.mjs'), [String(port), dir], { stdio: 'inherit' })
  const ask = (message) => new Promise((resolve) => {
    child.once('message', resolve)
    child.send(message)
  })
  const ready = new Promise((resolve) => child.once('message', resolve))
  return { child, dir, ask, ready, port }
}

const ms = (value) => `${value.toFixed(1)} ms`
const [source, target] = [startNode(27611), startNode(27612)]
await Promise.all([source.ready, target.ready])
const a = new Redis(source.port, { lazyConnect: false })
const b = new Redis(target.port)
try {
  // RedisBloom's first layer has error/2: -ln(0.005)/ln²2 bits per item.
  const bitsPerItem = -Math.log(0.005) / (Math.LN2 * Math.LN2)
  const capacity = Math.floor((sizeMiB * 1024 * 1024 * 8) / bitsPerItem)
  await a.call('BF.RESERVE', 'big', '0.01', String(capacity))
  for (let i = 0; i < 100_000; i += 1000) await a.call('BF.MADD', 'big', ...Array.from({ length: 1000 }, (_, k) => `item:${i + k}`))
  const size = Number((await a.call('BF.INFO', 'big', 'SIZE')))
  await Promise.all([source.ask('reset'), target.ask('reset')])
  let started = performance.now()
  const reply = await a.call('MIGRATE', '127.0.0.1', String(target.port), 'big', '0', '600000')
  const bigMs = performance.now() - started
  const [bigSource, bigTarget] = await Promise.all([source.ask('report'), target.ask('report')])
  const found = await b.call('BF.MEXISTS', 'big', 'item:0', 'item:99999', 'item:50000')
  console.log(`1 filter of ${(size / 2 ** 20).toFixed(0)} MiB: ${reply} in ${ms(bigMs)} (${(size / 2 ** 20 / (bigMs / 1000)).toFixed(0)} MiB/s); ` +
    `worst stall source ${ms(bigSource.maxMs)}, target ${ms(bigTarget.maxMs)}; on the target: items found ${found}, exists on the source ${await a.exists('big')}`)
  await b.del('big')

  const pipeline = a.pipeline()
  for (let i = 0; i < 1000; i++) {
    pipeline.call('BF.RESERVE', `small:${i}`, '0.01', '1000')
    pipeline.call('BF.MADD', `small:${i}`, ...Array.from({ length: 10 }, (_, k) => `x${k}`))
  }
  await pipeline.exec()
  await Promise.all([source.ask('reset'), target.ask('reset')])
  started = performance.now()
  for (let i = 0; i < 1000; i += 10) {
    const keys = Array.from({ length: 10 }, (_, k) => `small:${i + k}`)
    const answer = await a.call('MIGRATE', '127.0.0.1', String(target.port), '', '0', '60000', 'KEYS', ...keys)
    if (answer !== 'OK') throw new Error(`MIGRATE answered ${answer}`)
  }
  const smallMs = performance.now() - started
  const [smallSource, smallTarget] = await Promise.all([source.ask('report'), target.ask('report')])
  console.log(`1,000 small filters, 10 keys per MIGRATE: ${ms(smallMs)}; worst stall source ${ms(smallSource.maxMs)}, target ${ms(smallTarget.maxMs)}; ` +
    `target DBSIZE ${await b.dbsize()}, source DBSIZE ${await a.dbsize()}`)
} finally {
  a.disconnect()
  b.disconnect()
  for (const node of [source, target]) {
    node.child.send('stop')
    await new Promise((resolve) => node.child.once('exit', resolve))
    rmSync(node.dir, { recursive: true, force: true })
  }
}
