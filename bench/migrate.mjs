#!/usr/bin/env node
/**
 * MIGRATE between two bfs nodes on this machine (docs/MIGRATE.md): the time and the worst
 * event-loop stall, on the source and on the target (each node's own monitorEventLoopDelay,
 * bench/migrate-node.mjs), to move
 *   1. one filter of about sizeMiB (BF.RESERVE with the capacity that gives it; 100,000 items
 *      added), streamed in BFS.RESTORE-PART parts, then checked on the target (BF.INFO, items found);
 *      (and what a DEL of such a filter costs alone: a full GC frees its memory);
 *   2. 1,000 small filters (BF.RESERVE 0.01 1000, 10 items each), 10 keys per MIGRATE ... KEYS
 *      as redis-cli --cluster reshard sends them.
 *
 *   npm run build && node bench/migrate.mjs [sizeMiB=1024]
 */
import Redis from 'ioredis'
import { bigFilter, idleFloor, ms, smallFilters, startNode, stopNodes } from './migrate-nodes.mjs'

const sizeMiB = Number(process.argv[2] ?? 1024)
const [source, target] = [startNode(27611), startNode(27612)]
await Promise.all([source.ready, target.ready])
const a = new Redis(source.port, { lazyConnect: false })
const b = new Redis(target.port)
try {
  const size = await bigFilter(a, 'big', sizeMiB)
  await Promise.all([source.ask('reset'), target.ask('reset')])
  let started = performance.now()
  const reply = await a.call('MIGRATE', '127.0.0.1', String(target.port), 'big', '0', '600000')
  const bigMs = performance.now() - started
  const [bigSource, bigTarget] = await Promise.all([source.ask('report'), target.ask('report')])
  const found = await b.call('BF.MEXISTS', 'big', 'item:0', 'item:99999', 'item:50000')
  console.log(
    `1 filter of ${(size / 2 ** 20).toFixed(0)} MiB: ${reply} in ${ms(bigMs)} (${(size / 2 ** 20 / (bigMs / 1000)).toFixed(0)} MiB/s); ` +
      `worst stall source ${ms(bigSource.maxMs)}, target ${ms(bigTarget.maxMs)}; on the target: items found ${found}, exists on the source ${await a.exists('big')}`,
  )
  console.log(`  ${await idleFloor([source, target], bigMs)}`)
  // What deleting that filter costs on its own (the source pays it at the end of MIGRATE): the full
  // collection that returns its memory to the system (store/memory-reclaim.ts), 100 ms later.
  await target.ask('reset')
  await b.del('big')
  await new Promise((resolve) => setTimeout(resolve, 2000))
  console.log(`  DEL of it on the target alone, then 2 s: worst stall ${ms((await target.ask('report')).maxMs)}`)

  await smallFilters(
    a,
    Array.from({ length: 1000 }, (_, i) => `small:${i}`),
  )
  await Promise.all([source.ask('reset'), target.ask('reset')])
  started = performance.now()
  for (let i = 0; i < 1000; i += 10) {
    const keys = Array.from({ length: 10 }, (_, k) => `small:${i + k}`)
    const answer = await a.call('MIGRATE', '127.0.0.1', String(target.port), '', '0', '60000', 'KEYS', ...keys)
    if (answer !== 'OK') throw new Error(`MIGRATE answered ${answer}`)
  }
  const smallMs = performance.now() - started
  const [smallSource, smallTarget] = await Promise.all([source.ask('report'), target.ask('report')])
  console.log(
    `1,000 small filters, 10 keys per MIGRATE: ${ms(smallMs)}; worst stall source ${ms(smallSource.maxMs)}, target ${ms(smallTarget.maxMs)}; ` +
      `target DBSIZE ${await b.dbsize()}, source DBSIZE ${await a.dbsize()}`,
  )
  console.log(`  ${await idleFloor([source, target], smallMs)}`)
} finally {
  a.disconnect()
  b.disconnect()
  await stopNodes([source, target])
}
